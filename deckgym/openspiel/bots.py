"""Bots both ways: any deckgym agent spec as a ``pyspiel.Bot`` (:func:`bot`), and OpenSpiel's
ISMCTS on deckgym's beliefs (:func:`ismcts_bot`, used by the ``openspiel:`` arena agents).

An arena agent sees only its observation, so :func:`state_from_core` turns a core's game (a
world a belief sampled from that observation) back into an OpenSpiel state: the search's root.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyspiel

from deckgym.openspiel.common import GameConfig, core_for, openspiel_form

__all__ = ["bot", "DeckgymBot", "ismcts_bot", "state_from_core", "WorldResampler", "AgentRolloutEvaluator"]


class DeckgymBot(pyspiel.Bot):
    """A deckgym agent (``racko:lookahead``, ``ppo:PATH``, ``leastscore:dp`` ...) as a pyspiel bot:
    it acts on the state's observation tensor (its information state for agents that want one)."""

    def __init__(self, game: Any, spec: str, player: int, seed: int = 0) -> None:
        pyspiel.Bot.__init__(self)
        from deckgym.agents.registry import acts_on_infostates, make_agent

        cfg = game.config
        name = cfg.game
        self.infostate = acts_on_infostates(spec)
        self.agent = make_agent(spec, core_for(cfg, "infostate" if self.infostate else "default"), seed=seed, game=name)
        self.player, self.num_actions = player, game.num_distinct_actions()

    def player_id(self) -> int:
        return self.player

    def restart_at(self, state: Any) -> None:
        pass

    def inform_action(self, state: Any, player_id: int, action: int) -> None:
        pass

    def provides_policy(self) -> bool:
        return False

    def step(self, state: Any) -> int:
        p = state.current_player()
        obs = state.information_state_tensor(p) if self.infostate else state.observation_tensor(p)
        mask = np.zeros(self.num_actions, bool)
        mask[state.legal_actions()] = True
        return int(self.agent.act(np.asarray(obs, np.float32)[None], mask[None])[0])


def bot(game: Any, spec: str, player: int, seed: int = 0) -> DeckgymBot:
    """The deckgym agent ``spec`` playing seat ``player`` of ``game`` (a deckgym game in OpenSpiel,
    such as ``python_racko``) as a ``pyspiel.Bot``, e.g. for ``evaluate_bots``."""
    if not isinstance(getattr(game, "config", None), GameConfig):
        raise ValueError(f"bot() needs a deckgym game (a python_<game> of deckgym.openspiel), got {game}")
    return DeckgymBot(game, spec, player, seed)


def state_from_core(game: Any, core: Any, st: Any, b: int = 0) -> Any:
    """Game ``b`` of a core's state (with its public history: an ``obs="infostate"`` core) as an
    OpenSpiel state of ``game`` whose tensors equal the core's observations. Its ``history()``
    is empty: it resumes a game, it does not replay one."""
    s = game.new_initial_state()
    openspiel_form(game.config.game).resume(s, core, st, b)  # the game's own OpenSpiel module knows its state
    s.events = ["resumed"]
    return s


class WorldResampler:
    """ISMCTS's resampler (``ISMCTSBot.set_resampler``): worlds of the root's information state,
    drawn by a deckgym belief ``batch`` at a time and given out one per simulation."""

    def __init__(self, belief: str, seed: int, batch: int = 64) -> None:
        self.belief, self.rng, self.batch = belief, np.random.default_rng(seed), batch
        self.key, self.worlds = None, []

    def __call__(self, state: Any, player: int) -> Any:
        key = (player, state.information_state_string(player))
        if key != self.key or not self.worlds:
            self.key = key
            self.worlds = self._sample(state, player)
        return self.worlds.pop()

    def _sample(self, state: Any, player: int) -> list:
        from deckgym.openspiel.common import belief_for

        sampler = belief_for(state.cfg, self.belief)
        obs = np.asarray(state.information_state_tensor(player), np.float32)[None]
        worlds = sampler.sample(obs, self.batch, self.rng)
        out = []
        for k in range(self.batch):
            new = state.clone()
            new.set_world(player, worlds.take(np.array([k])))
            out.append(new)
        return out


class AgentRolloutEvaluator:
    """An MCTS evaluator (OpenSpiel's ``Evaluator`` interface) whose rollouts are played by a
    deckgym agent in every seat instead of at random; uniform priors."""

    def __init__(self, game: Any, spec: str, seed: int = 0) -> None:
        self.bots = [bot(game, spec, p, seed) for p in range(game.num_players())]
        self.rs = np.random.RandomState(seed % 2**32)

    def evaluate(self, state: Any) -> np.ndarray:
        s = state.clone()
        while not s.is_terminal():
            if s.is_chance_node():
                outcomes = s.chance_outcomes()
                s.apply_action(outcomes[self.rs.randint(len(outcomes))][0])  # (uniform, as every chance node here)
            else:
                s.apply_action(self.bots[s.current_player()].step(s))
        return np.array(s.returns())

    def prior(self, state: Any) -> list[tuple[int, float]]:
        legal = state.legal_actions()
        return [(a, 1.0 / len(legal)) for a in legal]


def ismcts_bot(game: Any, simulations: int = 100, uct_c: float = 2.0, rollouts: int = 1, max_length: int = 0,
               belief: str = "uniform", seed: int = 0, final_policy: str = "max_visit_count",
               rollout: str = "random") -> Any:
    """OpenSpiel's ISMCTS (``open_spiel.python.algorithms.ismcts``), resampling its root through
    deckgym's belief ``belief`` (``"uniform"``, ``"history"``, ...); its leaves are OpenSpiel's
    random rollouts, or (``rollout``: an agent spec) rollouts played by that deckgym agent."""
    from open_spiel.python.algorithms import ismcts, mcts

    rs = np.random.RandomState(seed % 2**32)
    if rollout == "random":
        evaluator = mcts.RandomRolloutEvaluator(n_rollouts=rollouts, random_state=rs, max_length=max_length or None)
    else:
        evaluator = AgentRolloutEvaluator(game, rollout, seed)
    final = {"max_visit_count": ismcts.ISMCTSFinalPolicyType.MAX_VISIT_COUNT,
             "max_value": ismcts.ISMCTSFinalPolicyType.MAX_VALUE,
             "visits": ismcts.ISMCTSFinalPolicyType.NORMALIZED_VISITED_COUNT}[final_policy]
    class Bot(ismcts.ISMCTSBot):  # evaluate_bots also calls these two (the Python bot lacks them)
        def restart_at(self, state: Any) -> None:
            self.reset()

        def inform_action(self, state: Any, player_id: int, action: int) -> None:
            pass

    b = Bot(game, evaluator, uct_c, simulations, random_state=rs, final_policy_type=final)
    b.set_resampler(WorldResampler(belief, seed, batch=min(simulations, 256)))
    return b
