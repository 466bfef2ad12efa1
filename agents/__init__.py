"""Agents for deckgym games: one batched interface (:mod:`deckgym.agents.base`), a random agent
(:mod:`deckgym.agents.random_agent`), the games' heuristics and search agents, learned models
(:mod:`deckgym.agents.ppo`, :mod:`deckgym.agents.rllib_agent`), and the spec registry that
builds any of them by name (:mod:`deckgym.agents.registry`). Import each from its module."""
