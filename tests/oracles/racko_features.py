"""Derived Rack-O features for learning agents: what a strong player computes from its own cards.

:func:`derived_features` is a pure, batched function of a batch of *observations* (decoded
with ``core.obs_view``): it never sees the game state, so it uses exactly the player's own
information (docs/RULES.md "Information"). A learner appends these columns to the core's
observation; an agent that loads a model trained with them recomputes them from its own
observation the same way.

Version 1 layout, ``num_features(version=1) = 68`` float32 columns, for the card
``c`` in hand (``hand``, place phases) and for the discard top (``disc``, the card the
player could take), each for slot ``i = 1..10`` (placing ``c`` in slot ``i``):

=====================  ====  =================================================================
block                  cols  meaning
=====================  ====  =================================================================
``hand_lis_gain``      10    LIS(rack with c in slot i) − LIS(rack), / 10. LIS = longest
                             strictly increasing subsequence (the cards already "in order").
``hand_goes_out``      10    1 if the new rack is a Rack-O (R7: strictly increasing, and with
                             2 players a run of ``min_run_to_win`` consecutive numbers).
``hand_fit_gain``      10    |old − ideal_i| − |c − ideal_i|, / N: how much closer to its
                             bucket the slot gets (``ideal_i = (i − ½)·N/10``).
``disc_lis_gain``      10    as above for the discard top
``disc_goes_out``      10
``disc_fit_gain``      10
``rack``               4     LIS/10, longest run of consecutive numbers in adjacent slots /10,
                             increasing prefix from slot 1 (R8) /10, mean slot misfit /N
``hand_best``          2     max over slots of hand LIS gain; 1 if the hand card goes out
``disc_best``          2     the same for the discard top
=====================  ====  =================================================================

Rows where there is no such card (no card in hand in the choose phase, an empty discard
pile) are zero in that card's blocks.

Versions 2 (92 columns) and 3 (``FEATURES_VERSION = 3``, 94 columns) append the sequence
planner's view (``racko_env.planning.plan``, the DP behind ``racko:sequence`` and ``racko:lookahead``,
computed from the same observation) of the card the player decides about (the discard top
when choosing, the card in hand when placing). Version 2 has only ``plan_delta``,
``plan_keep`` and ``plan_action`` (then the action of ``racko:sequence``); version 3 has all
of these:

=====================  ====  =================================================================
``plan_delta``         10    (turns to go out with the card in slot i − turns keeping the rack)
                             / 20, clipped to [−1, 1]; −1 when that placement goes out
``plan_keep``          1     turns to go out keeping the rack / 50, clipped to [0, 1]
``plan_draw``          1     choose phase: expected turns to go out after a blind draw
                             (``plan.draw_outlook``) / 50, clipped to [0, 1]; else 0
``plan_take_gain``     1     choose phase with a discard top: (draw outlook − best placement
                             of the top) / 20, clipped to [−1, 1]; else 0
``plan_action``        13    one-hot of the action ``racko:lookahead`` plays (ties broken by
                             the lowest slot)
=====================  ====  =================================================================

The planner block lets a network start from the heuristic's play (behaviour cloning
reaches it exactly) and learn where to deviate. Changing a layout means a new
``FEATURES_VERSION``; a model records the version it was trained with, and
``SUPPORTED_VERSIONS`` lists those this code still computes.

Why it is not the shipped code itself: the package ships only the compiled pass
(``racko_env.planning.feature_kernels``, numba) that computes these columns from observation
rows; this is the plain-numpy formulation it is pinned to, bit for bit
(``tests/test_racko_feature_kernels.py``, ``tests/test_racko_plan_oracle.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from racko_env.tables import LONGEST_RUN, PREFIX_LEN, rack_codes
from tests.oracles.racko_plan import (
    DEFAULT_SEQUENCE_PARAMS,
    best_placement,
    draw_outlook,
    plan_choices,
    sequence_plan,
    take_by_outlook,
)

FEATURES_VERSION = 3
SUPPORTED_VERSIONS = (1, 2, 3)
NUM_FEATURES_V1 = 68
_V1_NAMES = tuple(
    [f"{card}_{kind}_{i}" for card in ("hand", "disc") for kind in ("lis_gain", "goes_out", "fit_gain") for i in range(1, 11)]
    + ["rack_lis", "rack_longest_run", "rack_prefix", "rack_misfit", "hand_best_lis_gain", "hand_best_goes_out",
       "disc_best_lis_gain", "disc_best_goes_out"]
)
_PLAN_NAMES = tuple([f"plan_delta_{i}" for i in range(1, 11)] + ["plan_keep", "plan_draw", "plan_take_gain"]
                    + [f"plan_action_{a}" for a in range(13)])
FEATURE_NAMES: tuple[str, ...] = _V1_NAMES + _PLAN_NAMES
NUM_FEATURES = len(FEATURE_NAMES)
assert len(_V1_NAMES) == NUM_FEATURES_V1 and NUM_FEATURES == 94
_V2_NAMES = _V1_NAMES + tuple(n for n in _PLAN_NAMES if n not in ("plan_draw", "plan_take_gain"))
_NAMES = {1: _V1_NAMES, 2: _V2_NAMES, 3: FEATURE_NAMES}


def _check_version(version: int) -> int:
    if version not in SUPPORTED_VERSIONS:
        raise ValueError(f"Rack-O derived features version {version!r} is not computed by this code "
                         f"(supported: {SUPPORTED_VERSIONS})")
    return int(version)


def num_features(core: Any = None, version: int = FEATURES_VERSION) -> int:
    return len(_NAMES[_check_version(version)])


def feature_names(version: int = FEATURES_VERSION) -> tuple[str, ...]:
    return _NAMES[_check_version(version)]


def lis_length(racks: np.ndarray) -> np.ndarray:
    """Longest strictly increasing subsequence of each row of ``racks (..., 10)`` (batched DP)."""
    r = np.asarray(racks, dtype=np.int16)
    shape = r.shape[:-1]
    r = r.reshape(-1, r.shape[-1])
    n = r.shape[1]
    L = np.ones(r.shape, dtype=np.int16)
    for j in range(1, n):  # over the 10 slots, never over games
        less = r[:, :j] < r[:, j : j + 1]
        L[:, j] = 1 + np.max(np.where(less, L[:, :j], 0), axis=1)
    return L.max(axis=1).reshape(shape)


def _placements(rack: np.ndarray, card: np.ndarray) -> np.ndarray:
    """``(B, 10, 10)``: for each slot i, the rack with ``card`` in slot i."""
    b = rack.shape[0]
    out = np.repeat(rack[:, None, :], 10, axis=1)
    idx = np.arange(10)
    out[:, idx, idx] = card[:, None]
    return out.reshape(b, 10, 10)


def derived_features(core: Any, obs: np.ndarray, version: int = FEATURES_VERSION) -> np.ndarray:
    """``(B, num_features(version))`` float32 derived features of Rack-O observations (see module doc)."""
    _check_version(version)
    v = core.obs_view(obs)
    rack = v["rack"].astype(np.int16)  # (B, 10)
    b = rack.shape[0]
    N = int(core.rules.deck_size)
    min_run = int(core.rules.min_run_to_win)
    ideal = (np.arange(10) + 0.5) * N / 10.0
    out = np.zeros((b, num_features(core, version)), dtype=np.float32)
    if b == 0:
        return out
    base_lis = lis_length(rack)
    base_codes = rack_codes(rack)
    misfit_old = np.abs(rack - ideal[None, :])  # (B, 10)
    for k, card in enumerate((v["hand"], v["discard_top"])):
        card = card.astype(np.int16)
        have = card > 0
        new = _placements(rack, card)  # (B, 10, 10)
        lis_gain = (lis_length(new) - base_lis[:, None]) / 10.0
        codes = rack_codes(new)
        goes_out = (PREFIX_LEN[codes] == 10) & (LONGEST_RUN[codes] >= min_run)
        fit_gain = (misfit_old - np.abs(card[:, None] - ideal[None, :])) / N
        o = 30 * k
        out[:, o : o + 10] = lis_gain * have[:, None]
        out[:, o + 10 : o + 20] = goes_out * have[:, None]
        out[:, o + 20 : o + 30] = fit_gain * have[:, None]
        out[:, 64 + 2 * k] = out[:, o : o + 10].max(axis=1)
        out[:, 65 + 2 * k] = out[:, o + 10 : o + 20].max(axis=1)
    out[:, 60] = base_lis / 10.0
    out[:, 61] = LONGEST_RUN[base_codes] / 10.0
    out[:, 62] = PREFIX_LEN[base_codes] / 10.0
    out[:, 63] = misfit_old.mean(axis=1) / N
    if version >= 2:
        _plan_block(core, v, out[:, NUM_FEATURES_V1:], outlook=version >= 3)
    return out


def _plan_block(core: Any, v: dict[str, np.ndarray], out: np.ndarray, outlook: bool) -> None:
    """Fill the planner columns (see the module doc) in place: version 3 with the draw outlook."""
    b = out.shape[0]
    cost, win = sequence_plan(v, core.rules)
    delta = np.clip((cost[:, 1:] - cost[:, :1]) / 20.0, -1.0, 1.0)
    out[:, :10] = np.where(win, -1.0, delta)
    out[:, 10] = np.clip(cost[:, 0] / 50.0, 0.0, 1.0)
    take, slot, drop = plan_choices(cost, win, DEFAULT_SEQUENCE_PARAMS["take_margin"])
    phase, top = v["phase"], v["discard_top"]
    take &= top > 0
    a0 = 11
    if outlook:
        a0 = 13
        rows = np.flatnonzero((phase == 0) & (top > 0))  # a take/draw choice: look one draw ahead
        if rows.size:
            look = draw_outlook({k: a[rows] for k, a in v.items()}, core.rules)
            take[rows] = take_by_outlook(cost[rows], win[rows], look)
            best_take = best_placement(cost[rows], win[rows])
            out[rows, 11] = np.clip(look / 50.0, 0.0, 1.0)
            out[rows, 12] = np.clip((look - best_take) / 20.0, -1.0, 1.0)
    action = np.where(phase == 0, np.where(take, 1, 0), np.where((phase == 2) & drop, 12, 2 + slot))
    out[np.arange(b), a0 + action] = 1.0


def feature_bounds(core: Any = None, version: int = FEATURES_VERSION) -> tuple[np.ndarray, np.ndarray]:
    """Low/high bounds of the columns (for the observation Box)."""
    low = np.full(num_features(core, version), -1.0, dtype=np.float32)
    high = np.full(num_features(core, version), 1.0, dtype=np.float32)
    return low, high


def shaping_potential(core: Any, obs: np.ndarray) -> np.ndarray:
    """``(B,)`` the rack's LIS / 10 (the shaping potential: progress towards Rack-O)."""
    return lis_length(core.obs_view(obs)["rack"]) / 10.0
