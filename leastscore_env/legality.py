"""Which discard groups are legal (L5), read from lookup tables built at import.

The 5 sorted ranks of a hand (rank 13 = no card), packed 4 bits each, index a 2**20 table
of the 31-bit mask of legal subsets; the 5 suits (2 bits each) index a table of the
single-suited subsets (flush, and same-suit sequences with ``sequence_same_suit``). The hot
path reads the rank tables by a dense index (8,568 sorted rank patterns, the combinatorial
number system) computed from the hand word's byte pairs (:func:`legal_of`); the B = 1 path
does the same sum on Python ints (:data:`RANK_SUIT_TERM_PY`).
"""

from __future__ import annotations

import itertools
from collections import namedtuple
from functools import lru_cache

import numpy as np

from leastscore_env.cards import NUM_CARDS, PAD
from leastscore_env.state import HAND_MAX, SUBSET_SLOTS

__all__ = ["LegalTables", "legal_discard_table", "dense_legal_tables", "dense_legal_lists", "legal_of", "RANK_SUIT_TERM_PY"]

_I64 = np.int64


def _sorted_rank_patterns() -> np.ndarray:
    """Every non-decreasing 5-tuple of ranks 0..13 (13 = no card): (8568, 5) int64."""
    return np.array(list(itertools.combinations_with_replacement(range(14), HAND_MAX)), dtype=np.int64)


@lru_cache(maxsize=None)
def legal_discard_table(sequence_lengths: tuple[int, ...] = (3, 5), same_suit: bool = False):
    """The L5 tables ``(A, Bt, MONO)`` (uint32) for the given sequence rules.

    For a hand whose sorted ranks ``r0..r4`` (13 = empty slot) give the 20-bit index
    ``ri = r0 | r1<<4 | r2<<8 | r3<<12 | r4<<16`` and whose suits give
    ``si = s0 | s1<<2 | ... | s4<<8``, the legal discard subsets (bit ``a`` = action ``a``
    = the subset ``a + 1`` of hand slots) are ``A[ri] | (Bt[ri] & MONO[si])``:

    * ``A``: singles, pairs, four of a kind, and (mixed-suit rules) sequences;
    * ``Bt``: subsets legal only if single-suited: the full hand (the flush) and, when
      ``same_suit``, the sequences;
    * ``MONO``: subsets whose cards all have one suit.
    """
    pats = _sorted_rank_patterns()
    nonseq = np.zeros(len(pats), dtype=np.uint32)
    seq = np.zeros(len(pats), dtype=np.uint32)
    for sel in range(1, 32):
        pos = SUBSET_SLOTS[sel]
        k = len(pos)
        r = pats[:, pos]
        bit = np.uint32(1 << (sel - 1))
        real = (r < 13).all(axis=1)
        if k == 1:  # L5 one card
            nonseq |= np.where(real, bit, 0).astype(np.uint32)
        elif k in (2, 4):  # L5 a pair (exactly 2 of a rank) or all 4 of a rank; never 3
            same = (r == r[:, :1]).all(axis=1)
            nonseq |= np.where(real & same, bit, 0).astype(np.uint32)
        if k in sequence_lengths:  # L5 sequences: ace low (A-2-3) or high (Q-K-A), no wrap
            low = (np.diff(r, axis=1) == 1).all(axis=1)
            high = (r[:, 0] == 0) & (r[:, 1:] == np.arange(14 - k, 13)).all(axis=1)
            seq |= np.where(real & (low | high), bit, 0).astype(np.uint32)
    full = np.where(pats[:, HAND_MAX - 1] < 13, np.uint32(1 << 30), 0).astype(np.uint32)
    idx = (pats << (4 * np.arange(HAND_MAX))).sum(axis=1)
    A = np.zeros(1 << 20, dtype=np.uint32)
    Bt = np.zeros(1 << 20, dtype=np.uint32)
    if same_suit:
        A[idx] = nonseq
        Bt[idx] = seq | full
    else:
        A[idx] = nonseq | seq
        Bt[idx] = full  # the flush (L5): five cards of one suit
    suits = np.array(list(itertools.product(range(4), repeat=HAND_MAX)), dtype=np.int64)
    mono = np.zeros(len(suits), dtype=np.uint32)
    for sel in range(1, 32):
        sv = suits[:, SUBSET_SLOTS[sel]]
        mono |= np.where((sv == sv[:, :1]).all(axis=1), np.uint32(1 << (sel - 1)), 0).astype(np.uint32)
    MONO = np.zeros(1 << 10, dtype=np.uint32)
    MONO[(suits << (2 * np.arange(HAND_MAX))).sum(axis=1)] = mono
    for t in (A, Bt, MONO):
        t.flags.writeable = False
    return A, Bt, MONO


legal_discard_table()  # the default tables are built at import


def _comb_table() -> np.ndarray:
    """``C[i, v] = comb(v + i, i + 1)``: the dense index of a sorted rank 5-tuple r (13 = no
    card) is ``sum_i C[i, r_i]`` (the combinatorial number system on ``r_i + i``): 0..8567."""
    from math import comb

    return np.array([[comb(v + i, i + 1) for v in range(14)] for i in range(HAND_MAX)], dtype=_I64)


#: The L5 tables of one rule set: by a hand's dense rank index, the legal-discard bits of the
#: groups legal whatever the suits (``A``) and of those that need one suit (``Bt``); by its
#: suit index, the bits of the groups whose cards share a suit (``MONO``). The legal bits are
#: ``A[ri] | (Bt[ri] & MONO[si])``.
LegalTables = namedtuple("LegalTables", "A Bt MONO")


@lru_cache(maxsize=None)
def dense_legal_tables(sequence_lengths: tuple[int, ...], same_suit: bool) -> LegalTables:
    """:func:`legal_discard_table`'s ``A`` and ``Bt`` re-indexed by the dense rank index
    (8568 entries instead of 2**20: they stay in cache), and ``MONO``; int64."""
    A, Bt, MONO = legal_discard_table(sequence_lengths, same_suit)
    pats = _sorted_rank_patterns()
    C = _comb_table()
    dense = sum(C[i][pats[:, i]] for i in range(HAND_MAX))
    assert sorted(dense.tolist()) == list(range(len(pats)))
    ri = (pats << (4 * np.arange(HAND_MAX))).sum(axis=1)
    Ad = np.zeros(len(pats), dtype=_I64)
    Bd = np.zeros(len(pats), dtype=_I64)
    Ad[dense], Bd[dense] = A[ri], Bt[ri]
    for t in (Ad, Bd):
        t.flags.writeable = False
    return LegalTables(Ad, Bd, MONO.astype(_I64))


_NP = NUM_CARDS + 1  # card ids and PAD


def _build_pair_table() -> np.ndarray:
    """``(3 * 53 * 53,)`` int32 (33 KB: stays in L1): byte pair k of a sorted hand word
    (bytes 2k, 2k+1) at ``k * 53**2 + b_2k + 53 * b_2k+1`` -> its two positions' terms of the
    dense rank index + ``(s_2k | s_2k+1 << 2) << (14 + 4k)``; summed over the 3 pairs:
    ``dense | si << 14`` (``si`` as in :func:`legal_discard_table`; byte 5 is always PAD)."""
    u = np.arange(_NP * _NP)
    lo, hi = u % _NP, u // _NP
    rank = lambda b: np.where(b < NUM_CARDS, b >> 2, 13)  # noqa: E731
    suit = lambda b: np.where(b < NUM_CARDS, b & 3, 0)  # noqa: E731
    C = _comb_table()
    tab = np.stack([
        C[2 * k][rank(lo)] + (C[2 * k + 1][rank(hi)] if k < 2 else 0) + ((suit(lo) | suit(hi) << 2) << (14 + 4 * k))
        for k in range(3)
    ]).astype(np.int32).reshape(-1)
    tab.flags.writeable = False
    return tab


PAIR_TERMS = _build_pair_table()
# the same terms by the uint16 of the byte pair itself (little-endian), one int32 table
# per pair k = 0, 1, 2 of the word (256 KB each; the 53**2 pairs of card ids / PAD touch
# a few KB of each)
_u16 = np.arange(1 << 16)
_u16 = np.minimum(_u16 & 0xFF, PAD) + _NP * np.minimum(_u16 >> 8, PAD)
PAIR_TERMS0, PAIR_TERMS1, PAIR_TERMS2 = (np.ascontiguousarray(PAIR_TERMS[k * _NP * _NP + _u16]) for k in range(3))
for _t in (PAIR_TERMS0, PAIR_TERMS1, PAIR_TERMS2):
    _t.flags.writeable = False
del _u16


#: the dense rank index and suit index of a sorted hand word, one term per byte position:
#: ``RANK_SUIT_TERM_PY[i][b] = C[i, rank(b)] | suit(b) << (14 + 2 i)`` (PAD: rank 13, suit 0)
RANK_SUIT_TERM_PY = [
    [int(_comb_table()[i][b >> 2 if b < NUM_CARDS else 13]) | ((b & 3 if b < NUM_CARDS else 0) << (14 + 2 * i)) for b in range(256)]
    for i in range(HAND_MAX)
]


@lru_cache(maxsize=None)
def dense_legal_lists(sequence_lengths: tuple[int, ...], same_suit: bool) -> LegalTables:
    """:func:`dense_legal_tables` as Python lists (for the B = 1 path)."""
    return LegalTables(*(t.tolist() for t in dense_legal_tables(sequence_lengths, same_suit)))


def legal_of(tables: tuple[np.ndarray, np.ndarray, np.ndarray], w: np.ndarray) -> np.ndarray:
    """L5: the legal-discard bits (int64) of sorted hand words ``w`` (any shape), with the
    :func:`dense_legal_tables` ``(A, Bt, MONO)`` of the rules.

    One lookup per byte pair (uint16 at byte 0, 2, 4) gives its terms of the dense rank
    index and of the suit index (see :func:`_build_pair_table`); then
    ``A[ri] | (Bt[ri] & MONO[si])``."""
    A, Bt, MONO = tables
    w = np.ascontiguousarray(w, dtype=_I64)
    u = w.reshape(-1).view(np.uint16)
    ri = PAIR_TERMS0.take(u[0::4])
    ri += PAIR_TERMS1.take(u[1::4])
    ri += PAIR_TERMS2.take(u[2::4])  # dense | si << 14
    si = ri >> 14
    ri &= 0x3FFF
    ri = ri.astype(np.intp)  # (index arrays of the native type: no conversion per take)
    out = A.take(ri)
    t = Bt.take(ri)
    t &= MONO.take(si)
    out |= t
    return out.reshape(w.shape)

