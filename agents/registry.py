"""Agent specs → agents: ``random``, ``racko:bucket``, ``leastscore:counting``, ``ppo:PATH``."""

from __future__ import annotations

import importlib
from typing import Any

from agents.base import Agent

# spec → "module:Class"; game-specific specs are prefixed with the game's name.
AGENTS: dict[str, str] = {
    "random": "agents.random_agent:RandomAgent",
    "racko:bucket": "agents.racko_heuristics:BucketAgent",
    "racko:ranges": "agents.racko_heuristics:RangesAgent",
    "racko:sequence": "agents.racko_heuristics:SequenceAgent",
    "racko:lookahead": "agents.racko_heuristics:LookaheadAgent",
    "leastscore:greedy": "agents.leastscore_heuristics:GreedyAgent",
    "leastscore:counting": "agents.leastscore_heuristics:CountingAgent",
}


def register_agent(spec: str, target: str) -> None:
    AGENTS[spec] = target


def agent_specs(game: str | None = None) -> list[str]:
    """The valid specs (for ``game`` only, if given), plus the ``ppo:PATH`` form."""
    names = [s for s in AGENTS if game is None or ":" not in s or s.split(":", 1)[0] == game]
    return names + ["ppo:PATH"]


def make_agent(spec: str, core: Any, seed: int = 0, game: str | None = None) -> Agent:
    """Build the agent named by ``spec`` for ``core``; a clear error listing valid specs otherwise."""
    if spec.startswith("ppo:"):
        from agents.ppo import PPOAgent

        return PPOAgent(core, path=spec[4:], seed=seed, game=game)
    if spec not in AGENTS or (game is not None and ":" in spec and spec.split(":", 1)[0] != game):
        raise ValueError(f"unknown agent {spec!r} for game {game!r}; valid agents: {', '.join(agent_specs(game))}")
    module, cls = AGENTS[spec].split(":")
    agent = getattr(importlib.import_module(module), cls)(core, seed=seed)
    agent.spec = spec
    return agent
