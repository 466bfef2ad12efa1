"""The tables every part of a Least Score core reads (:class:`CoreTables`): the legal-discard
tables of the rules (L5), the seat tables of the player count and the step's bases by batch
size. The core builds one and hands it to each of its parts."""

from __future__ import annotations

import numpy as np

from deckgym.core import SizeCache
from leastscore_env.cards import NUM_CARDS
from leastscore_env.legality import dense_legal_lists, dense_legal_tables, legal_of
from leastscore_env.rules import LeastScoreRules
from leastscore_env.tables import ALIVE_SEATS

_I64 = np.int64


class CoreTables:
    """Per-rules constants shared by the parts of a :class:`leastscore_env.core.LeastScoreCore`."""

    def __init__(self, rules: LeastScoreRules) -> None:
        P = self.num_players = rules.num_players
        self.legal_tables = dense_legal_tables(tuple(rules.sequence_lengths), bool(rules.sequence_same_suit))
        self.legal_lists = dense_legal_lists(tuple(rules.sequence_lengths), bool(rules.sequence_same_suit))
        self.full_alive = (1 << P) - 1  # the alive word with every seat in
        self.alive_bool = np.ascontiguousarray(ALIVE_SEATS[:, :P])  # (256, P): alive word -> seats in
        self.alive_bool_T = np.ascontiguousarray(self.alive_bool.T)  # (P, 256)
        self.alive_weights = (1 << np.arange(P)).astype(_I64)
        self.ego = (np.arange(P)[:, None] + np.arange(P)[None, :]) % P  # ego[e] = seats seen from e
        self.arange_p = np.arange(P, dtype=_I64)
        self.arange_p_col = self.arange_p[:, None].copy()
        #: the step's bases by batch size n: (arange(n), arange(n) * P, arange(n) * 53)
        self.bases = SizeCache(self._make_bases)

    def _make_bases(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        ar = np.arange(n, dtype=_I64)
        return ar, ar * self.num_players, ar * (NUM_CARDS + 1)

    def flat_rows(self, g: np.ndarray) -> np.ndarray:
        """The rows of games ``g`` in a flattened (B, P) array: ``(len(g) * P,)`` intp."""
        fi = g[:, None] * self.num_players
        fi = fi + self.arange_p
        return fi.reshape(-1)

    def flat_rows_T(self, g: np.ndarray) -> np.ndarray:
        """The rows of games ``g`` in a flattened (B, P) array, as (P, len(g)) intp."""
        fi = g * self.num_players
        return fi + self.arange_p_col

    def legal_of(self, w: np.ndarray) -> np.ndarray:
        """L5: the legal-discard bits (int64) of sorted hand words ``w`` (any shape)."""
        return legal_of(self.legal_tables, w)
