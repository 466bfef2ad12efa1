"""Rack lookup tables (R7, R8, R10), rules-independent and built at import.

A rack is summarised by its 9 adjacent differences ``d_i = slot_{i+2} - slot_{i+1}``, each
clipped to {0: d <= 0 (order breaks), 1: d == 1 (consecutive), 2: d >= 2}, as the base-3
number ``sum(c_i * 3**i)`` (:func:`rack_codes`). Every "increasing prefix / run" question
is then one table lookup.
"""

from __future__ import annotations

import numpy as np

__all__ = ["PREFIX_LEN", "LONGEST_RUN", "INCREASING", "rack_codes", "r8_points", "longest_run"]

_POW3 = (3 ** np.arange(9)).astype(np.int16)


def _rack_tables() -> tuple[np.ndarray, np.ndarray]:
    codes = np.arange(3**9)
    digits = (codes[:, None] // (3 ** np.arange(9))[None, :]) % 3  # (3^9, 9)
    up = digits > 0
    # R8: cards in increasing order counted from slot 1 (at least the first card).
    prefix = 1 + np.cumprod(up, axis=1).sum(axis=1)
    # R7/R10: longest run of consecutive numbers in adjacent slots, in cards.
    one = (digits == 1).astype(np.int64)
    run = np.zeros_like(one)
    cur = np.zeros(len(codes), dtype=np.int64)
    for i in range(9):  # over the 9 differences, at import
        cur = (cur + 1) * one[:, i]
        run[:, i] = cur
    longest = 1 + run.max(axis=1)
    return prefix.astype(np.int8), longest.astype(np.int8)


#: by rack code: R8 length of the increasing prefix from slot 1; R7/R10 longest run (cards)
PREFIX_LEN, LONGEST_RUN = _rack_tables()
#: by rack code: all 10 cards in increasing order (R7)
INCREASING = PREFIX_LEN == 10


def rack_codes(racks: np.ndarray) -> np.ndarray:
    """Base-3 code of racks ``(..., 10)`` (card values, positive) for the lookup tables."""
    d = np.diff(racks.astype(np.int16), axis=-1)
    return np.clip(d, 0, 2) @ _POW3.astype(np.int64)


def r8_points(rack: np.ndarray) -> np.ndarray:
    """R8 points of a player who did not go out: 5 × increasing prefix length."""
    return 5 * PREFIX_LEN[rack_codes(np.abs(np.asarray(rack)))].astype(np.int64)


def longest_run(rack: np.ndarray) -> np.ndarray:
    """R7/R10: the longest run of consecutive numbers in adjacent slots, in cards."""
    return LONGEST_RUN[rack_codes(np.abs(np.asarray(rack)))].astype(np.int64)
