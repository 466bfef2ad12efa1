"""Agent specs → agents: ``random``, ``racko:bucket``, ``leastscore:counting``, ``ppo:PATH``, ``rllib:PATH``."""

from __future__ import annotations

import importlib
import os
from typing import Any

from deckgym.agents.base import Agent
from deckgym.agents.params import check_params

# spec → "module:Class"; game-specific specs are prefixed with the game's name.
AGENTS: dict[str, str] = {
    "random": "deckgym.agents.random_agent:RandomAgent",
    "racko:bucket": "deckgym.agents.racko_heuristics:BucketAgent",
    "racko:ranges": "deckgym.agents.racko_heuristics:RangesAgent",
    "racko:sequence": "deckgym.agents.racko_heuristics:SequenceAgent",
    "racko:lookahead": "deckgym.agents.racko_heuristics:LookaheadAgent",
    "racko:search": "deckgym.agents.racko_search:RackoSearchAgent",
    "leastscore:greedy": "deckgym.agents.leastscore_heuristics:GreedyAgent",
    "leastscore:counting": "deckgym.agents.leastscore_heuristics:CountingAgent",
    "leastscore:expect": "deckgym.agents.leastscore_heuristics:ExpectAgent",
    "leastscore:dp": "deckgym.agents.leastscore_heuristics:DPAgent",
    "leastscore:search": "deckgym.agents.leastscore_search:LeastScoreSearchAgent",
    # OpenSpiel's bots, for either game (the openspiel extra)
    "openspiel:ismcts": "deckgym.agents.openspiel_agent:ISMCTSAgent",
    "openspiel:random": "deckgym.agents.openspiel_agent:RandomBotAgent",
}
#: spec prefixes that are not a game: their agents play every game
ANY_GAME = ("openspiel",)


def register_agent(spec: str, target: str) -> None:
    AGENTS[spec] = target


def agent_specs(game: str | None = None) -> list[str]:
    """The valid specs (for ``game`` only, if given), plus the ``ppo:PATH`` form."""
    names = [s for s in AGENTS if game is None or ":" not in s or s.split(":", 1)[0] in (game,) + ANY_GAME]
    return names + ["ppo:PATH", "rllib:PATH"]


def acts_on_infostates(spec: str) -> bool:
    """Whether the agent ``spec`` names acts on information states (its class's ``observation``),
    known before any core is built: a vector env must then record the public history."""
    from deckgym.playout import wants_infostate

    name = spec.partition("?")[0]
    # ppo:/rllib: models and unknown specs (make_agent names the error) read the default
    return name in AGENTS and wants_infostate(_agent_class(name))


def _agent_class(name: str) -> type:
    """The class a registered agent name stands for (``AGENTS``), imported on first use."""
    module, cls = AGENTS[name].split(":")
    return getattr(importlib.import_module(module), cls)


def _tuning(agent: Agent) -> dict[str, Any]:
    """The parameters a spec may override: a heuristic's ``params`` dict, or its numeric class attributes."""
    params = getattr(agent, "params", None)
    if isinstance(params, dict):
        return dict(params)
    return {k: getattr(agent, k) for k in dir(type(agent))
            if not k.startswith("_") and isinstance(getattr(agent, k), (int, float)) and not isinstance(getattr(agent, k), bool)}


def _apply_overrides(agent: Agent, spec: str, text: str) -> None:
    """``name?key=value&key=value``: set tuning parameters of a heuristic (experiments, sweeps)."""
    tuning = _tuning(agent)
    if not tuning:
        raise ValueError(f"agent {spec!r}: {type(agent).__name__} has no parameters to set")
    for item in text.split("&"):
        key, eq, value = item.partition("=")
        if not eq:
            raise ValueError(f"agent {spec!r}: parameters are key=value pairs joined by '&', got {item!r}")
        if key not in tuning:
            raise ValueError(f"agent {spec!r}: unknown parameter {key!r}; valid: {', '.join(sorted(tuning))}")
        old = tuning[key]
        try:
            tuning[key] = type(old)(value) if not isinstance(old, str) else value
        except ValueError:
            raise ValueError(f"agent {spec!r}: {key}={value!r} is not a valid {type(old).__name__} value") from None
    check_params(spec, getattr(agent, "param_ranges", {}), tuning)
    if isinstance(getattr(agent, "params", None), dict):
        agent.params = tuning
    else:
        for key, value in tuning.items():
            setattr(agent, key, value)


def _ppo_options(spec: str, text: str) -> dict[str, Any]:
    """``deterministic=true|false`` after ``ppo:PATH?``; anything else is refused by name."""
    out: dict[str, Any] = {}
    for item in filter(None, text.split("&")):
        key, eq, value = item.partition("=")
        if key != "deterministic" or not eq:
            raise ValueError(f"agent {spec!r}: ppo takes only deterministic=true|false, got {item!r}")
        low = value.strip().lower()
        if low not in ("true", "false", "1", "0"):
            raise ValueError(f"agent {spec!r}: deterministic must be true or false, got {value!r}")
        out["deterministic"] = low in ("true", "1")
    return out


def make_agent(spec: str, core: Any, seed: int = 0, game: str | None = None) -> Agent:
    """Build the agent named by ``spec`` for ``core``; a clear error listing valid specs otherwise.

    A heuristic's tuning parameters can follow its name, ``racko:lookahead?outlook_samples=8``
    or ``leastscore:counting?min_success=0.5&gamma=0.9`` (each agent's ``param_ranges`` gives
    them and their valid ranges; a value outside is a ``ValueError`` naming both). A PPO
    model takes ``ppo:PATH?deterministic=false`` (sample its actions instead of the argmax).
    """
    for prefix, example in (("ppo:", "ppo:models/racko_2p.zip"), ("rllib:", "rllib:models/racko_2p_rllib")):
        if spec.startswith(prefix) and not spec[len(prefix):].partition("?")[0].strip():
            raise ValueError(f"agent {spec!r}: no model path after {prefix!r} (write {prefix}PATH, e.g. {example})")
    if spec.startswith("ppo:"):
        from deckgym.agents.ppo import PPOAgent

        path, options = spec[4:], ""
        if "?" in path and not os.path.exists(path):  # ppo:PATH?deterministic=false
            path, _, options = path.rpartition("?")
        kwargs = _ppo_options(spec, options)
        agent = PPOAgent(core, path=path, seed=seed, game=game, **kwargs)
        agent.spec = spec
        return agent
    if spec.startswith("rllib:"):
        from deckgym.agents.rllib_agent import RLlibAgent

        return RLlibAgent(core, path=spec[6:], seed=seed, game=game)
    name, _, overrides = spec.partition("?")
    if name not in AGENTS or (game is not None and ":" in name and name.split(":", 1)[0] not in (game,) + ANY_GAME):
        raise ValueError(f"unknown agent {spec!r} for game {game!r}; valid agents: {', '.join(agent_specs(game))}")
    agent = _agent_class(name)(core, seed=seed)
    if overrides:
        _apply_overrides(agent, spec, overrides)
    elif getattr(agent, "param_ranges", None):
        check_params(spec, agent.param_ranges, _tuning(agent))
    agent.spec = spec
    return agent
