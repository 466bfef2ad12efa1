"""The one PIMC search skeleton both search agents (``racko:search``, ``leastscore:search``)
are built on (:class:`PIMCSearchAgent`, with per-game hooks), the rows of a search, one per
(observation, candidate move, world), and the rule that keeps the planner's move unless a
candidate beats it by a margin.

Worlds come ``k`` per observation (row ``b·k + j`` is world ``j`` of observation ``b``);
candidates ``cand (B, m)`` list the planner's move first, ``-1`` where a row has fewer.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from deckgym.agents.base import Agent
from deckgym.playout import infostate_core

__all__ = ["PIMCSearchAgent", "candidate_rows", "candidate_means", "keep_unless_beaten"]


def candidate_rows(worlds: Any, cand: np.ndarray) -> tuple[Any, np.ndarray]:
    """``B·m·k`` copies of the worlds, row ``(b, c, j)`` world ``b·k + j`` to be played with
    candidate ``c``, and those moves (a padded candidate replays the planner's): every
    candidate meets the same worlds, the common random numbers of the search."""
    B, m = cand.shape
    k = worlds.batch_size // B
    b_idx = np.repeat(np.arange(B), m * k)
    c_idx = np.tile(np.repeat(np.arange(m), k), B)
    j_idx = np.tile(np.arange(k), B * m)
    acts = cand[b_idx, c_idx]
    return worlds.take(b_idx * k + j_idx), np.where(acts >= 0, acts, cand[b_idx, 0]).astype(np.int64)


def candidate_means(values: np.ndarray, cand: np.ndarray) -> np.ndarray:
    """``(B, m)`` each candidate's mean value over its worlds (``values`` in the order of
    :func:`candidate_rows`); ``-inf`` for padded candidates."""
    B, m = cand.shape
    return np.where(cand >= 0, values.reshape(B, m, -1).mean(axis=2), -np.inf)


def keep_unless_beaten(mean: np.ndarray, cand: np.ndarray, margin: float) -> np.ndarray:
    """Each row's best candidate if its mean beats the planner's (the first) by more than
    ``margin``, else the planner's move."""
    best = np.argmax(mean, axis=1)
    r = np.arange(len(cand))
    return np.where(mean[r, best] > mean[:, 0] + margin, cand[r, best], cand[:, 0]).astype(np.int64)


class PIMCSearchAgent(Agent):
    """A search over sampled beliefs: the planner proposes a move, the rows worth searching get
    candidates, worlds are sampled ``max_rows`` rollout rows at a time, and each chunk's worlds
    decide its moves. Given default observations (a loop that does not honour ``observation =
    "infostate"``), it plays the planner's move.

    A game's agent sets ``plain_core`` (the core class its rollouts run on, without history),
    ``params`` (with ``samples`` and ``max_rows``) and fills in the hooks: :meth:`propose`,
    :meth:`to_search`, :meth:`make_belief` / :meth:`belief_key`, :meth:`worlds`,
    :meth:`worlds_per_row`, :meth:`rollout` and :meth:`decide`.
    """

    observation = "infostate"
    plain_core: type
    params: dict[str, Any] = {}

    def __init__(self, core: Any, seed: int = 0) -> None:
        super().__init__(core, seed)
        self.params = dict(self.params)
        self.icore = infostate_core(core)
        self.pcore = self.plain_core(core.rules, episode="round", reward="win")  # rollouts: no history
        self._beliefs: dict[Any, Any] = {}

    # -- hooks -------------------------------------------------------------------------------------
    def propose(self, obs: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, Any]:
        """``(B,)`` the planner's moves, and what :meth:`to_search` needs of the rows."""
        raise NotImplementedError

    def to_search(self, ctx: Any, masks: np.ndarray, base: np.ndarray) -> tuple[np.ndarray, np.ndarray, Any]:
        """``(B, m)`` candidates (the planner's first, -1: none), ``(B,)`` bool rows to search, and a
        ``(B, ...)`` array handed to :meth:`decide` row by row (or None)."""
        raise NotImplementedError

    def belief_key(self) -> Any:
        """The parameters the belief model is built from (one model per key is kept)."""
        raise NotImplementedError

    def make_belief(self) -> Any:
        raise NotImplementedError

    def worlds(self, obs: np.ndarray) -> Any:
        """``B·k`` plain states sampled for the rows ``obs`` (row ``b·k + j``)."""
        raise NotImplementedError

    def worlds_per_row(self) -> int:
        return int(self.params["samples"])

    def rollout(self, states: Any, acts: np.ndarray) -> np.ndarray:
        """``(R,)`` the value of playing ``acts`` in ``states`` (rows of :func:`candidate_rows`)."""
        raise NotImplementedError

    def decide(self, worlds: Any, cand: np.ndarray, extra: Any) -> tuple[np.ndarray, np.ndarray | None]:
        """The moves of the rows given their worlds, and the candidates' mean values (or None)."""
        raise NotImplementedError

    # -- the skeleton ------------------------------------------------------------------------------
    def _belief(self) -> Any:
        key = self.belief_key()
        if key not in self._beliefs:
            self._beliefs[key] = self.make_belief()
        return self._beliefs[key]

    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        return self.act_values(observations, action_masks)[0]

    def act_values(self, observations: np.ndarray, action_masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``act``'s moves, and ``(B, num_actions)`` each searched candidate's mean rollout value
        where the game's :meth:`decide` gives them (NaN for moves and rows not searched)."""
        obs = np.atleast_2d(np.asarray(observations, dtype=np.float32))
        masks = np.atleast_2d(np.asarray(action_masks, dtype=bool))
        values = np.full((obs.shape[0], self.core.num_actions), np.nan)
        if obs.shape[0] == 0:
            return np.zeros(0, dtype=np.int64), values
        base, ctx = self.propose(obs, masks)
        if obs.shape[1] != self.icore.obs_size:  # default observations: no history to sample from
            return base, values
        cand, search, extra = self.to_search(ctx, masks, base)
        out = base.copy()
        rows = np.flatnonzero(search)
        step = max(1, int(self.params["max_rows"]) // (cand.shape[1] * self.worlds_per_row()))
        for lo in range(0, len(rows), step):
            r = rows[lo : lo + step]
            out[r], mean = self.decide(self.worlds(obs[r]), cand[r], None if extra is None else extra[r])
            if mean is not None:
                ok = cand[r] >= 0
                values[np.repeat(r, ok.sum(axis=1)), cand[r][ok]] = mean[ok]
        return out, values

    def candidate_values(self, worlds: Any, cand: np.ndarray) -> np.ndarray:
        """``(B, m)`` each candidate's mean rollout value over the row's worlds (-inf: none)."""
        states, acts = candidate_rows(worlds, cand)
        return candidate_means(self.rollout(states, acts), cand)
