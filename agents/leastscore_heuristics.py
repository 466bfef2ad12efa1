"""Heuristic Least Score agents, batched over ``B`` games (no Python loop over games).

Thin agent classes: the decisions are ``deckgym.agents.leastscore_plan``'s, on the building blocks of
``leastscore_env.planning.plan`` and ``leastscore_env.planning.dp`` (shared with the learners' derived features).

* ``leastscore:greedy`` (:class:`GreedyAgent`): throw away the most points now, take low or
  matching floor cards, declare at a fixed small total.
* ``leastscore:counting`` (:class:`CountingAgent`): counts cards to estimate the unseen pool
  and every opponent's total, declares on the estimated chance of a true declaration, and
  picks discards and draws by a one-turn lookahead over what it could draw.
* ``leastscore:expect`` (:class:`ExpectAgent`): counting's discards and draws, a declare rule
  on the expected L8 outcome under a calibrated opponent model.
* ``leastscore:dp`` (:class:`DPAgent`): every hand valued by a dynamic program over the race
  to declare (``leastscore_env.planning.dp``); the strongest of the four (EVALUATION.md).

All read only the player's observation: greedy and expect through ``core.obs_view``
(fields ``hand_mask``, ``floor``, ``dead``, ``seen``, ``opp_known``, ``opp_hand_size``,
``alive``, ``can_declare``, ``deck_size``, ``turn``), counting and dp decode the same fields
row by row in compiled code (``leastscore_env.planning.feature_kernels``). Each scores the actions and
picks the best legal one: the legal-action mask
already encodes which discard groups are legal (L5) and whether declaring is allowed (L7).
Rule ids (L4, L5, L7, L8) refer to ``docs/RULES.md``.

Action layout (L4): ``a`` in 0..30 discards the hand cards whose bits are set in ``a + 1``
(hand in canonical card-id order), 31 declares, 32 draws the deck top, ``33 + j`` takes the
j-th floor card.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from deckgym.agents.base import Agent
from deckgym.agents.leastscore_plan import counting_actions_obs, dp_actions_obs, expect_actions, greedy_actions
from deckgym.agents.params import Range
from leastscore_env.planning.dp import DEFAULT_LAM, DEFAULT_MARGIN
from leastscore_env.planning.plan import rules_kwargs, rules_sequences


class GreedyAgent(Agent):
    """``leastscore:greedy``: the most points out of the hand now, a fixed declaring total.

    Discard phase: the legal group (L5) with the largest total (a pair of kings before a
    single 10); declare (L7) as soon as it is allowed and the hand totals ``declare_at`` or
    less. Draw phase: a floor card if it is below the expected value of a deck card (from the
    cards not yet seen) or makes a pair / 3-sequence with the kept cards, else the deck.
    """

    spec = "leastscore:greedy"
    params: dict[str, Any] = {"declare_at": 6}
    param_ranges = {"declare_at": Range(0, 50, integer=True, why="a hand total")}

    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        view = self.core.obs_view(np.asarray(observations))
        return greedy_actions(view, action_masks, self.params["declare_at"], rules_sequences(self.core.rules))


class CountingAgent(Agent):
    """``leastscore:counting``: counts cards, estimates opponents, looks one turn ahead.

    Card counting: the unseen pool = cards neither in hand, on the floor, in the dead pile
    nor known in an opponent's hand; each opponent's total = its known cards + the exact
    distribution of the sum of its unknown cards drawn from the pool (tilted low by
    ``skew``: players keep low cards). Declare (L7) when the chance that no opponent is
    below our total (L8: a false declaration costs 20 + the difference) is ``min_success``
    or more. Discards and draws: every legal option is valued by the hand it leaves for the
    next turn, averaged over the possible deck cards (or with the floor card taken): its
    total minus ``gamma`` × what its best group (pairs, sequences) could discard next turn
    beyond a ``refill`` card, so pairs and near-sequences that allow big discards are kept.
    """

    spec = "leastscore:counting"
    params: dict[str, Any] = {"gamma": 0.7, "refill": 4.0, "min_success": 0.65, "skew": 0.05}
    param_ranges = {"gamma": Range(0, None), "refill": Range(0, 50, why="a card total"),
                    "min_success": Range(0, 1, why="a probability"), "skew": Range(0, 5, why="tilt exp(-skew * value)")}

    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        rules = self.core.rules
        p = self.params
        return counting_actions_obs(self.core, observations, action_masks, gamma=p["gamma"], refill=p["refill"],
                                    min_success=p["min_success"], skew=p["skew"],
                                    tie_wins=bool(getattr(rules, "tie_wins", True)),
                                    sequence_lengths=rules_sequences(rules))


class ExpectAgent(Agent):
    """``leastscore:expect``: counting's discards and draws, an expected-outcome declare rule.

    The opponents' unknown cards are drawn from the unseen pool tilted low by a skew
    calibrated on self-play (it grows with the rounds played and the number of unknown
    cards, ``leastscore_env.planning.plan.calibrated_skew``). Declare (L7) when the win share minus
    ``points_weight`` × expected L8 points of declaring beats the fitted value of playing
    on by more than ``margin`` (``leastscore_env.planning.plan.expect_plan``).
    """

    spec = "leastscore:expect"
    # points_weight: round points against round wins; 0 wins a little more often but loses far
    # more points than counting; 0.06 loses fewer points than counting (docs/notes/strength-experiments.md).
    params: dict[str, Any] = {"gamma": 0.7, "refill": 4.0, "points_weight": 0.06, "margin": -0.05}
    param_ranges = {"gamma": Range(0, None), "refill": Range(0, 50, why="a card total"),
                    "points_weight": Range(0, None), "margin": Range()}

    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        view = self.core.obs_view(np.asarray(observations))
        p = self.params
        return expect_actions(view, action_masks, gamma=p["gamma"], refill=p["refill"],
                              points_weight=p["points_weight"], margin=p["margin"], **rules_kwargs(self.core.rules))


class DPAgent(Agent):
    """``leastscore:dp``: hands valued by dynamic programming over the race to declare.

    Every hand (as a multiset of ranks) gets a worth by backward induction over our turns:
    declare (L7/L8) or discard the best group (L5) and draw, with the chance that an opponent
    declares first and the opponents' totals taken from ``leastscore:counting`` self-play
    (``leastscore_env.planning.dp``). Discards and draws pick the action whose resulting hand is worth
    most (deck cards weighted by the unseen pool, floor cards as seen); declare when the
    calibrated chance of a true declaration, less ``lam`` × the expected L8 points, beats
    playing on by more than ``margin``. The utility is ``win share − lam · round points``.
    """

    spec = "leastscore:dp"
    params: dict[str, Any] = {"lam": DEFAULT_LAM, "margin": DEFAULT_MARGIN}  # why these values: leastscore_env.planning.dp
    param_ranges = {"lam": Range(0, None, why="weight of the round points"), "margin": Range()}

    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        return dp_actions_obs(self.core, observations, action_masks, lam=self.params["lam"], margin=self.params["margin"],
                              **rules_kwargs(self.core.rules))
