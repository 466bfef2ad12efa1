"""Derived Least Score features for learning agents, from the player's own observation.

:func:`derived_features` is a pure, batched function of a batch of observations (decoded
with ``core.obs_view``); it never sees the game state. ``FEATURES_VERSION = 3`` is the
default; ``derived_features(..., version=1 | 2)`` still gives the older layouts (models
record the version they were trained on). Version 1 has ``num_features(core) = 53 + 2·(P − 1)``
float32 columns:

======================  =======  ==============================================================
block                   cols     meaning
======================  =======  ==============================================================
``slot_value``          5        value (L1) of the card in each hand slot / 10 (0: empty slot)
``hand``                2        hand total / 50, hand size / 5
``discard_value``       31       for discard action a (hand slots in bit set ``a + 1``): the
                                 value it removes / 50 if that group is legal (L5), else 0
``best_discard``        2        the largest legal discard value / 50, the hand total after it / 50
``floor_value``         5        value of floor card j / 10 (0: none)
``floor_pairs``         5        hand cards of the same rank as floor card j / 2
``floor_min``           1        the smallest floor value / 10 (1 if no floor)
``unknown_mean``        1        mean value of the cards this player cannot locate / 10
``opp_estimate``        P − 1    per opponent (ego order): known cards' value + unknown cards ×
                                 ``unknown_mean``, / 50 (0 if eliminated)
``opp_known_value``     P − 1    per opponent: value of its publicly known cards / 50
``declare_margin``      1        (hand total − lowest opponent estimate) / 50 (L8: ≤ 0 wins)
======================  =======  ==============================================================

Version 2 (``num_features = 94 + 2·(P − 1)``) appends the ``leastscore:expect`` heuristic's
decision (``leastscore_env.planning.plan.expect_plan``), from a legal mask rebuilt from the
observation (L5 groups, L7 ``can_declare``, the floor):

======================  =======  ==============================================================
``expect_action``       38       one-hot of the action expect would play
``expect_success``      1        its declare-success estimate (calibrated opponent model; 0 if
                                 declaring is not legal now)
``expect_points``       1        expected L8 points of declaring now / 40 (clipped to 1)
``expect_advantage``    1        utility of declaring − utility of playing on (> margin: declare),
                                 clipped to [−1, 1]
======================  =======  ==============================================================

Version 3 (the same size as version 2) replaces that block with the ``leastscore:dp``
heuristic's decision (``leastscore_env.planning.dp.dp_plan``, same legal mask):

======================  =======  ==============================================================
``dp_action``           38       one-hot of the action dp would play
``dp_declare``          1        utility (win share − lam · L8 points) of declaring now, in
                                 [−1, 1] (0 if declaring is not legal now)
``dp_play_on``          1        utility of the best discard (or draw) by the hand values, in [−1, 1]
``dp_advantage``        1        declare − play on (> margin: declare), in [−1, 1] (0 if not legal)
======================  =======  ==============================================================

Changing the layout means bumping ``FEATURES_VERSION``.

Why it is not the shipped code itself: the package ships only the compiled pass
(``leastscore_env.planning.feature_kernels``, numba) that computes these columns from
observation rows; this is the plain-numpy formulation it is pinned to, bit for bit
(``tests/test_leastscore_plan_oracle.py``).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from leastscore_env.cards import NUM_CARDS, VALUE
from leastscore_env.legality import legal_discard_table
from leastscore_env.state import DECLARE, DRAW_DECK, NUM_ACTIONS, TAKE_FLOOR
from tests.oracles.leastscore_dp import dp_plan
from tests.oracles.leastscore_plan import expect_plan, rules_kwargs

FEATURES_VERSION = 3
SUPPORTED_VERSIONS = (1, 2, 3)
NUM_PLAN_FEATURES = 38 + 3  # versions 2, 3: a heuristic's action one-hot and three numbers behind it
_VAL = VALUE[:NUM_CARDS].astype(np.float32)  # (52,) card values
_SUBSETS = np.array([[(sel >> i) & 1 for i in range(5)] for sel in range(1, 32)], dtype=np.float32)  # (31, 5)


def _check_version(version: int) -> None:
    if version not in SUPPORTED_VERSIONS:
        raise ValueError(f"Least Score derived features version {version!r} is not computed by this code "
                         f"(supported: {SUPPORTED_VERSIONS})")


def num_features(core: Any, version: int = FEATURES_VERSION) -> int:
    _check_version(version)
    return 53 + 2 * (int(core.num_players) - 1) + (NUM_PLAN_FEATURES if version >= 2 else 0)


@lru_cache(maxsize=8)
def _tables(sequence_lengths: tuple[int, ...], same_suit: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return legal_discard_table(tuple(sequence_lengths), bool(same_suit))


def legal_discards(core: Any, hand: np.ndarray) -> np.ndarray:
    """``(B, 31)`` bool: which discard groups (L5) the hand ``(B, 5)`` card ids (−1: none) allows."""
    A, Bt, MONO = _tables(tuple(core.rules.sequence_lengths), bool(core.rules.sequence_same_suit))
    have = hand >= 0
    rank = np.where(have, hand >> 2, 13).astype(np.int64)
    suit = np.where(have, hand & 3, 0).astype(np.int64)
    ri = (rank << (4 * np.arange(5))).sum(axis=1)
    si = (suit << (2 * np.arange(5))).sum(axis=1)
    bits = (A[ri] | (Bt[ri] & MONO[si])).astype(np.int64)
    return ((bits[:, None] >> np.arange(31)) & 1).astype(bool)


def derived_features(core: Any, obs: np.ndarray, version: int = FEATURES_VERSION) -> np.ndarray:
    _check_version(version)
    v = core.obs_view(obs)
    hand = v["hand"]  # (B, 5) card ids in canonical order, -1 = empty
    B = hand.shape[0]
    P = int(core.num_players)
    n1 = num_features(core, 1)
    out = np.zeros((B, num_features(core, version)), dtype=np.float32)
    if B == 0:
        return out
    have = hand >= 0
    sv = np.where(have, _VAL[np.clip(hand, 0, NUM_CARDS - 1)], 0.0)  # (B, 5) slot values
    total = sv.sum(axis=1)
    out[:, 0:5] = sv / 10
    out[:, 5] = total / 50
    out[:, 6] = have.sum(axis=1) / 5
    legal = legal_discards(core, hand)
    removed = sv @ _SUBSETS.T  # (B, 31)
    dv = np.where(legal, removed, 0.0)
    out[:, 7:38] = dv / 50
    best = dv.max(axis=1)
    out[:, 38] = best / 50
    out[:, 39] = (total - best) / 50
    floor = v["floor"]  # (B, 5) ids, -1 = none
    fhave = floor >= 0
    fv = np.where(fhave, _VAL[np.clip(floor, 0, NUM_CARDS - 1)], 0.0)
    out[:, 40:45] = fv / 10
    same = (floor[:, :, None] >> 2 == hand[:, None, :] >> 2) & fhave[:, :, None] & have[:, None, :]
    out[:, 45:50] = same.sum(axis=2) / 2
    out[:, 50] = np.where(fhave, fv, 10.0).min(axis=1) / 10
    # cards this player cannot locate: the deck and the opponents' unknown cards
    known_opp = v["opp_known"]  # (B, P-1, 52)
    located = v["hand_mask"] | v["dead"] | v["discard"] | known_opp.any(axis=1)
    fb = np.zeros((B, NUM_CARDS), bool)
    rows = np.repeat(np.arange(B), 5)
    fl = floor.ravel()
    fb[rows[fl >= 0], fl[fl >= 0]] = True
    located |= fb
    unknown = ~located
    n_unknown = unknown.sum(axis=1)
    mean_unknown = np.where(n_unknown > 0, (unknown * _VAL).sum(axis=1) / np.maximum(n_unknown, 1), 0.0)
    out[:, 51] = mean_unknown / 10
    kv = (known_opp * _VAL).sum(axis=2)  # (B, P-1)
    kn = known_opp.sum(axis=2)
    size = v["opp_hand_size"]
    est = kv + np.maximum(size - kn, 0) * mean_unknown[:, None]
    alive_opp = v["alive"][:, 1:] if v["alive"].shape[1] == P else np.ones((B, P - 1), bool)
    est = np.where(alive_opp & (size > 0), est, 0.0)
    out[:, 52 : 52 + P - 1] = est / 50
    out[:, 52 + P - 1 : 52 + 2 * (P - 1)] = kv / 50
    lowest = np.where(alive_opp & (size > 0), est, np.inf).min(axis=1)
    out[:, n1 - 1] = np.where(np.isfinite(lowest), total - lowest, 0.0) / 50
    if version == 2:
        _plan_block(core, v, legal, out[:, n1:])
    elif version == 3:
        _dp_block(core, v, legal, out[:, n1:])
    return out


def legal_mask_from_view(core: Any, v: dict[str, np.ndarray], legal: np.ndarray | None = None) -> np.ndarray:
    """``(B, 38)`` bool: the legal actions rebuilt from an observation (L4, L5, L7)."""
    hand, floor = v["hand"], v["floor"]
    B = hand.shape[0]
    if legal is None:
        legal = legal_discards(core, hand)
    mask = np.zeros((B, NUM_ACTIONS), dtype=bool)
    disc = v["phase"] == 0
    mask[:, :31] = legal & disc[:, None]
    mask[:, DECLARE] = disc & v["can_declare"]
    mask[:, DRAW_DECK] = ~disc
    nf = min(floor.shape[1], NUM_ACTIONS - TAKE_FLOOR)
    mask[:, TAKE_FLOOR:TAKE_FLOOR + nf] = (floor[:, :nf] >= 0) & ~disc[:, None]
    return mask


def _plan_block(core: Any, v: dict[str, np.ndarray], legal: np.ndarray, out: np.ndarray) -> None:
    """Fill the version-2 columns (expect's decision, see the module doc) in place."""
    mask = legal_mask_from_view(core, v, legal)
    plan = expect_plan(v, mask, **rules_kwargs(core.rules))
    out[np.arange(out.shape[0]), plan["action"]] = 1.0
    out[:, 38] = plan["success"]
    out[:, 39] = np.minimum(plan["points"] / 40.0, 1.0)
    out[:, 40] = np.clip(plan["advantage"], -1.0, 1.0)


def _dp_block(core: Any, v: dict[str, np.ndarray], legal: np.ndarray, out: np.ndarray) -> None:
    """Fill the version-3 columns (dp's decision, see the module doc) in place."""
    mask = legal_mask_from_view(core, v, legal)
    plan = dp_plan(v, mask, **rules_kwargs(core.rules))
    out[np.arange(out.shape[0]), plan["action"]] = 1.0
    can = mask[:, DECLARE] & (v["phase"] == 0)
    out[:, 38] = np.clip(plan["declare"], -1.0, 1.0)
    out[:, 39] = np.clip(plan["play_on"], -1.0, 1.0)
    out[:, 40] = np.where(can, np.clip(plan["declare"] - plan["play_on"], -1.0, 1.0), 0.0)


def feature_bounds(core: Any, version: int = FEATURES_VERSION) -> tuple[np.ndarray, np.ndarray]:
    n = num_features(core, version)
    return np.full(n, -2.0, np.float32), np.full(n, 2.0, np.float32)


def shaping_potential(core: Any, obs: np.ndarray) -> np.ndarray:
    """``(B,)`` − hand total / 50 (a lower hand is progress)."""
    v = core.obs_view(obs)
    hand = v["hand"]
    return -np.where(hand >= 0, _VAL[np.clip(hand, 0, NUM_CARDS - 1)], 0.0).sum(axis=1) / 50
