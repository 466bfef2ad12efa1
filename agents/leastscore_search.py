"""``leastscore:search``: determinized rollouts (PIMC) over sampled beliefs, keeping
``leastscore:dp``'s move unless the search beats it by a margin.

For each decision (a batch of rows, all at once):

1. ``leastscore:dp`` proposes its move and values the other legal moves (``dp_plan``); its
   move, declaring (L7, whenever legal) and the next best by dp's values make up
   ``candidates`` moves;
2. :class:`deckgym.agents.leastscore_belief.LeastScoreBelief` samples ``samples`` worlds per row
   consistent with the row's information state (the ``belief`` model);
3. declaring is valued in each world by its exact L8 outcome (the round ends at once); a
   move searched by rollouts is played in every world, then every seat plays the ``rollout``
   policy (``dp`` or ``counting``, deterministic) to the round's end. Common random numbers:
   a world's hidden cards, deck order and random stream (for an L6 reshuffle) are the same
   for every candidate, so two candidates differ only by the move. A result is the seat's
   share of the round's win less ``lam`` × its round points (dp's own utility);
4. ``playon="dp"`` (default): the worlds' mean value of declaring is weighed against dp's
   value of playing on, and declaring wins by more than ``margin``; otherwise dp's best other
   move, or with ``moves="all"`` the best of the other candidates by rollouts if it beats
   dp's by ``margin``. ``playon="rollout"``: every candidate by rollouts, the best played if
   it beats dp's move by more than ``margin``. ``moves="declare"`` (default) searches only the
   declaration (where the hidden cards matter most); ``"all"`` every candidate.

Rollouts of every row, world and candidate run as one batch on a plain core (in chunks of
``max_rows``). Given default observations (a loop that does not honour
``observation = "infostate"``), it plays dp's move. Measured in ``docs/SEARCH.md``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from deckgym.agents.leastscore_belief import BELIEF_MODELS, LeastScoreBelief, strip_history
from deckgym.agents.leastscore_plan import counting_actions_obs, dp_actions_obs, dp_plan
from deckgym.agents.params import Choice, Range
from deckgym.agents.pimc import PIMCSearchAgent, keep_unless_beaten
from leastscore_env.core import LeastScoreCore
from leastscore_env.state import DECLARE, NUM_ACTIONS
from leastscore_env.planning.dp import DEFAULT_LAM
from leastscore_env.planning.plan import rules_kwargs, rules_sequences

__all__ = ["LeastScoreSearchAgent", "rollout_values", "ROLLOUTS"]


def _dp(core: Any, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    return dp_actions_obs(core, obs, masks, **rules_kwargs(core.rules))


def _counting(core: Any, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    r = core.rules
    return counting_actions_obs(core, obs, masks, tie_wins=bool(r.tie_wins), sequence_lengths=rules_sequences(r))


#: rollout policies: (core, default observations, masks) -> actions
ROLLOUTS = {"dp": _dp, "counting": _counting}


def rollout_values(core: Any, state: Any, first: np.ndarray, policy: str = "dp", lam: float = DEFAULT_LAM) -> np.ndarray:
    """``(R,)`` seat 0's round result (share of the win less ``lam`` × its round points) when
    seat to move plays ``first`` in ``state`` (a plain round-episode core's batch, stepped in
    place) and then every seat plays ``policy`` to the round's end."""
    decide = ROLLOUTS[policy]
    R = state.batch_size
    value = np.zeros(R)
    live = np.arange(R)
    cur = state
    actions = np.asarray(first, dtype=np.int64)
    while len(live):
        res = core.step(cur, actions, check=False)
        done = res.round_over
        if done.any():
            won = res.winners[done].astype(np.float64)
            value[live[done]] = won[:, 0] / np.maximum(won.sum(axis=1), 1.0) - lam * res.round_points[done, 0]
            keep = np.flatnonzero(~done)
            cur, live = cur.take(keep), live[keep]
            if not len(live):
                break
        actions = decide(core, core.observe(cur, core.current_player(cur)), core.legal_action_mask(cur))
    return value


class LeastScoreSearchAgent(PIMCSearchAgent):
    """PIMC search over sampled beliefs for Least Score (module docstring)."""

    spec = "leastscore:search"
    plain_core = LeastScoreCore
    params: dict[str, Any] = {"samples": 128, "candidates": 4, "belief": "prior", "rollout": "dp", "margin": 0.0,
                              "lam": DEFAULT_LAM, "moves": "declare", "playon": "dp", "oversample": 4,
                              "max_rows": 65536}
    param_ranges = {
        "samples": Range(1, 1024, integer=True, why="worlds per decision"),
        "candidates": Range(2, NUM_ACTIONS, integer=True, why="moves searched per decision, dp's first"),
        "belief": Choice(BELIEF_MODELS),
        "oversample": Range(1, 64, integer=True, why="particles: prior worlds drawn per world kept"),
        "rollout": Choice(tuple(ROLLOUTS)),
        "margin": Range(-1, 10, why="value gain over dp's move needed to deviate"),
        "lam": Range(0, 10, why="weight of the round points in a rollout's value"),
        "moves": Choice(("all", "declare")),
        "playon": Choice(("rollout", "dp")),
        "max_rows": Range(64, 2**22, integer=True, why="rollout rows per batch"),
    }

    def belief_key(self) -> Any:
        return self.params["belief"], int(self.params["oversample"])

    def make_belief(self) -> LeastScoreBelief:
        belief, oversample = self.belief_key()
        return LeastScoreBelief(self.icore, belief, oversample=oversample)

    def propose(self, obs: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, Any]:
        base_obs = np.ascontiguousarray(obs[:, : self.pcore.obs_size])
        return _dp(self.pcore, base_obs, masks), base_obs

    def to_search(self, base_obs: np.ndarray, masks: np.ndarray, base: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        cand, play_on = self.candidates(base_obs, masks, base)
        return cand, cand[:, 1] >= 0, play_on

    def worlds(self, obs: np.ndarray) -> Any:
        return strip_history(self._belief().sample(obs, int(self.params["samples"]), self.rng))

    def decide(self, worlds: Any, cand: np.ndarray, play_on: np.ndarray | None) -> tuple[np.ndarray, None]:
        return self.search_worlds(worlds, cand, play_on), None

    def candidates(self, base_obs: np.ndarray, masks: np.ndarray, base: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(B, m)`` moves to search: dp's first, declaring second where legal, then dp's next
        best (-1: none); and ``(B,)`` dp's value of playing on (its best move but declaring)."""
        m = int(self.params["candidates"])
        B = len(base)
        view = self.pcore.obs_view(base_obs)
        plan = dp_plan(view, masks, **rules_kwargs(self.core.rules))
        values = plan["values"]
        score = np.where(masks, -values, np.inf)
        score[:, DECLARE] = np.where(masks[:, DECLARE], -1e300, np.inf)  # where the hidden cards matter most (L8)
        score[np.arange(B), base] = -np.inf
        order = np.argsort(score, axis=1, kind="stable")[:, :m]
        cand = np.where(np.take_along_axis(score, order, axis=1) < np.inf, order, -1)
        if self.params["moves"] == "declare":  # only whether to declare: dp's move against declaring (or its veto)
            cand[:, 2:] = -1
            cand[~masks[:, DECLARE], 1] = -1
        return cand, plan["play_on"]

    def search_worlds(self, worlds: Any, cand: np.ndarray, play_on: np.ndarray | None = None) -> np.ndarray:
        """The move of each row given ``k`` worlds per row (``B·k`` plain states in the
        mover's frame, row ``b·k + j``) and its candidates ``cand (B, m)`` (dp's first).
        With ``playon="dp"`` and dp's ``play_on`` values, declaring is weighed against them."""
        p = self.params
        margin = float(p["margin"])
        if p["playon"] != "dp" or play_on is None:
            return keep_unless_beaten(self.candidate_values(worlds, cand), cand, margin)
        # declaring: each world's exact L8 result, against dp's value of playing on
        k = worlds.batch_size // len(cand)
        is_decl = cand == DECLARE
        declare = np.full(len(cand), -np.inf)
        rows = np.flatnonzero(is_decl.any(axis=1))
        if len(rows):
            sub = worlds.take((rows[:, None] * k + np.arange(k)[None, :]).reshape(-1))
            v = rollout_values(self.pcore, sub, np.full(len(rows) * k, DECLARE), p["rollout"], float(p["lam"]))
            declare[rows] = v.reshape(len(rows), k).mean(axis=1)
        go = declare > play_on + margin
        # playing on: dp's best other move or, with moves="all", the best of the others by rollouts
        play = np.where(is_decl, -1, cand)
        play = np.take_along_axis(play, np.argsort(play < 0, axis=1, kind="stable"), axis=1)
        out = play[:, 0].copy()
        rows = np.flatnonzero(~go & (play[:, 1] >= 0)) if p["moves"] == "all" else np.zeros(0, np.intp)
        if len(rows):
            sub = worlds.take((rows[:, None] * k + np.arange(k)[None, :]).reshape(-1))
            out[rows] = keep_unless_beaten(self.candidate_values(sub, play[rows]), play[rows], margin)
        return np.where(go, DECLARE, out).astype(np.int64)

    def rollout(self, states: Any, acts: np.ndarray) -> np.ndarray:
        """Each candidate played, then every seat plays ``rollout`` to the round's end."""
        return rollout_values(self.pcore, states, acts, self.params["rollout"], float(self.params["lam"]))
