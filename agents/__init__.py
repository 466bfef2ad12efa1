"""Agents for deckgym games: one batched interface, a random agent and strong heuristics."""

from deckgym.agents.base import Agent
from deckgym.agents.random_agent import RandomAgent
from deckgym.agents.registry import AGENTS, agent_specs, make_agent, register_agent

__all__ = ["AGENTS", "Agent", "RandomAgent", "agent_specs", "make_agent", "register_agent"]
