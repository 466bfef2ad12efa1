"""The Rack-O sequence planner: estimated turns to go out, from the player's own information.

A pure, batched function of a decoded observation (``core.obs_view``): which card values
are still obtainable (not in the own rack, not known in an opponent's rack, not in hand;
cards in the discard pile weigh less, R6), and a dynamic programme over the slots that
picks the increasing subsequence cheapest to complete, tracking the R7 run. The DP
(``racko_env.planning.sequence_kernel``) and the rules around it (``racko_env.planning.plan_kernels``: what
goes out, availability, the outlook's cards and mean, the choices) run compiled, row by row.

It lives in the game package because both the ``racko:sequence`` heuristic
(``deckgym.agents.racko_heuristics``) and the learners' derived features
(``racko_env.planning.features``, version 2) use it; games never import agents.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from racko_env.state import CHOOSE
from racko_env.tables import longest_run
from racko_env.planning.plan_constants import BIG, INF, SLOTS

__all__ = [
    "DEFAULT_SEQUENCE_PARAMS",
    "candidate_racks",
    "goes_out",
    "placement_wins",
    "availability",
    "sequence_costs",
    "sequence_plan",
    "plan_choices",
    "draw_outlook",
    "plan_with_outlook",
    "plan_costs",
    "bonus_active",
    "take_by_outlook",
    "best_placement",
]

#: quantiles of the unseen values that stand in for a blind draw (draw_outlook): 16 play as
#: well as every unseen value at about half the cost, and 8 play worse (docs/notes/strength-experiments.md)
OUTLOOK_SAMPLES = 16
_K = np.arange(SLOTS + 1, dtype=np.float64)
#: k · H_k (k-th harmonic number): draws to fill k proportional sub-ranges, in units of U/m
_KH = np.array([k * sum(1.0 / t for t in range(1, k + 1)) for k in range(SLOTS + 1)], dtype=np.float32)


def _fill_table(p: dict[str, float]) -> np.ndarray:
    """Cost factor of filling k slots of one gap, in units of U/m (see sequence_costs)."""
    if p.get("fill", "slots") == "coupon":
        return _KH
    return (_K * _K).astype(np.float32)  # k slots, each waiting U·k/m for its own sub-range



def candidate_racks(rack: np.ndarray, card: np.ndarray) -> np.ndarray:
    """(B, 11, 10): candidate 0 is the rack unchanged, candidate ``1 + s`` has ``card`` in slot ``s``."""
    rack = np.asarray(rack, dtype=np.int64)
    out = np.repeat(rack[:, None, :], SLOTS + 1, axis=1)
    idx = np.arange(SLOTS)
    out[:, 1 + idx, idx] = np.asarray(card, dtype=np.int64)[:, None]
    return out


def goes_out(racks: np.ndarray, min_run: int) -> np.ndarray:
    """R7: the rack is strictly increasing and (if ``min_run > 1``) holds a run of ``min_run``."""
    from racko_env.planning.plan_kernels import goes_out_rows  # numba: loaded on first use, not at import

    r = np.asarray(racks, dtype=np.int64)
    flat = np.ascontiguousarray(r.reshape(-1, r.shape[-1]))
    out = np.empty(flat.shape[0], dtype=bool)
    goes_out_rows(flat, int(min_run), out)
    return out.reshape(r.shape[:-1])


def placement_wins(rack: np.ndarray, card: np.ndarray, min_run: int) -> np.ndarray:
    """(B, 10) bool: ``rack`` with ``card`` in slot ``s`` goes out (R7), as
    ``goes_out(candidate_racks(rack, card)[:, 1:], min_run)`` without building the racks."""
    from racko_env.planning.plan_kernels import placement_wins_rows

    rack = np.ascontiguousarray(rack, dtype=np.int64)
    card = np.ascontiguousarray(card, dtype=np.int64).reshape(-1)
    if rack.ndim != 2 or card.shape[0] != rack.shape[0]:
        raise ValueError(f"racks (B, 10) and cards (B,) expected, got {rack.shape} and {card.shape}")
    out = np.empty(rack.shape, dtype=bool)
    placement_wins_rows(rack, card, int(min_run), out)
    return out


def bonus_active(rules: Any) -> bool:
    """R10's run bonus is played (the planner then credits the runs in hand)."""
    return bool(getattr(rules, "run_bonus_active", getattr(rules, "bonus", False)))


DEFAULT_SEQUENCE_PARAMS: dict[str, Any] = {
    "discard_weight": 0.5,  # a card in the discard pile comes back only after a reshuffle (R6)
    "specific_factor": 1.0,  # cost of waiting for one given card, in units of U / availability
    "take_margin": 4.0,  # take the discard only if it cuts the cost by more than this (what a draw gains)
    "bonus_weight": 1.0,  # R10: turns one would trade for each 50 points of run bonus
    "fill": "slots",  # gap cost model: "slots" (k · U·k/m) or "coupon" (U · k·H_k / m)
    "outlook_samples": OUTLOOK_SAMPLES,  # racko:lookahead: unseen values standing in for a blind draw (0: all)
}


def availability(view: dict[str, np.ndarray], rack: np.ndarray, n: int, discard_weight: float) -> np.ndarray:
    """(B, N+2) weight of each card value being obtainable later (index 0 and N+1 are 0).

    Unseen cards (not in the own rack, not known in an opponent's rack, not in hand)
    weigh 1; cards lying in the discard pile weigh ``discard_weight`` (below the top, they
    return only through a reshuffle, R6).
    """
    from racko_env.planning.plan_kernels import availability_rows

    B = rack.shape[0]
    avail = np.empty((B, n + 2), dtype=np.float64)
    in_discard = np.ascontiguousarray(view["in_discard"], dtype=bool)[:, : n + 2]
    opp = np.ascontiguousarray(view["opp_known"], dtype=np.int64)
    if rack.ndim != 2 or in_discard.shape[0] != B or opp.shape[:1] != (B,):
        raise ValueError(f"a view of {B} rows expected: rack {rack.shape}, in_discard {in_discard.shape}, "
                         f"opp_known {opp.shape}")
    availability_rows(np.ascontiguousarray(rack, dtype=np.int64), opp.reshape(B, opp.size // max(B, 1)),
                      np.ascontiguousarray(view["hand"], dtype=np.int64).reshape(B), in_discard, int(n),
                      float(discard_weight), avail)
    return avail


PAD = 12  # card tables are padded so that lookups up to ±PAD outside 0..N+1 need no clipping
F32 = np.float32


class _CardTables:
    """Per-game cumulative tables over card values for the sequence cost.

    ``A(x)`` = Σ obtainable weight of the cards ``c < x``; ``S(x)`` = Σ waiting cost of the
    cards ``c < x`` (cards 0 and N+1, and unobtainable cards, cost ``BIG`` each).
    """

    def __init__(self, avail: np.ndarray, specific_factor: float) -> None:
        from racko_env.planning.sequence_kernel import card_tables  # numba: loaded on first use, not at import

        B, n2 = avail.shape
        self.U = avail.sum(axis=1).astype(F32)
        width = n2 + 2 * PAD + 1
        # U · factor in numpy's own promotion (float32 for a Python factor), as the waiting costs use it
        sf_u = np.asarray(specific_factor * self.U, dtype=np.float64)
        self.flat_a = np.empty(B * width, dtype=F32)  # column PAD + 1 + x of a row holds Σ_{c ≤ x}
        self.flat_s = np.empty(B * width)  # float64: differences of sums of BIGs stay exact
        card_tables(np.ascontiguousarray(avail, dtype=np.float64), sf_u, PAD, BIG, self.flat_a, self.flat_s)
        self.rowbase = np.arange(B, dtype=np.int64) * width + PAD  # column of A(v) is rowbase + v


def _bonus_term(racks: np.ndarray, weight: float) -> np.ndarray:
    """R10: a proxy of the run bonus already in hand (longest run, scaled by how sorted the rack is)."""
    run = longest_run(racks)
    incr = np.diff(racks, axis=-1) > 0
    b = np.select([run >= 6, run == 5, run == 4, run == 3], [8.0, 4.0, 2.0, 1.0], 0.0)
    return weight * b * incr.mean(axis=-1)



def _run_kernel(rack: np.ndarray, cards: np.ndarray, look_cards: np.ndarray | None, avail: np.ndarray,
                min_run: int, p: dict[str, Any], look_rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The compiled DP (``racko_env.planning.sequence_kernel``): full costs of ``cards (B, K)`` and the
    best play of ``look_cards (B, L)`` (only on ``look_rows``, bool (B,), if given)."""
    from racko_env.planning.sequence_kernel import sequence_kernel  # numba: loaded on first use, not at import

    B = rack.shape[0]
    n = avail.shape[1] - 2
    R = int(min_run) if min_run > 1 else 1
    if R > PAD - 2:
        raise ValueError(f"min_run_to_win up to {PAD - 2} is supported, got {min_run}")
    if look_cards is None:
        look_cards = np.zeros((B, 0), np.int64)
    L = look_cards.shape[1]
    ny = np.full(B, L, np.int64) if look_rows is None else np.where(look_rows, L, 0).astype(np.int64)
    tab = _CardTables(np.asarray(avail, dtype=np.float64), p["specific_factor"])
    V = np.concatenate([np.zeros((B, 1), np.int64), rack, np.full((B, 1), n + 1, np.int64)], axis=1)
    out = np.empty((B, cards.shape[1], SLOTS + 1), dtype=np.float64)
    look = np.zeros((B, L), dtype=np.float64)
    sequence_kernel(V, np.ascontiguousarray(cards, dtype=np.int64), np.ascontiguousarray(look_cards, dtype=np.int64),
                    ny, tab.flat_a, tab.flat_s, tab.rowbase, tab.U, _fill_table(p), R, int(min_run), out, look)
    return out, look


def sequence_costs(
    rack: np.ndarray,
    card: np.ndarray,
    avail: np.ndarray,
    min_run: int,
    bonus: bool = False,
    params: dict[str, float] | None = None,
) -> np.ndarray:
    """(B, 11) estimated turns to go out: the rack unchanged, then ``card`` in slot 1..10.

    ``card`` may also be (B, K), K candidate cards per rack: the result is then (B, K, 11),
    and the part that depends only on the rack is computed once per rack.

    A dynamic programme over the slots (with sentinels 0 before slot 1 and N+1 after slot
    10) picks the increasing subsequence of cards to keep that is cheapest to complete.
    Completing the ``k`` free slots between kept values ``a < b`` when ``m`` obtainable
    cards lie strictly between them costs ``k · U·k/m`` turns (``U`` = all obtainable
    cards; impossible if ``m < k``): the values ``a..b`` are split into ``k`` proportional
    sub-ranges, one per slot, and each slot waits ``U·k/m`` draws for a card of its own
    sub-range. Per-slot costs add up the same however the free slots are grouped, so a
    kept card in the middle of a long gap is worth what it saves (a per-gap coupon
    collector, ``fill="coupon"``, over-charges split gaps and plays much worse). With
    ``min_run`` (R7) the DP also tracks the run of consecutive numbers built so far: kept
    adjacent consecutive cards extend it, and a gap may be planned to hold given cards
    (``a+1, a+2`` after a kept card, ``b−2, b−1`` before one, or bridging ``a`` to ``b``),
    each given card costing ``specific_factor · U / availability``. Only plans that contain
    the run count. With ``bonus`` (R10) a longer run already in the rack lowers the cost.

    The DP runs forward and backward once over the unchanged rack: a candidate differs
    from it in one slot only, so its best plan either skips that slot or keeps the new
    card there (forward part up to the slot, backward part after it). It is compiled
    (``racko_env.planning.sequence_kernel``), the rows of a batch as its SIMD lanes.
    """
    p = {**DEFAULT_SEQUENCE_PARAMS, **(params or {})}
    rack = np.asarray(rack, dtype=np.int64)
    card = np.asarray(card, dtype=np.int64)
    B = rack.shape[0]
    K = 1 if card.ndim == 1 else card.shape[1]
    out, _ = _run_kernel(rack, card.reshape(B, K), None, avail, min_run, p)
    if bonus:
        cands = candidate_racks(np.repeat(rack, K, axis=0), card.reshape(-1))
        out -= _bonus_term(cands, p["bonus_weight"]).reshape(B, K, SLOTS + 1)
    out = np.minimum(out, INF)
    return out[:, 0] if card.ndim == 1 else out


def sequence_plan(view: dict[str, np.ndarray], rules: Any, params: dict[str, float] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(cost (B, 11), goes_out (B, 10)) of the card the player decides about.

    The card is the discard top in the choose phase and the card in hand otherwise;
    ``cost[:, 0]`` is the estimated turns to go out keeping the rack unchanged, ``cost[:, 1 + s]``
    with the card in slot ``s + 1``; ``goes_out[:, s]``: that placement is a Rack-O (R7).
    """
    p = {**DEFAULT_SEQUENCE_PARAMS, **(params or {})}
    rack = np.asarray(view["rack"], dtype=np.int64)
    n, min_run = int(rules.deck_size), int(rules.min_run_to_win)
    bonus = bonus_active(rules)
    card = _decision_card(view)
    avail = availability(view, rack, n, p["discard_weight"])
    cost = sequence_costs(rack, card, avail, min_run, bonus, p)
    return cost, placement_wins(rack, card, min_run)


def _decision_card(view: dict[str, np.ndarray]) -> np.ndarray:
    """The card the player decides about: the discard top when choosing, else the card in hand."""
    phase = np.asarray(view["phase"], dtype=np.int64)
    return np.where(phase == CHOOSE, np.asarray(view["discard_top"], dtype=np.int64), np.asarray(view["hand"], dtype=np.int64))


def plan_choices(cost: np.ndarray, win: np.ndarray, take_margin: float,
                 noise: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The planner's choices from :func:`sequence_plan`: (take, best_slot, discard_drawn), each (B,).

    A placement that goes out always wins; otherwise the cheapest slot. The discard is
    taken only when placing it cuts the estimate by more than ``take_margin`` (a draw has
    its own expected value); a drawn card is dropped when no slot beats keeping the rack.
    ``noise`` (B, 11), tiny, breaks ties.
    """
    from racko_env.planning.plan_kernels import plan_choices_rows

    cost, win = _cost_and_win(cost, win)
    B = cost.shape[0]
    noise = np.zeros((0, 0)) if noise is None else np.ascontiguousarray(noise, dtype=np.float64)
    if noise.shape not in ((0, 0), cost.shape):
        raise ValueError(f"noise must have the shape of cost {cost.shape}, got {noise.shape}")
    take, discard_drawn = np.empty(B, dtype=bool), np.empty(B, dtype=bool)
    best_slot = np.empty(B, dtype=np.int64)
    plan_choices_rows(cost, win, float(take_margin), noise, take, best_slot, discard_drawn)
    return take, best_slot, discard_drawn


def draw_outlook(view: dict[str, np.ndarray], rules: Any, params: dict[str, float] | None = None,
                 samples: int | None = OUTLOOK_SAMPLES) -> np.ndarray:
    """(B,) estimated turns to go out after a blind draw from the draw pile (a one-card lookahead).

    Every card the player has not seen is equally likely to be drawn (docs/RULES.md
    "Information": the unseen cards are the draw pile and the hidden parts of the other
    racks). For each candidate value ``v`` the player would play it as well as the planner
    can (its cheapest slot, keep the rack if that is cheaper, 0 if it goes out); the
    outlook is the mean over ``v``. ``samples`` evenly spaced quantiles of the unseen
    values stand in for all of them (``None``: every unseen value, exact but slower).
    Comparing it with the cost of taking the discard is a better take/draw rule than
    :func:`plan_choices`' fixed margin (see docs/notes/strength-experiments.md).
    """
    p = {**DEFAULT_SEQUENCE_PARAMS, **(params or {})}
    rack = np.asarray(view["rack"], dtype=np.int64)
    n, min_run = int(rules.deck_size), int(rules.min_run_to_win)
    bonus = bonus_active(rules)
    avail = availability(view, rack, n, p["discard_weight"])
    vals, weight = _outlook_cards(avail, n, samples)
    return _outlook_mean(_best_plays(rack, vals, avail, min_run, bonus, p), weight)


def _outlook_cards(avail: np.ndarray, n: int, samples: int | None) -> tuple[np.ndarray, np.ndarray]:
    """The values standing in for a blind draw (B, K) and their weights (see :func:`draw_outlook`)."""
    B = avail.shape[0]
    if samples is None:
        vals = np.broadcast_to(np.arange(1, n + 1), (B, n))
        return np.ascontiguousarray(vals), (avail[:, 1 : n + 1] == 1.0).astype(np.float64)  # unseen: could be drawn
    from racko_env.planning.plan_kernels import outlook_cards_rows

    # the q-th of K quantiles of each row's unseen values, rank ⌊(q + ½)·count / K⌋; rows without
    # unseen cards: any value, weight 0
    vals = np.empty((B, int(samples)), dtype=np.int64)
    weight = np.empty((B, int(samples)), dtype=np.float64)
    outlook_cards_rows(np.ascontiguousarray(avail, dtype=np.float64), int(n), vals, weight)
    return vals, weight


def _outlook_mean(total: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """(B,) Σ total·weight / max(Σ weight, 1), row by row."""
    from racko_env.planning.plan_kernels import outlook_mean_rows

    total = np.ascontiguousarray(total, dtype=np.float64)
    weight = np.ascontiguousarray(weight, dtype=np.float64)
    if total.ndim != 2 or weight.shape != total.shape:
        raise ValueError(f"totals and weights of one shape (B, K) expected, got {total.shape} and {weight.shape}")
    out = np.empty(total.shape[0])
    outlook_mean_rows(total, weight, out)
    return out


def _best_plays(rack: np.ndarray, vals: np.ndarray, avail: np.ndarray, min_run: int, bonus: bool,
                p: dict[str, Any]) -> np.ndarray:
    """(B, K) the planner's best play of each card ``vals[:, k]``: 0 if it goes out, else the
    cheapest of keeping the rack and each slot."""
    B, K = vals.shape
    if not bonus:  # the kernel takes the minimum itself, pruning every plan that cannot win it
        return _run_kernel(rack, np.zeros((B, 0), np.int64), vals, avail, min_run, p)[1]
    cost = sequence_costs(rack, vals, avail, min_run, bonus, p)  # (B, K, 11)
    win = placement_wins(np.repeat(rack, K, axis=0), vals.reshape(-1), min_run)
    best = np.where(win.reshape(B, K, SLOTS), 0.0, cost[:, :, 1:]).min(axis=2)
    return np.minimum(cost[:, :, 0], best)


def plan_with_outlook(view: dict[str, np.ndarray], rules: Any, rows: np.ndarray, params: dict[str, float] | None = None,
                      samples: int | None = OUTLOOK_SAMPLES) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`sequence_plan` and, on the rows where ``rows`` (B,) is True, :func:`draw_outlook`.

    One pass of the DP per rack serves both; the outlook is 0 on the other rows.
    """
    p = {**DEFAULT_SEQUENCE_PARAMS, **(params or {})}
    rows = np.asarray(rows, dtype=bool)
    bonus = bonus_active(rules)
    look = np.zeros(rows.shape[0])
    if bonus:
        cost, win = sequence_plan(view, rules, p)
        r = np.flatnonzero(rows)
        if r.size:
            look[r] = draw_outlook({k: np.asarray(a)[r] for k, a in view.items()}, rules, p, samples)
        return cost, win, look
    rack = np.asarray(view["rack"], dtype=np.int64)
    n, min_run = int(rules.deck_size), int(rules.min_run_to_win)
    card = _decision_card(view)
    avail = availability(view, rack, n, p["discard_weight"])
    vals, weight = _outlook_cards(avail, n, samples)
    cost, look = plan_costs(rack, card, avail, min_run, p, vals, weight, rows)
    return cost, placement_wins(rack, card, min_run), look


def plan_costs(rack: np.ndarray, card: np.ndarray, avail: np.ndarray, min_run: int, p: dict[str, Any],
               vals: np.ndarray | None = None, weight: np.ndarray | None = None,
               rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(cost (B, 11) of ``card``, as :func:`sequence_costs` without R10's bonus; outlook (B,)):
    with ``vals``, the ``weight``-ed mean of the best plays of ``vals (B, K)`` on ``rows``
    (:func:`draw_outlook`), 0 elsewhere. The glue of :func:`plan_with_outlook` and of the
    derived features, one pass of the DP per rack."""
    from racko_env.planning.plan_kernels import finish_outlook

    B = rack.shape[0]
    out, best = _run_kernel(rack, card.reshape(B, 1), vals, avail, min_run, p, rows)
    if vals is None:
        return np.minimum(out[:, 0], INF), np.zeros(B)
    return finish_outlook(out, best, np.ascontiguousarray(weight, dtype=np.float64), np.asarray(rows, dtype=bool))


def best_placement(cost: np.ndarray, win: np.ndarray) -> np.ndarray:
    """(B,) the cheapest placement of the card (``-BIG`` when one goes out), from :func:`sequence_plan`."""
    from racko_env.planning.plan_kernels import best_placement_rows

    cost, win = _cost_and_win(cost, win)
    out = np.empty(cost.shape[0])
    best_placement_rows(cost, win, out)
    return out


def _cost_and_win(cost: np.ndarray, win: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``cost (B, S + 1)`` float64 and ``win (B, S)`` bool, contiguous; a clear error otherwise."""
    cost = np.ascontiguousarray(cost, dtype=np.float64)
    win = np.ascontiguousarray(win, dtype=bool)
    if cost.ndim != 2 or win.shape != (cost.shape[0], cost.shape[1] - 1):
        raise ValueError(f"cost (B, S + 1) and win (B, S) expected, got {cost.shape} and {win.shape}")
    return cost, win


def take_by_outlook(cost: np.ndarray, win: np.ndarray, outlook: np.ndarray) -> np.ndarray:
    """(B,) take the discard top when its best placement beats a blind draw's outlook.

    ``cost``, ``win`` from :func:`sequence_plan` in the choose phase, ``outlook`` from
    :func:`draw_outlook`. Replaces the planner's fixed ``take_margin``.
    """
    return best_placement(cost, win) < outlook
