"""Rack-O heuristics of increasing strength: ``racko:bucket`` < ``racko:ranges`` < ``racko:sequence``
< ``racko:lookahead`` (the last two play the planner of ``racko_env.planning.plan``).

Every agent is a pure, batched numpy function over the decoded observation
(``core.obs_view(obs)``: ``rack`` (B, 10) slot 1 first, ``phase``, ``hand``, ``discard_top``,
``opp_known``, ``in_discard``, ...) plus the legal-action mask; there is no Python loop
over games (only over the 10 slots / candidate placements). Actions (``RackoCore``):
``0`` draw, ``1`` take the discard, ``2 + i`` put the card in hand into slot ``i + 1``,
``12`` discard the drawn card. Phases: 0 choose, 1 place_discard, 2 place_drawn.

Shared by all four: a placement that goes out at once (the rack becomes strictly
increasing and, R7, holds a run of ``min_run_to_win`` consecutive numbers) is always
taken, in the choose phase (take the discard) as in the placing phases.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from deckgym.agents.base import Agent
from deckgym.agents.params import Choice, Range
from racko_env.state import CHOOSE, DISCARD_DRAWN, DRAW, PLACE_DRAWN, TAKE
from racko_env.planning.plan import (DEFAULT_SEQUENCE_PARAMS, candidate_racks, goes_out, plan_choices,
                             plan_with_outlook, sequence_plan, take_by_outlook)
from racko_env.planning.plan_constants import SLOTS

__all__ = [
    "BucketAgent",
    "RangesAgent",
    "SequenceAgent",
    "LookaheadAgent",
    "bucket_decide",
    "ranges_decide",
    "sequence_decide",
    "lookahead_decide",
    "winning_slots",
]


# --------------------------------------------------------------------------------------
# shared helpers
# --------------------------------------------------------------------------------------

def winning_slots(rack: np.ndarray, card: np.ndarray, min_run: int) -> np.ndarray:
    """(B, 10) bool: putting ``card`` into slot ``s`` makes the rack go out (R7)."""
    return goes_out(candidate_racks(rack, card)[:, 1:], min_run)


def _first_true(mask: np.ndarray) -> np.ndarray:
    """Index of the first True per row (0 when none; check ``mask.any`` separately)."""
    return np.argmax(mask, axis=1)


def _buckets(cards: np.ndarray, n: int) -> np.ndarray:
    """0-based bucket slot of each card: card c belongs in slot ⌈10·c/N⌉ (1-based)."""
    c = np.asarray(cards, dtype=np.int64)
    return np.clip((SLOTS * c + n - 1) // n - 1, 0, SLOTS - 1)


def _view_arrays(view: dict[str, np.ndarray], masks: np.ndarray) -> tuple[np.ndarray, ...]:
    rack = np.asarray(view["rack"], dtype=np.int64)
    phase = np.asarray(view["phase"], dtype=np.int64)
    hand = np.asarray(view["hand"], dtype=np.int64)
    top = np.asarray(view["discard_top"], dtype=np.int64)
    masks = np.asarray(masks, dtype=bool)
    return rack, phase, hand, top, masks


def _finish(
    phase: np.ndarray,
    masks: np.ndarray,
    take: np.ndarray,
    place_slot: np.ndarray,
    discard_drawn: np.ndarray,
) -> np.ndarray:
    """Assemble the actions of the three phases (each argument is (B,))."""
    B = phase.shape[0]
    act = np.full(B, DRAW, dtype=np.int64)
    choose = phase == CHOOSE
    act[choose & take & masks[:, TAKE]] = TAKE
    placing = ~choose
    act[placing] = 2 + place_slot[placing]
    drop = (phase == PLACE_DRAWN) & discard_drawn & masks[:, DISCARD_DRAWN]
    act[drop] = DISCARD_DRAWN
    return act


# --------------------------------------------------------------------------------------
# racko:bucket
# --------------------------------------------------------------------------------------
def bucket_decide(view: dict[str, np.ndarray], masks: np.ndarray, rules: Any, rng: np.random.Generator | None = None) -> np.ndarray:
    """Buckets: card ``c`` belongs in slot ⌈10·c/N⌉.

    A slot is *well filled* when its card belongs to it. Take the discard when its bucket
    slot is not well filled (the discard fits there better than the card it replaces),
    otherwise draw; put the card in hand into its bucket slot if that slot is not well
    filled, else discard it (a card taken from the discard pile always goes to its bucket
    slot). A rack with every slot well filled is increasing, but this agent knows nothing of
    R7's run: it then waits for a placement that happens to go out.
    """
    rack, phase, hand, top, masks = _view_arrays(view, masks)
    n, min_run = int(rules.deck_size), int(rules.min_run_to_win)
    B = rack.shape[0]
    rows = np.arange(B)
    good = _buckets(rack, n) == np.arange(SLOTS)  # (B, 10) slot well filled

    card = np.where(phase == CHOOSE, top, hand)
    win = winning_slots(rack, card, min_run)
    can_win = win.any(axis=1)
    target = _buckets(card, n)
    improves = ~good[rows, target]

    take = can_win | improves
    place_slot = np.where(can_win, _first_true(win), target)
    discard_drawn = ~can_win & ~improves
    return _finish(phase, masks, take, place_slot, discard_drawn)


# --------------------------------------------------------------------------------------
# racko:ranges
# --------------------------------------------------------------------------------------
def _range_slots(rack: np.ndarray, cards: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Anchors and proportional ranges.

    Returns ``fits`` (B, 10): the slot's card fits its range, and ``target`` (B,): the slot
    whose range holds ``cards`` (-1 if the card equals an anchor's value).
    Anchors are the cards already in their bucket (increasing by construction), with
    virtual anchors 0 before slot 1 and N+1 after slot 10. The ``k`` slots between two
    anchors ``a < b`` share the values ``a+1 .. b-1`` in ``k`` equal consecutive ranges.
    """
    B = rack.shape[0]
    slots = np.arange(SLOTS)
    anchor = _buckets(rack, n) == slots
    # previous / next anchor (slot index and value) for every slot, with the sentinels
    prev_slot = np.full((B, SLOTS), -1, dtype=np.int64)
    prev_val = np.zeros((B, SLOTS), dtype=np.int64)
    ps, pv = np.full(B, -1, dtype=np.int64), np.zeros(B, dtype=np.int64)
    for s in range(SLOTS):
        prev_slot[:, s], prev_val[:, s] = ps, pv
        ps = np.where(anchor[:, s], s, ps)
        pv = np.where(anchor[:, s], rack[:, s], pv)
    next_slot = np.full((B, SLOTS), SLOTS, dtype=np.int64)
    next_val = np.full((B, SLOTS), n + 1, dtype=np.int64)
    ns, nv = np.full(B, SLOTS, dtype=np.int64), np.full(B, n + 1, dtype=np.int64)
    for s in range(SLOTS - 1, -1, -1):
        next_slot[:, s], next_val[:, s] = ns, nv
        ns = np.where(anchor[:, s], s, ns)
        nv = np.where(anchor[:, s], rack[:, s], nv)

    def position(c: np.ndarray, a: np.ndarray, b: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        """Slot of the gap (i, j) whose range holds c (needs a < c < b)."""
        k = j - i - 1
        width = np.maximum(b - a - 1, 1)
        t = np.floor((c - a - 0.5) / width * k).astype(np.int64)
        return i + 1 + np.clip(t, 0, np.maximum(k - 1, 0))

    inside = (rack > prev_val) & (rack < next_val)
    fits = anchor | (inside & (position(rack, prev_val, next_val, prev_slot, next_slot) == slots))

    # the gap holding each card: the anchors just below and above it in value
    cards = np.asarray(cards, dtype=np.int64)
    vals = np.where(anchor, rack, -1)
    below = np.where(anchor & (rack < cards[:, None]), slots, -1).max(axis=1)
    above_mask = anchor & (rack > cards[:, None])
    above = np.where(above_mask.any(axis=1), _first_true(above_mask), SLOTS)
    rows = np.arange(B)
    a = np.where(below >= 0, vals[rows, np.maximum(below, 0)], 0)
    b = np.where(above < SLOTS, rack[rows, np.minimum(above, SLOTS - 1)], n + 1)
    gap_ok = above - below - 1 >= 1
    target = np.where(gap_ok, position(cards, a, b, below, above), -1)
    target = np.where((anchor & (rack == cards[:, None])).any(axis=1), -1, target)
    return fits, target


def ranges_decide(view: dict[str, np.ndarray], masks: np.ndarray, rules: Any, rng: np.random.Generator | None = None) -> np.ndarray:
    """Ranges: anchors and proportional gaps.

    Cards already in their bucket slot are anchors; the slots between two anchors (or the
    rack's ends) must hold the values between them, so that value range is split into equal
    consecutive sub-ranges, one per slot. A card fits the slot whose sub-range holds it.
    Take the discard only when it fits a slot whose current card does not fit its own
    range; a drawn card goes to such a slot too, otherwise it is discarded. Ranges adapt to
    the anchors already held (unlike fixed buckets), so fewer good cards are rejected.
    """
    rack, phase, hand, top, masks = _view_arrays(view, masks)
    n, min_run = int(rules.deck_size), int(rules.min_run_to_win)
    B = rack.shape[0]
    rows = np.arange(B)
    card = np.where(phase == CHOOSE, top, hand)
    win = winning_slots(rack, card, min_run)
    can_win = win.any(axis=1)
    fits, target = _range_slots(rack, card, n)
    has_target = target >= 0
    improves = has_target & ~fits[rows, np.maximum(target, 0)]

    take = can_win | improves
    # forced placement of a taken discard without a target: the worst-fitting slot nearest
    # the card's bucket (only happens through inconsistent states; keeps play sensible)
    fallback = _buckets(card, n)
    place_slot = np.where(can_win, _first_true(win), np.where(has_target, target, fallback))
    discard_drawn = ~can_win & ~improves
    return _finish(phase, masks, take, place_slot, discard_drawn)


# --------------------------------------------------------------------------------------
# racko:sequence
# --------------------------------------------------------------------------------------

def _planner_decide(view: dict[str, np.ndarray], masks: np.ndarray, rules: Any, rng: np.random.Generator | None,
                    params: dict[str, float] | None, outlook: bool) -> np.ndarray:
    """Sequence's play; with ``outlook``, the take/draw choice of lookahead instead."""
    p = {**DEFAULT_SEQUENCE_PARAMS, **(params or {})}
    rack, phase, hand, top, masks = _view_arrays(view, masks)
    rows = (phase == CHOOSE) & masks[:, TAKE] if outlook else np.zeros(phase.shape[0], bool)
    if rows.any():
        cost, win, look = plan_with_outlook(view, rules, rows, p, samples=int(p["outlook_samples"]) or None)
    else:
        cost, win = sequence_plan(view, rules, p)
    noise = rng.random(cost.shape) * 1e-6 if rng is not None else None
    take, best_slot, discard_drawn = plan_choices(cost, win, p["take_margin"], noise)
    if rows.any():
        take[rows] = take_by_outlook(cost[rows], win[rows], look[rows])
    return _finish(phase, masks, take, best_slot, discard_drawn)


def sequence_decide(
    view: dict[str, np.ndarray],
    masks: np.ndarray,
    rules: Any,
    rng: np.random.Generator | None = None,
    params: dict[str, float] | None = None,
) -> np.ndarray:
    """Sequence: keep the cheapest-to-complete increasing subsequence (see ``racko_env.planning.plan.sequence_costs``).

    Every decision evaluates the 11 candidate racks (unchanged, or the card in each slot)
    with the DP and plays the cheapest; the discard is taken only when placing it cuts the
    estimated turns by more than ``take_margin`` (a draw has its own expected value). A
    placement that goes out is always taken. Ties are broken at random (seeded).
    """
    return _planner_decide(view, masks, rules, rng, params, outlook=False)


def lookahead_decide(
    view: dict[str, np.ndarray],
    masks: np.ndarray,
    rules: Any,
    rng: np.random.Generator | None = None,
    params: dict[str, float] | None = None,
) -> np.ndarray:
    """Lookahead: ``racko:sequence``, but take the discard only when it beats a blind draw.

    Instead of sequence's fixed ``take_margin``, the take/draw choice compares the best
    placement of the discard top with the expected result of drawing
    (:func:`racko_env.planning.plan.draw_outlook`: the planner's best play of each unseen value,
    averaged). Placing is as in sequence.
    """
    return _planner_decide(view, masks, rules, rng, params, outlook=True)


# --------------------------------------------------------------------------------------
# Agent classes
# --------------------------------------------------------------------------------------
class _RackoHeuristic(Agent):
    def _decide(self, view: dict[str, np.ndarray], masks: np.ndarray) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        obs = np.asarray(observations, dtype=np.float32)
        if obs.shape[0] == 0:
            return np.zeros(0, dtype=np.int64)
        view = self.core.obs_view(obs)
        return self._decide(view, np.asarray(action_masks, dtype=bool)).astype(np.int64)


class BucketAgent(_RackoHeuristic):
    __doc__ = bucket_decide.__doc__
    spec = "racko:bucket"

    def _decide(self, view: dict[str, np.ndarray], masks: np.ndarray) -> np.ndarray:
        return bucket_decide(view, masks, self.core.rules, self.rng)


class RangesAgent(_RackoHeuristic):
    __doc__ = ranges_decide.__doc__
    spec = "racko:ranges"

    def _decide(self, view: dict[str, np.ndarray], masks: np.ndarray) -> np.ndarray:
        return ranges_decide(view, masks, self.core.rules, self.rng)


class SequenceAgent(_RackoHeuristic):
    __doc__ = sequence_decide.__doc__
    spec = "racko:sequence"
    params: dict[str, float] = DEFAULT_SEQUENCE_PARAMS
    param_ranges = {
        "discard_weight": Range(0, 1, why="availability of a card in the discard pile"),
        "specific_factor": Range(0, None),
        "take_margin": Range(),
        "bonus_weight": Range(0, None),
        "fill": Choice(("slots", "coupon")),
        "outlook_samples": Range(0, 127, integer=True, why="0: every unseen value"),
    }
    decide = staticmethod(sequence_decide)

    def _decide(self, view: dict[str, np.ndarray], masks: np.ndarray) -> np.ndarray:
        return self.decide(view, masks, self.core.rules, self.rng, self.params)


class LookaheadAgent(SequenceAgent):
    __doc__ = lookahead_decide.__doc__
    spec = "racko:lookahead"
    decide = staticmethod(lookahead_decide)
