"""Derived Rack-O features for learning agents: what a strong player computes from its own cards.

:func:`derived_features` is a pure, batched function of a batch of *observations* (decoded
with ``core.obs_view``): it never sees the game state, so it uses exactly the player's own
information (RULES.md "Information"). A learner appends these columns to the core's
observation; an agent that loads a model trained with them recomputes them from its own
observation the same way.

Layout (``FEATURES_VERSION = 1``), ``num_features() = 68`` float32 columns, for the card
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
pile) are zero in that card's blocks. Changing this layout means bumping
``FEATURES_VERSION``: a model records the version it was trained with and refuses another.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from racko_env.core import LONGEST_RUN, PREFIX_LEN, rack_codes

FEATURES_VERSION = 1
NUM_FEATURES = 68
FEATURE_NAMES: tuple[str, ...] = tuple(
    [f"{card}_{kind}_{i}" for card in ("hand", "disc") for kind in ("lis_gain", "goes_out", "fit_gain") for i in range(1, 11)]
    + ["rack_lis", "rack_longest_run", "rack_prefix", "rack_misfit", "hand_best_lis_gain", "hand_best_goes_out",
       "disc_best_lis_gain", "disc_best_goes_out"]
)
assert len(FEATURE_NAMES) == NUM_FEATURES


def num_features(core: Any = None) -> int:
    return NUM_FEATURES


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


def derived_features(core: Any, obs: np.ndarray) -> np.ndarray:
    """``(B, 68)`` float32 derived features of a batch of Rack-O observations (see module doc)."""
    v = core.obs_view(obs)
    rack = v["rack"].astype(np.int16)  # (B, 10)
    b = rack.shape[0]
    N = int(core.rules.deck_size)
    min_run = int(core.rules.min_run_to_win)
    ideal = (np.arange(10) + 0.5) * N / 10.0
    out = np.zeros((b, NUM_FEATURES), dtype=np.float32)
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
    return out


def feature_bounds(core: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """Low/high bounds of the 68 columns (for the observation Box)."""
    low = np.full(NUM_FEATURES, -1.0, dtype=np.float32)
    high = np.full(NUM_FEATURES, 1.0, dtype=np.float32)
    return low, high


def shaping_potential(core: Any, obs: np.ndarray) -> np.ndarray:
    """``(B,)`` the rack's LIS / 10 (the shaping potential: progress towards Rack-O)."""
    return lis_length(core.obs_view(obs)["rack"]) / 10.0
