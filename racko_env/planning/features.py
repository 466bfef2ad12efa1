"""Derived Rack-O features for learning agents: what a strong player computes from its own cards.

:func:`derived_features` is a pure, batched function of a batch of *observations* (each row
decoded as ``core.obs_view`` decodes it, in compiled code: ``racko_env.planning.feature_kernels``): it
never sees the game state, so it uses exactly the player's own information (docs/RULES.md
"Information"). A learner appends these columns to the core's observation; an agent that
loads a model trained with them recomputes them from its own observation the same way.

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
"""

from __future__ import annotations

from typing import Any

import numpy as np

from deckgym.core import obs_rows
from racko_env.planning.plan import DEFAULT_SEQUENCE_PARAMS, plan_costs, plan_with_outlook, bonus_active, sequence_plan

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
    """Longest strictly increasing subsequence of each row of ``racks (..., 10)`` (compiled, per row)."""
    from racko_env.planning.lis_kernel import lis_rows  # numba: loaded on first use, not at import

    r = np.asarray(racks, dtype=np.int16)
    shape = r.shape[:-1]
    r = np.ascontiguousarray(r.reshape(-1, r.shape[-1]))
    out = np.empty(r.shape[0], dtype=np.int16)
    if r.shape[1]:
        lis_rows(r, out)
    else:
        out[:] = 0
    return out.reshape(shape)


def derived_features(core: Any, obs: np.ndarray, version: int = FEATURES_VERSION) -> np.ndarray:
    """``(B, num_features(version))`` float32 derived features of Rack-O observations (see module doc).

    Straight from the observation rows, compiled (``racko_env.planning.feature_kernels``): one pass
    writes the version-1 block and gathers the planner's inputs, the planner's DP runs
    (``plan.plan_costs``), a second pass writes the planner block."""
    from racko_env.planning.feature_kernels import features_rows, layout  # numba: loaded on first use

    _check_version(version)
    obs = obs_rows(core, obs)
    b = obs.shape[0]
    out = np.zeros((b, num_features(core, version)), dtype=np.float32)
    if b == 0:
        return out
    p = DEFAULT_SEQUENCE_PARAMS
    samples = int(p["outlook_samples"]) if version >= 3 else 0
    inputs = features_rows(obs, layout(core), version >= 2, float(p["discard_weight"]), samples, out)
    if version >= 2:
        _plan_block(core, obs, inputs, out, outlook=version >= 3)
    return out


def _plan_block(core: Any, obs: np.ndarray, inputs: tuple[np.ndarray, ...], out: np.ndarray, outlook: bool) -> None:
    """Fill the planner columns (see the module doc) of ``out`` in place: version 3 with the draw outlook."""
    from racko_env.planning.feature_kernels import plan_columns

    rack, card, avail, vals, weight, win, look_rows, phase, top = inputs
    rules, p = core.rules, DEFAULT_SEQUENCE_PARAMS
    if bonus_active(rules):  # R10's bonus: the planner's own (slower) path
        v = core.obs_view(obs)
        if outlook:
            cost, win, look = plan_with_outlook(v, rules, look_rows)
        else:
            cost, win = sequence_plan(v, rules)
            look = np.zeros(rack.shape[0])
    elif outlook:
        cost, look = plan_costs(rack, card, avail, int(rules.min_run_to_win), p, vals, weight, look_rows)
    else:
        cost, look = plan_costs(rack, card, avail, int(rules.min_run_to_win), p)
    plan_columns(np.ascontiguousarray(cost), np.ascontiguousarray(win), look, look_rows, phase, top,
                 float(p["take_margin"]), outlook, out)


def feature_bounds(core: Any = None, version: int = FEATURES_VERSION) -> tuple[np.ndarray, np.ndarray]:
    """Low/high bounds of the columns (for the observation Box)."""
    low = np.full(num_features(core, version), -1.0, dtype=np.float32)
    high = np.full(num_features(core, version), 1.0, dtype=np.float32)
    return low, high


def shaping_potential(core: Any, obs: np.ndarray) -> np.ndarray:
    """``(B,)`` the rack's LIS / 10 (the shaping potential: progress towards Rack-O)."""
    return lis_length(core.obs_view(obs)["rack"]) / 10.0
