"""``racko:search``: determinized rollouts (PIMC) over sampled beliefs, keeping the planner's
move unless the search beats it by a margin.

For each decision (a batch of rows, all at once):

1. the planner (``racko:lookahead``) proposes its move, and ranks the other legal moves by
   its cost estimate; the move and the ``candidates - 1`` next best are searched (both
   piles in a choose phase). A move that goes out is played without search;
2. :class:`deckgym.agents.racko_belief.RackoBelief` samples ``samples`` worlds per row consistent with the
   row's information state (the ``belief`` model: ``history`` by default, weighed by every
   logged opponent decision under the ``opponent`` model, ``sweeps`` Metropolis–Hastings moves
   and ``eps``; or ``particles``, ``prior``, ``sorted``, ``learned``, ``uniform``;
   ``oversample`` worlds are drawn per world kept, ``order_weight`` tunes the particles);
   each world is rolled out with ``piles`` orders of its draw pile (hidden from every seat,
   so a reshuffle is as likely as the world), which buys worlds without belief samples;
3. in every world each candidate is played, then every seat plays the ``rollout`` policy
   (``sequence``, ``lookahead`` or ``lookahead4``, deterministic) to the round's end, or
   ``horizon`` turns (then the planner's estimate decides). Common random numbers: a world's draw pile and
   random stream are the same for every candidate, so two candidates differ only by the move;
4. the candidate with the best mean result (seat 0's share of the win) is played if it beats
   the planner's move by more than ``margin``, otherwise the planner's move.

Rollouts of every row, world and candidate run as one batch on a plain core.
Given default observations (a loop that does not honour ``observation = "infostate"``), it
plays the planner's move.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from deckgym.agents.racko_belief import BELIEF_MODELS, OPPONENT_MODELS, RackoBelief, draw_orders, opponent_policy, strip_history
from deckgym.agents.params import Choice, Range
from deckgym.agents.pimc import PIMCSearchAgent, keep_unless_beaten
from deckgym.agents.racko_heuristics import lookahead_decide
from racko_env.planning.plan import DEFAULT_SEQUENCE_PARAMS
from racko_env.core import RackoCore
from racko_env.planning.plan import sequence_plan
from racko_env.planning.plan_constants import BIG
from racko_env.state import CHOOSE, DISCARD_DRAWN, DRAW, NUM_ACTIONS, TAKE

__all__ = ["RackoSearchAgent", "rollout_values"]


def rollout_values(core: Any, state: Any, policy: str = "sequence", horizon: int = 0) -> np.ndarray:
    """``(R,)`` seat 0's share of the win when every seat plays ``policy`` (``OPPONENT_MODELS``:
    ``sequence``, ``lookahead``, or ``lookahead4`` with a 4-value draw outlook) from ``state`` (a
    plain core's batch, stepped in place) to the round's end, or for ``horizon`` turns
    (0: no limit), after which the lower planner estimate of the turns left wins."""
    decide = opponent_policy(policy)
    R = state.batch_size
    value = np.zeros(R)
    live = np.arange(R)
    cur = state
    start = cur.turn.astype(np.int64).copy()
    rules = core.rules
    while len(live):
        seats = core.current_player(cur)
        view = core.obs_view(core.observe(cur, seats))
        masks = core.legal_action_mask(cur)
        res = core.step(cur, decide(view, masks, rules), check=False)
        done = res.round_over
        if done.any():
            won = res.winners[done].astype(np.float64)
            value[live[done]] = won[:, 0] / np.maximum(won.sum(axis=1), 1.0)
        if horizon:
            cut = ~done & (cur.turn - start >= horizon) & (cur.phase == CHOOSE)
            if cut.any():
                value[live[cut]] = _leaf_values(core, cur.take(np.flatnonzero(cut)))
                done = done | cut
        if done.any():
            keep = np.flatnonzero(~done)
            cur, live, start = cur.take(keep), live[keep], start[keep]
    return value


def _leaf_values(core: Any, st: Any) -> np.ndarray:
    """Seat 0's share of the lowest planner estimate of turns to go out (unchanged rack)."""
    P = core.num_players
    est = np.empty((st.batch_size, P))
    for q in range(P):
        cost, _ = sequence_plan(core.obs_view(core.observe(st, q)), core.rules)
        est[:, q] = cost[:, 0]
    best = est <= est.min(axis=1, keepdims=True)
    return best[:, 0] / best.sum(axis=1)


class RackoSearchAgent(PIMCSearchAgent):
    """PIMC search over sampled beliefs (module docstring)."""

    spec = "racko:search"
    plain_core = RackoCore
    params: dict[str, Any] = {"samples": 16, "piles": 4, "candidates": 3, "belief": "history", "oversample": 4,
                              "order_weight": 4.0, "rollout": "lookahead4", "margin": 0.15, "horizon": 40,
                              "max_rows": 65536, "sweeps": 32, "eps": 0.05,
                              "opponent": "lookahead4"}
    param_ranges = {
        "samples": Range(1, 1024, integer=True, why="worlds sampled from the belief per decision"),
        "piles": Range(1, 64, integer=True, why="draw orders rolled out per sampled world"),
        "candidates": Range(2, 11, integer=True, why="moves searched per decision, the planner's first"),
        "belief": Choice(BELIEF_MODELS),
        "oversample": Range(1, 64, integer=True, why="particles: prior worlds drawn per world kept"),
        "order_weight": Range(0, 100, why="particles: weight of a descent in an opponent's rack"),
        "rollout": Choice(OPPONENT_MODELS),
        "margin": Range(0, 1, why="win-share gain over the planner's move needed to deviate"),
        "horizon": Range(0, 300, integer=True, why="rollout turns, 0: to the round's end"),
        "max_rows": Range(64, 2**22, integer=True, why="rollout rows per batch"),
        "sweeps": Range(0, 4096, integer=True, why="history: Metropolis-Hastings swaps per world"),
        "eps": Range(1e-6, 0.5, why="history: chance the opponent model plays another move"),
        "opponent": Choice(OPPONENT_MODELS),
    }

    def belief_key(self) -> Any:
        p = self.params
        return f"{p['belief']}/{p['oversample']}/{p['order_weight']}/{p['sweeps']}/{p['eps']}/{p['opponent']}"

    def make_belief(self) -> RackoBelief:
        p = self.params
        return RackoBelief(self.icore, p["belief"], oversample=int(p["oversample"]), order_weight=float(p["order_weight"]),
                           sweeps=int(p["sweeps"]), eps=float(p["eps"]), opponent=p["opponent"])

    def propose(self, obs: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, Any]:
        view = self.icore.obs_view(obs)
        return lookahead_decide(view, masks, self.core.rules, None, None), view

    def to_search(self, view: dict[str, np.ndarray], masks: np.ndarray, base: np.ndarray) -> tuple[np.ndarray, np.ndarray, None]:
        return (*self.candidates(view, masks, base), None)

    def candidates(self, view: dict[str, np.ndarray], masks: np.ndarray, base: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(B, m)`` moves to search, the planner's first (-1: none), and the rows to search."""
        m = int(self.params["candidates"])
        B = len(base)
        cost, win = sequence_plan(view, self.core.rules, DEFAULT_SEQUENCE_PARAMS)
        score = np.full((B, NUM_ACTIONS), np.inf)
        score[:, 2:12] = np.where(win, -BIG, cost[:, 1:])
        score[:, DISCARD_DRAWN] = cost[:, 0]
        score[:, DRAW], score[:, TAKE] = 0.0, 1.0
        score = np.where(masks, score, np.inf)
        score[np.arange(B), base] = -np.inf  # the planner's move first
        order = np.argsort(score, axis=1, kind="stable")[:, :m]
        ok = np.take_along_axis(score, order, axis=1) < np.inf
        cand = np.where(ok, order, -1)
        goes_out = (view["phase"] != CHOOSE) & (base >= 2) & (base <= 11)
        goes_out &= win[np.arange(B), np.clip(base - 2, 0, 9)]
        taking_out = (view["phase"] == CHOOSE) & (base == TAKE) & win.any(axis=1)
        search = (cand[:, 1] >= 0) & ~goes_out & ~taking_out
        return cand, search

    def worlds_per_row(self) -> int:
        return int(self.params["samples"]) * int(self.params["piles"])

    def worlds(self, obs: np.ndarray) -> Any:
        """``samples`` belief worlds per row, each with ``piles`` orders of its draw pile."""
        worlds = strip_history(self._belief().sample(obs, int(self.params["samples"]), self.rng))
        return draw_orders(worlds, int(self.params["piles"]), self.rng)

    def decide(self, worlds: Any, cand: np.ndarray, extra: Any = None) -> tuple[np.ndarray, np.ndarray]:
        mean = self.candidate_values(worlds, cand)
        return keep_unless_beaten(mean, cand, float(self.params["margin"])), mean

    def search_worlds(self, worlds: Any, cand: np.ndarray) -> np.ndarray:
        """The move of each row given ``k`` worlds per row (``B·k`` plain states in the
        mover's frame, row ``b·k + j``) and its candidates ``cand (B, m)`` (planner's first)."""
        return self.decide(worlds, cand)[0]

    def rollout(self, states: Any, acts: np.ndarray) -> np.ndarray:
        """Each candidate played, then every seat plays ``rollout`` (up to ``horizon`` turns)."""
        self.pcore.step(states, acts, check=False)
        return rollout_values(self.pcore, states, self.params["rollout"], int(self.params["horizon"]))
