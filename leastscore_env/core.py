"""The vectorised Least Score core (rules L1-L10 of ``/work/shared/RULES.md``).

One :class:`LeastScoreCore` plays ``B`` games at once; the state is a
:class:`LeastScoreState` of fixed-shape numpy arrays (first axis = game). Nothing loops
over games in Python: the games that need a rare transition (a round end, a new deal,
an L6 reshuffle) are handled together with fancy indexing on their indices. Work arrays
are laid out so that numpy's inner loops run over games (per-player arrays as (P, n),
hand bytes as 1-D strided views), since a 2-D op with a short inner axis pays numpy's
per-row overhead. In round episodes at B >= 64 each game's next deal is computed ahead,
many games at a time (a deal is a pure function of the game's stream position), and used
by ``reset_where`` if the game's stream is still at that position.

Representation (chosen for speed: the hot path works on one int64 word per game):

* a hand is one int64 *card word*: 8 bytes, byte ``i`` = the i-th card id of the hand in
  canonical order, ``PAD`` (52) after the last card (bytes 5..7 are always PAD);
* the floor and the pending discards are card words whose cards stay at the hand slots
  they were discarded from (``PAD`` elsewhere) plus a 5-bit mask of those slots;
* sets of cards (seen, dead pile, known cards, floor) are 52-bit masks in an int64.

The legality of every discard group (L5) is read from lookup tables built at import: the
5 sorted ranks of a hand (rank 13 = no card), packed 4 bits each, index a 2**20 table of
the 31-bit mask of legal subsets; the 5 suits (2 bits each) index a table of the
single-suited subsets (flush, and same-suit sequences with ``sequence_same_suit``). Each
seat's legal-discard mask is recomputed only when its hand changes (after its draw), and
the 38-bit mask of the player to move is kept in the state, so ``legal_action_mask`` is a
single ``unpackbits``.

Actions (``Discrete(38)``, two decisions per turn by the same player, L4):

====== ==========================================================================
0..30  discard phase: discard the hand cards whose bits are set in ``a + 1``
       (bit i = hand slot i, slots in canonical order)
31     discard phase: declare (L7)
32     draw phase: take the top card of the deck
33+j   draw phase: take the j-th card of the floor (floor in canonical order)
====== ==========================================================================
"""

from __future__ import annotations

import itertools
from bisect import bisect_left
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from deckgym.core import BatchState, StepResult, zero_sum_win_rewards, check_core_options
from deckgym.rng import make_keys, permutation_keys, random_below, shuffled
from leastscore_env.cards import NUM_CARDS, PAD, VALUE, card_str, parse_card
from leastscore_env.rules import LeastScoreRules

__all__ = [
    "LeastScoreCore", "LeastScoreState", "legal_discard_table", "hand_word_bits",
    "NUM_ACTIONS", "DECLARE", "DRAW_DECK", "TAKE_FLOOR", "ACTION_NAMES",
]

NUM_ACTIONS = 38
DECLARE = 31
DRAW_DECK = 32
TAKE_FLOOR = 33  # + j
HAND_MAX = 5
PAD_WORD = int.from_bytes(bytes([PAD] * 8), "little")  # a card word with no card
_I64 = np.int64


@dataclass
class LeastScoreState(BatchState):
    """The state of ``B`` Least Score games (``P`` seats). Every field has first axis ``B``.

    ============= ============= ============================================================
    field         shape, dtype  meaning
    ============= ============= ============================================================
    hands         (B,P) int64   each seat's hand as a card word: byte i = i-th card id in
                                canonical order, PAD (52) after the last card
    hand_bits     (B,P) int64   52-bit set of the cards of each hand (the same cards)
    legal         (B,P) int64   bit a set: discard action a is legal (L5) for that hand
    known         (B,P) int64   52-bit set of the cards each seat is publicly known to
                                hold (taken from the floor and not discarded since)
    floor         (B,) int64    card word of the floor of the player to move (the previous
                                player's discards, at the slots they left; PAD elsewhere)
    floor_sel     (B,) uint8    5-bit mask of the floor word's slots holding a card
    floor_bits    (B,) int64    52-bit set of the floor cards
    pending       (B,) int64    draw phase: card word of the mover's discards this turn
                                (the next player's floor)
    pending_sel   (B,) uint8    5-bit mask of its slots holding a card
    pending_bits  (B,) int64    52-bit set of those cards
    deck          (B,53) uint8  deck order: ``deck[top:52]`` are the face-down cards, top
                                first; column 52 is PAD
    top           (B,) uint8    index of the top card of the deck (52 = empty)
    seen          (B,) int64    52-bit set of every card that was face up this round
    dead          (B,) int64    52-bit set of the dead pile (L4, L6)
    scores        (B,P) int16   totals (L9); in round episodes the start totals plus the
                                finished round's points
    alive         (B,) int16    bit p set: seat p is still in the game (L9)
    cur           (B,) int8     the seat to act
    first         (B,) int8     the seat that started this round
    phase         (B,) int8     0 = discard/declare decision, 1 = draw decision
    turn          (B,) int16    completed turns (discard + draw) in this round (L7, L10)
    round         (B,) int16    rounds dealt in this episode (1 = first round)
    over          (B,) bool     the episode has ended (waiting for ``reset_where``)
    mask          (B,) int64    bit a set: action a is legal for the player to move
    rng_key       (B,) uint64   the game's random stream (:mod:`deckgym.rng`)
    rng_counter   (B,) uint64   draws made from that stream
    ============= ============= ============================================================
    """

    hands: np.ndarray
    hand_bits: np.ndarray
    legal: np.ndarray
    known: np.ndarray
    floor: np.ndarray
    floor_sel: np.ndarray
    floor_bits: np.ndarray
    pending: np.ndarray
    pending_sel: np.ndarray
    pending_bits: np.ndarray
    deck: np.ndarray
    top: np.ndarray
    seen: np.ndarray
    dead: np.ndarray
    scores: np.ndarray
    alive: np.ndarray
    cur: np.ndarray
    first: np.ndarray
    phase: np.ndarray
    turn: np.ndarray
    round: np.ndarray
    over: np.ndarray
    mask: np.ndarray
    rng_key: np.ndarray
    rng_counter: np.ndarray


# ---------------------------------------------------------------------------------------
# Lookup tables (built at import, vectorised over hand patterns)
# ---------------------------------------------------------------------------------------
_SUBSET_SLOTS = [[i for i in range(HAND_MAX) if (sel >> i) & 1] for sel in range(33)]
_SUBSET_SLOTS[32] = []  # row 32 = declare: no card moves


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
        pos = _SUBSET_SLOTS[sel]
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
        sv = suits[:, _SUBSET_SLOTS[sel]]
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


@lru_cache(maxsize=None)
def _dense_legal_tables(sequence_lengths: tuple[int, ...], same_suit: bool):
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
    return Ad, Bd, MONO.astype(_I64)


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


_PAIR = _build_pair_table()
# the same terms by the uint16 of the byte pair itself (little-endian), one int32 table
# per pair k = 0, 1, 2 of the word (256 KB each; the 53**2 pairs of card ids / PAD touch
# a few KB of each)
_u16 = np.arange(1 << 16)
_u16 = np.minimum(_u16 & 0xFF, PAD) + _NP * np.minimum(_u16 >> 8, PAD)
_PAIR0, _PAIR1, _PAIR2 = (np.ascontiguousarray(_PAIR[k * _NP * _NP + _u16]) for k in range(3))
for _t in (_PAIR0, _PAIR1, _PAIR2):
    _t.flags.writeable = False
del _u16

_B8 = [0xFF << (8 * i) for i in range(8)]


def _byte_mask(slots) -> int:
    m = 0
    for i in slots:
        m |= _B8[i]
    return m


def _build_discard_tables():
    """Per subset ``sel`` (0..32): masks to split a hand word into kept and discarded cards.

    The kept cards are compacted towards byte 0 by a 3-stage byte "compress" network
    (Hacker's Delight 7-4 on bytes: a kept byte moves down by the number of discarded
    bytes below it, 1, 2 then 4 bytes at a time, which never collides).
    """
    keep_m = np.zeros(33, dtype=_I64)
    stages = np.zeros((3, 33), dtype=_I64)
    pad_fill = np.zeros(33, dtype=_I64)
    disc_m = np.zeros(33, dtype=_I64)
    disc_pad = np.zeros(33, dtype=_I64)
    n_disc = np.zeros(33, dtype=np.uint8)
    for sel in range(33):
        d = _SUBSET_SLOTS[sel]
        kept = [i for i in range(HAND_MAX) if i not in d]
        keep_m[sel] = _byte_mask(kept)
        pos = {i: i for i in kept}
        shift = {i: sum(1 for j in d if j < i) for i in kept}
        for st, k in enumerate((1, 2, 4)):
            moving = [i for i in kept if shift[i] & k]
            stages[st, sel] = _byte_mask(pos[i] for i in moving)
            targets = {pos[i] - k for i in moving}
            staying = {pos[i] for i in kept if not shift[i] & k}
            assert not targets & staying, (sel, k)
            for i in moving:
                pos[i] -= k
        assert sorted(pos.values()) == list(range(len(kept)))
        pad_fill[sel] = PAD_WORD & ~_byte_mask(range(len(kept)))
        disc_m[sel] = _byte_mask(d)
        disc_pad[sel] = PAD_WORD & ~_byte_mask(d)
        n_disc[sel] = len(d)
    return keep_m, stages, pad_fill, disc_m, disc_pad, n_disc


_KEEP_M, _STAGES, _PAD_FILL, _DISC_M, _DISC_PAD, _N_DISC = _build_discard_tables()
_ST1, _ST2, _ST4 = _STAGES
# Floor: shift (in bits) of the j-th card of a floor word with slot mask fsel, at index
# (fsel << 3) | j; j = 7 (the "draw from deck" action) points at byte 5, always PAD.
_FLOOR_SHIFT = np.full(256, 40, dtype=_I64)
for _fs in range(32):
    for _j, _slot in enumerate(_SUBSET_SLOTS[_fs]):
        _FLOOR_SHIFT[(_fs << 3) | _j] = 8 * _slot
# 52-bit card sets of card words: two bytes at a time (PAD -> no bit).
_BIT = np.zeros(256, dtype=_I64)
_BIT[:NUM_CARDS] = np.int64(1) << np.arange(NUM_CARDS, dtype=_I64)
_BITS16 = (_BIT[np.arange(1 << 16) & 0xFF] | _BIT[np.arange(1 << 16) >> 8]).astype(_I64)
_MASK52 = (1 << NUM_CARDS) - 1
# Seats: tables over the alive bits.
_ALIVE_BOOL = ((np.arange(256)[:, None] >> np.arange(8)) & 1).astype(bool)  # (256, 8)
_NALIVE = _ALIVE_BOOL.sum(axis=1).astype(np.int16)
_NEXT = np.zeros(256 * 8, dtype=np.int8)  # at (alive << 3) | p: next seat in the game after p (to the left)
for _m in range(256):
    for _p in range(8):
        for _o in range(1, 9):
            _q = (_p + _o) % 8
            if (_m >> _q) & 1:
                _NEXT[(_m << 3) | _p] = _q
                break
# Draw-phase action word for a floor with slot mask fsel: deck (32) and floor cards 33.. .
_DRAW_WORD = np.array([(1 << DRAW_DECK) | (((1 << len(_SUBSET_SLOTS[f])) - 1) << TAKE_FLOOR) for f in range(32)], dtype=_I64)
_DECL_WORD = np.array([0, 1 << DECLARE], dtype=_I64)
# Per action (columns 0..37), the discard tables of its group sel = a + 1 (declare: 32, no
# card; draw actions: sel 0, nothing): keep, stage 1, 2, 4, PAD fill, discards, their PAD
_A_DISC = np.stack([t[np.minimum(np.arange(NUM_ACTIONS) + 1, 32) * (np.arange(NUM_ACTIONS) <= DECLARE)]
                    for t in (_KEEP_M, _ST1, _ST2, _ST4, _PAD_FILL, _DISC_M, _DISC_PAD)])
_A_PSEL = ((np.arange(NUM_ACTIONS) + 1) & 31).astype(np.uint8) * (np.arange(NUM_ACTIONS) < DECLARE)  # slot mask
# Per action (uint8): taken from the deck (0/1); added to ``top`` to index the deck (0 for
# the deck, 64 otherwise: past the PAD column); the floor card index j (7 = none: byte 5, PAD)
_A_DRAW = np.stack([
    (np.arange(NUM_ACTIONS) == DRAW_DECK),
    np.where(np.arange(NUM_ACTIONS) == DRAW_DECK, 0, 64),
    np.where(np.arange(NUM_ACTIONS) >= TAKE_FLOOR, np.arange(NUM_ACTIONS) - TAKE_FLOOR, 7),
]).astype(np.uint8)
_A_PSEL = _A_PSEL.astype(np.uint8)
for _t in (_A_DISC, _A_PSEL, _A_DRAW):
    _t.flags.writeable = False
_BYTE_BOOLS = ((np.arange(256)[:, None] >> np.arange(8)) & 1).astype(bool)  # byte -> its 8 bits
# Per hand slot in the observation: (rank + 1) / 13, (suit + 1) / 4, value / 10; PAD -> 0.
_SLOT3 = np.zeros((256, 3), dtype=np.float32)
_SLOT3[:NUM_CARDS, 0] = (np.arange(NUM_CARDS) // 4 + 1) / 13.0
_SLOT3[:NUM_CARDS, 1] = (np.arange(NUM_CARDS) % 4 + 1) / 4.0
_SLOT3[:NUM_CARDS, 2] = VALUE[:NUM_CARDS] / 10.0
# observe's hand slots as 4 groups of 4 floats, group g read from the byte pair g, g + 1 of
# the hand word (the uint16 at byte g, row lo + 256 hi, hi <= 52): group 0 = rank0 suit0
# value0 rank1, 1 = suit1 value1 rank2 suit2, 2 = value2 rank3 suit3 value3, 3 = rank4 suit4
# value4 (of the high byte) and a float overwritten later
_SLOTG_ROWS = 256 * (PAD + 1)
_SLOTG = np.zeros((4, _SLOTG_ROWS, 4), dtype=np.float32)
_lo, _hi = np.arange(_SLOTG_ROWS) & 0xFF, np.arange(_SLOTG_ROWS) >> 8
_SLOTG[0, :, :3], _SLOTG[0, :, 3] = _SLOT3[_lo], _SLOT3[_hi, 0]
_SLOTG[1, :, :2], _SLOTG[1, :, 2:] = _SLOT3[_lo, 1:], _SLOT3[_hi, :2]
_SLOTG[2, :, 0], _SLOTG[2, :, 1:] = _SLOT3[_lo, 2], _SLOT3[_hi]
_SLOTG[3, :, :3] = _SLOT3[_hi]
_SLOTG.flags.writeable = False
del _lo, _hi
_V16, _V8 = np.dtype((np.void, 16)), np.dtype((np.void, 8))  # 4 and 2 floats as one item
_OBS_CHUNK = 512  # games per chunk of observe's writes of the float32 rows (L2-sized)
_CARD_IDS = np.arange(NUM_CARDS)
_INT32_MAX = np.iinfo(np.int32).max
_VALUE256 = np.zeros(256, dtype=np.int32)
_VALUE256[: NUM_CARDS + 1] = VALUE
# sample_legal: the position of the k-th set bit of a byte at (byte << 3) | k; Lemire's
# rejection threshold (2**32 mod n) for n legal actions
_SELECT8 = np.zeros(256 * 8, dtype=_I64)
for _b in range(256):
    for _k, _i in enumerate(i for i in range(8) if _b >> i & 1):
        _SELECT8[(_b << 3) | _k] = _i
_LEMIRE_THR = np.array([(1 << 32) % n if n else 0 for n in range(65)], dtype=np.uint64)
_U = np.uint64
_L1, _H8 = _U(0x0101010101010101), _U(0x8080808080808080)
_MASK38 = _U((1 << NUM_ACTIONS) - 1)
# deckgym.rng's constants (its streams are reproduced bit for bit by _deal)
_GOLDEN, _MIX1, _MIX2 = _U(0x9E3779B97F4A7C15), _U(0xBF58476D1CE4E5B9), _U(0x94D049BB133111EB)
_J = np.arange(256, dtype=np.uint64) * _U(0xD1B54A32D192ED03)
_CARD_IDS53 = np.append(np.arange(NUM_CARDS, dtype=np.uint64), _U(0))  # (the 53rd word: the first player)
# L1 totals of byte pairs of a card word (PAD counts 0)
_VALUE2 = (_VALUE256[np.arange(1 << 16) & 0xFF] + _VALUE256[np.arange(1 << 16) >> 8]).astype(np.int32)
# a sorting network for 5 elements (comparator pairs, lower index gets the minimum)
_SORT5 = ((0, 3), (1, 4), (0, 2), (1, 3), (0, 1), (2, 4), (1, 2), (3, 4), (2, 3))


def _check_sort5() -> None:
    for bits in range(32):  # 0-1 principle
        v = [(bits >> i) & 1 for i in range(5)]
        for i, j in _SORT5:
            if v[i] > v[j]:
                v[i], v[j] = v[j], v[i]
        assert v == sorted(v)


_check_sort5()

# Python-int copies of the tables for the B = 1 fast path (``_step_one``, ``_observe_one``).
_KEEP_ML, _ST1L, _ST2L, _ST4L, _PAD_FILLL, _DISC_ML, _DISC_PADL = (
    t.tolist() for t in (_KEEP_M, _ST1, _ST2, _ST4, _PAD_FILL, _DISC_M, _DISC_PAD)
)
_FLOOR_SHIFTL = _FLOOR_SHIFT.tolist()
_NEXTL = _NEXT.tolist()
_NALIVEL = _NALIVE.tolist()
_DRAW_WORDL = _DRAW_WORD.tolist()
_DECL_BIT = 1 << DECLARE
_BITL = _BIT.tolist()
# the dense rank index and suit index of a sorted hand word, one term per byte position:
# _LEGAL_TERM[i][b] = C[i, rank(b)] | suit(b) << (14 + 2 i)   (PAD: rank 13, suit 0)
_LEGAL_TERM = [
    [int(_comb_table()[i][b >> 2 if b < NUM_CARDS else 13]) | ((b & 3 if b < NUM_CARDS else 0) << (14 + 2 * i)) for b in range(256)]
    for i in range(HAND_MAX)
]
_SLOT3L = [tuple(float(v) for v in row) for row in _SLOT3]  # float32 values, exact as Python floats
_BYTE_F32 = _BYTE_BOOLS.astype(np.float32)  # byte -> its 8 bits as floats


@lru_cache(maxsize=None)
def _dense_legal_lists(sequence_lengths: tuple[int, ...], same_suit: bool):
    """:func:`_dense_legal_tables` as Python lists (for the B = 1 path)."""
    return tuple(t.tolist() for t in _dense_legal_tables(sequence_lengths, same_suit))


@lru_cache(maxsize=None)
def _obs_flag_table(P: int) -> np.ndarray:
    """observe's alive (ego order), to_move (ego order), phase and can_declare fields, placed
    in the 4-float groups of the rest of an observation row that hold them (zeros for the
    other fields of those groups): (groups, rows, 4) float32, row
    ((seat * P + cur) << P | alive) << 2 | phase << 1 | ge (``ge``: completed turns >=
    players still in, L7)."""
    ego = (np.arange(P)[:, None] + np.arange(P)) % P
    t = np.zeros((P, P, 1 << P, 2, 2, 2 * P + 2), dtype=np.float32)
    alive = (np.arange(1 << P)[:, None] >> ego[:, None, :]) & 1  # (seat, alive, i)
    t[..., :P] = alive[:, None, :, None, None, :]
    t[..., P : 2 * P] = (ego[:, None, :] == np.arange(P)[None, :, None])[:, :, None, None, None, :]
    t[:, :, :, 1, :, 2 * P] = 1.0  # phase
    t[:, :, :, 0, 1, 2 * P + 1] = 1.0  # can_declare: discard phase and every player in has played
    t = t.reshape(-1, 2 * P + 2)
    t0 = 14 + 2 * P  # offset of alive in the rest of a row
    g0, g1 = t0 // 4, (t0 + 2 * P + 1) // 4
    q = np.zeros((len(t), 4 * (g1 - g0 + 1)), dtype=np.float32)
    q[:, t0 - 4 * g0 : t0 - 4 * g0 + 2 * P + 2] = t
    q = np.ascontiguousarray(q.reshape(len(t), g1 - g0 + 1, 4).transpose(1, 0, 2))
    q.flags.writeable = False
    return q


def _action_names() -> tuple[str, ...]:
    names = ["discard_" + "+".join(f"s{i}" for i in _SUBSET_SLOTS[a + 1]) for a in range(31)]
    names += ["declare", "draw_deck"] + [f"take_floor_{j}" for j in range(5)]
    return tuple(names)


ACTION_NAMES = _action_names()


def hand_word_bits(words: np.ndarray) -> np.ndarray:
    """52-bit card sets (int64) of card words (any shape)."""
    w = np.asarray(words, dtype=_I64)
    return _BITS16.take(w & 0xFFFF) | _BITS16.take((w >> 16) & 0xFFFF) | _BIT.take((w >> 32) & 0xFF)


def _bits52(words: np.ndarray) -> np.ndarray:
    """(N,) 52-bit sets -> (N, 52) bool."""
    w = np.ascontiguousarray(words, dtype=_I64)
    return np.unpackbits(w.view(np.uint8).reshape(-1, 8), axis=1, count=NUM_CARDS, bitorder="little").view(bool)


def _words_of(cards: np.ndarray) -> np.ndarray:
    """(..., k<=8) sorted card ids (PAD-filled) -> (...) card words."""
    c = np.asarray(cards)
    out = np.full(c.shape[:-1] + (8,), PAD, dtype=np.uint8)
    out[..., : c.shape[-1]] = c
    return out.view(_I64)[..., 0].copy()


def _mix_inplace(z: np.ndarray) -> None:
    """deckgym.rng's SplitMix64 finaliser, in place (uint64)."""
    t = z >> _U(30)
    z ^= t
    z *= _MIX1
    np.right_shift(z, _U(27), out=t)
    z ^= t
    z *= _MIX2
    np.right_shift(z, _U(31), out=t)
    z ^= t


def _lemire_fix(m: np.ndarray, n: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Lemire's rejection step for ``m = r * n`` (r: uint32 draws): rows whose low 32 bits
    fall below ``2**32 mod n`` draw again (as :func:`_uniform_below`)."""
    bad = (m & _U(0xFFFFFFFF)) < _LEMIRE_THR.take(n)
    while bad.any():
        ix = np.flatnonzero(bad)
        m[ix] = rng.integers(0, 1 << 32, size=ix.size, dtype=np.uint32).astype(np.uint64) * n[ix]
        bad[ix] = (m[ix] & _U(0xFFFFFFFF)) < _LEMIRE_THR.take(n[ix])
    return m


def _uniform_below(n: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """(B,) uint64 exactly uniform in ``[0, n)`` (0 where n = 0) for uint64 ``n <= 64``: one
    uint32 per row, Lemire's multiply with rejection (probability < n / 2**32 per row)."""
    m = rng.integers(0, 1 << 32, size=n.shape[0], dtype=np.uint32).astype(np.uint64) * n
    bad = (m & _U(0xFFFFFFFF)) < _LEMIRE_THR.take(n)
    while bad.any():
        ix = np.flatnonzero(bad)
        m[ix] = rng.integers(0, 1 << 32, size=ix.size, dtype=np.uint32).astype(np.uint64) * n[ix]
        bad[ix] = (m[ix] & _U(0xFFFFFFFF)) < _LEMIRE_THR.take(n[ix])
    return m >> _U(32)


_DEAL_CACHE_MIN_B = 64  # smallest batch that computes its next deals ahead


class _DealCache:
    """The next new-episode deal of each game of a batch (see ``_new_episodes``)."""

    def __init__(self, B: int, P: int) -> None:
        self.ok = np.zeros(B, dtype=bool)
        self.key = np.zeros(B, dtype=np.uint64)
        self.ctr = np.zeros(B, dtype=np.uint64)  # the stream position it was computed for
        self.nctr = np.zeros(B, dtype=np.uint64)  # the position after it
        self.first = np.zeros(B, dtype=np.int8)
        self.deck = np.zeros((B, NUM_CARDS + 1), dtype=np.uint8)
        self.hands = np.zeros(B * P, dtype=_I64)
        self.hbits = np.zeros(B * P, dtype=_I64)
        self.legal = np.zeros(B * P, dtype=_I64)
        self.up = np.zeros(B, dtype=_I64)
        self.top = np.zeros(B, dtype=np.uint8)
        self.P = P

    def put(self, g, key, ctr, nctr, first, deck, hands, hbits, legal, up, top) -> None:
        fi = (g[:, None] * self.P + np.arange(self.P)).reshape(-1)
        self.key[g], self.ctr[g], self.nctr[g], self.first[g], self.deck[g] = key, ctr, nctr, first, deck
        self.hands[fi], self.hbits[fi], self.legal[fi] = hands, hbits, legal
        self.up[g], self.top[g] = up, top
        self.ok[g] = True

    def get(self, g):
        """The arguments of ``_write_deal`` after ``g``."""
        fi = (g[:, None] * self.P + np.arange(self.P)).reshape(-1)
        return (self.nctr.take(g), self.first.take(g), self.deck.take(g, axis=0), self.hands.take(fi),
                self.hbits.take(fi), self.legal.take(fi), self.up.take(g), self.top.take(g))


class LeastScoreCore:
    """Batched Least Score (see the module docstring and ``docs/CONTRACT.md``)."""

    num_actions = NUM_ACTIONS
    action_names = ACTION_NAMES
    phase_names = ("discard", "draw")
    obs_version = 1
    DEAL_KEYS = ("hands", "deck", "floor", "first_player", "scores")

    def __init__(self, rules: LeastScoreRules | None = None, episode: str = "round", reward: str = "win") -> None:
        rules = LeastScoreRules() if rules is None else rules
        if not isinstance(rules, LeastScoreRules):
            raise TypeError(f"rules must be a LeastScoreRules, got {type(rules).__name__}")
        check_core_options(episode, reward)
        self.rules = rules
        self.episode = episode
        self.reward = reward
        P = self.num_players = rules.num_players
        self._A, self._Bt, self._MONO = _dense_legal_tables(tuple(rules.sequence_lengths), bool(rules.sequence_same_suit))
        self._Al, self._Btl, self._MONOl = _dense_legal_lists(tuple(rules.sequence_lengths), bool(rules.sequence_same_suit))
        self._full_alive = (1 << P) - 1
        self._alive_bool = np.ascontiguousarray(_ALIVE_BOOL[:, :P])
        self._alive_weights = (1 << np.arange(P)).astype(np.int64)
        self._ego = (np.arange(P)[:, None] + np.arange(P)[None, :]) % P  # ego[e] = seats seen from e
        # L3 deal, per alive pattern: the deck positions dealt to each seat's 8 hand bytes
        # (52 = the PAD column), and the position of the card turned up
        hs = rules.hand_size
        self._deal_idx = np.full((1 << P, P * 8), NUM_CARDS, dtype=_I64)
        for alive in range(1 << P):
            k = 0
            for p in range(P):
                if (alive >> p) & 1:
                    self._deal_idx[alive, p * 8 : p * 8 + hs] = np.arange(k * hs, (k + 1) * hs)
                    k += 1
        self._deal_base = _NALIVE[: 1 << P].astype(_I64) * hs
        self._eye = np.eye(P, dtype=bool)
        self._arangeP = np.arange(P, dtype=_I64)
        self._arangeP_col = self._arangeP[:, None].copy()
        self._alive_bool_T = np.ascontiguousarray(self._alive_bool.T)  # (P, 256)
        # zero_sum_win_rewards as a table: at 2 k + w, the reward of a winner (w = 1) or a
        # loser (w = 0) in a row with k winners
        zs = np.zeros((P + 1, 2), dtype=np.float32)
        for k in range(P + 1):
            w = np.arange(P) < k
            rew = zero_sum_win_rewards(w[None])[0]
            zs[k, 1] = rew[0] if k else 0.0
            zs[k, 0] = rew[-1] if k < P else 0.0
        self._zero_sum = zs.reshape(-1)
        self._cache: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self._obs_cache: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._deal_cache: dict[int, _DealCache] = {}
        # Observation layout (documented in env.py): K 52-card blocks, then the rest.
        K = self._nblocks = 5 + (P - 1)
        self.obs_layout: dict[str, tuple[int, int]] = {}
        off = 0
        for name in ("hand_mask", "floor", "discard", "seen", "dead"):
            self.obs_layout[name] = (off, off + 52)
            off += 52
        self.obs_layout["opp_known"] = (off, off + 52 * (P - 1))
        off = 52 * K
        for name, n in [
            ("hand_slots", 5 * 3),
            ("opp_hand_size", P - 1),
            ("scores", P),
            ("alive", P),
            ("to_move", P),
            ("phase", 1),
            ("can_declare", 1),
            ("deck_size", 1),
            ("turn", 1),
        ]:
            self.obs_layout[name] = (off, off + n)
            off += n
        self.obs_size = off
        # B = 1 path: ego orders as lists, the per-entry scale of the non-card observation
        # part (float32, so raw * scale is bit-identical to the batched float32 products),
        # and a read-only result for the steps that report nothing.
        self._egol = self._ego.tolist()
        # the scaled observation entries as the batched path's float32 products, per value:
        # opponent hand size, score, deck position (top), turn
        self._obs_tables = (
            (np.arange(9, dtype=np.uint8) * np.float32(1.0 / rules.hand_size)).tolist(),
            (np.arange(rules.elimination_score + rules.penalty + 51, dtype=np.int16)
             * np.float32(1.0 / rules.elimination_score)).tolist(),
            ((NUM_CARDS - np.arange(NUM_CARDS + 1, dtype=np.uint8).astype(np.float32)) * np.float32(1.0 / NUM_CARDS)).tolist(),
            (np.arange(rules.max_turns + 1, dtype=np.int16) * np.float32(1.0 / rules.max_turns)).tolist(),
        )
        self._ego_alive = [[[float(m >> q & 1) for q in self._egol[e]] for m in range(256)] for e in range(P)]
        self._ego_tomove = [[[float(q == c) for q in self._egol[e]] for c in range(P)] for e in range(P)]
        # batched observe: rows of the seats seen from seat e (relative to e's row), one
        # table row of alive + to_move (ego order) per (seat, player to move, alive word),
        # the float32 tables of the scaled entries, void dtypes to copy k floats as one item
        self._ego_deltaT = np.ascontiguousarray((self._ego - np.arange(P)[:, None]).T, dtype=_I64)
        self._obs_flags = _obs_flag_table(P)
        self._obs_flags_g0 = (14 + 2 * P) // 4
        self._obs_deck = np.array(self._obs_tables[2], dtype=np.float32)
        # the K card blocks packed: word j of a game = OR of block k shifted left by sh
        # (right if negative) for (k, sh) in _obs_pack[j]
        nw = self._obs_nw = (52 * K + 63) // 64
        self._obs_pack = [[(k, 52 * k - 64 * j) for k in range(K) if -52 < 52 * k - 64 * j < 64] for j in range(nw)]
        self._mask_rows: dict[int, np.ndarray] = {}
        self._last_mask: tuple[np.ndarray, np.ndarray] | None = None  # (mask, its (B*64,) base)
        self._nothing = self._new_result(1)
        for arr in (self._nothing.rewards, self._nothing.terminated, self._nothing.truncated, self._nothing.round_over,
                    self._nothing.round_points, self._nothing.total_points, self._nothing.winners,
                    *self._nothing.extra.values()):
            arr.flags.writeable = False
        self._o_slots = self.obs_layout["hand_slots"][0]
        self._o_rest = self.obs_layout["opp_hand_size"][0]
        # Tight bounds: all in [0, 1] except the scores (a total may pass the threshold on
        # the round that eliminates: at most elimination_score - 1 + penalty + 50).
        self.obs_low = np.zeros(self.obs_size, dtype=np.float32)
        self.obs_high = np.ones(self.obs_size, dtype=np.float32)
        a, b = self.obs_layout["scores"]
        self.obs_high[a:b] = (rules.elimination_score - 1 + rules.penalty + 50) / rules.elimination_score

    # ------------------------------------------------------------------ helpers
    def _bases(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(arange(n), arange(n) * P, arange(n) * 53), cached per batch size."""
        c = self._cache.get(n)
        if c is None:
            ar = np.arange(n, dtype=_I64)
            c = self._cache[n] = (ar, ar * self.num_players, ar * (NUM_CARDS + 1))
        return c

    def _flat_rows(self, g: np.ndarray) -> np.ndarray:
        """The rows of games ``g`` in a flattened (B, P) array: ``(len(g) * P,)`` intp."""
        fi = g[:, None] * self.num_players
        fi = fi + self._arangeP
        return fi.reshape(-1)

    def _flat_rows_T(self, g: np.ndarray) -> np.ndarray:
        """The rows of games ``g`` in a flattened (B, P) array, as (P, len(g)) intp."""
        fi = g * self.num_players
        return fi + self._arangeP_col

    def _legal_of(self, w: np.ndarray) -> np.ndarray:
        """L5: the legal-discard bits (int64) of sorted hand words ``w`` (any shape).

        One lookup per byte pair (uint16 at byte 0, 2, 4) gives its terms of the dense rank
        index and of the suit index (see :func:`_build_pair_table`); then
        ``A[ri] | (Bt[ri] & MONO[si])``."""
        w = np.ascontiguousarray(w, dtype=_I64)
        u = w.reshape(-1).view(np.uint16)
        ri = _PAIR0.take(u[0::4])
        ri += _PAIR1.take(u[1::4])
        ri += _PAIR2.take(u[2::4])  # dense | si << 14
        si = ri >> 14
        ri &= 0x3FFF
        ri = ri.astype(np.intp)  # (index arrays of the native type: no conversion per take)
        out = self._A.take(ri)
        t = self._Bt.take(ri)
        t &= self._MONO.take(si)
        out |= t
        return out.reshape(w.shape)

    def _empty(self, B: int) -> LeastScoreState:
        P = self.num_players
        return LeastScoreState(
            hands=np.full((B, P), PAD_WORD, dtype=_I64),
            hand_bits=np.zeros((B, P), dtype=_I64),
            legal=np.zeros((B, P), dtype=_I64),
            known=np.zeros((B, P), dtype=_I64),
            floor=np.full(B, PAD_WORD, dtype=_I64),
            floor_sel=np.zeros(B, dtype=np.uint8),
            floor_bits=np.zeros(B, dtype=_I64),
            pending=np.full(B, PAD_WORD, dtype=_I64),
            pending_sel=np.zeros(B, dtype=np.uint8),
            pending_bits=np.zeros(B, dtype=_I64),
            deck=np.full((B, NUM_CARDS + 1), PAD, dtype=np.uint8),
            top=np.full(B, NUM_CARDS, dtype=np.uint8),
            seen=np.zeros(B, dtype=_I64),
            dead=np.zeros(B, dtype=_I64),
            scores=np.zeros((B, P), dtype=np.int16),
            alive=np.full(B, self._full_alive, dtype=np.int16),
            cur=np.zeros(B, dtype=np.int8),
            first=np.zeros(B, dtype=np.int8),
            phase=np.zeros(B, dtype=np.int8),
            turn=np.zeros(B, dtype=np.int16),
            round=np.zeros(B, dtype=np.int16),
            over=np.zeros(B, dtype=bool),
            mask=np.zeros(B, dtype=_I64),
            rng_key=np.zeros(B, dtype=np.uint64),
            rng_counter=np.zeros(B, dtype=np.uint64),
        )

    # ------------------------------------------------------------------ contract: setup
    def init(self, batch: int, seed: int, game_ids: np.ndarray | None = None) -> LeastScoreState:
        """``batch`` fresh games; game ``i`` uses the random stream ``(seed, game_ids[i])``."""
        if batch < 1:
            raise ValueError(f"batch must be >= 1, got {batch}")
        ids = np.arange(batch) if game_ids is None else np.asarray(game_ids)
        if ids.shape != (batch,):
            raise ValueError(f"game_ids must have shape ({batch},), got {ids.shape}")
        s = self._empty(batch)
        s.rng_key[:] = make_keys(seed, ids)
        self._new_episodes(s, np.arange(batch))
        return s

    def reset_where(self, state: LeastScoreState, mask: np.ndarray) -> None:
        """A fresh episode in place where ``mask`` (each game continues its own stream)."""
        g = np.flatnonzero(np.asarray(mask, dtype=bool))
        if g.size:
            self._new_episodes(state, g)

    def _new_episodes(self, s: LeastScoreState, g: np.ndarray) -> None:
        s.scores.reshape(-1)[self._flat_rows(g)] = 0
        s.alive[g] = self._full_alive
        s.round[g] = 0
        B = s.phase.shape[0]
        if self.episode != "round" or B < _DEAL_CACHE_MIN_B:
            self._deal(s, g, None)
            return
        # Round episodes: every episode starts with a new deal, a pure function of the
        # game's stream position (rng_key, rng_counter). The deals are computed ahead, many
        # games at a time, into a per-batch-size cache; a cached deal is used only if the
        # game's stream position is still the one it was computed for (else: dealt now).
        c = self._deal_cache.get(B)
        if c is None:
            if len(self._deal_cache) >= 4:
                self._deal_cache.clear()
            c = self._deal_cache[B] = _DealCache(B, self.num_players)
        hit = c.ok.take(g)
        hit &= c.key.take(g) == s.rng_key.take(g)
        hit &= c.ctr.take(g) == s.rng_counter.take(g)
        c.ok[g] = False
        if hit.all():
            self._write_deal(s, g, *c.get(g))
        else:
            self._deal(s, g[~hit], None)
            if hit.any():
                gh = g[hit]
                self._write_deal(s, gh, *c.get(gh))
        stale = np.flatnonzero(~c.ok)
        if stale.size >= max(B // 4, _DEAL_CACHE_MIN_B):
            # the next deal of these games (at their current stream position)
            key, ctr = s.rng_key.take(stale), s.rng_counter.take(stale)
            c.put(stale, key, ctr, *self._deal_compute(key, ctr.copy(), self.rules.first_player == "random", None))

    def _deal(self, s: LeastScoreState, g: np.ndarray, first: np.ndarray | None) -> None:
        """L3: shuffle, deal hand_size cards to every seat still in the game, turn one up.

        ``first``: the seat to start each game ``g``, or None for new episodes (L3: drawn
        from the game's stream, or seat 0, as ``rules.first_player``)."""
        alive = s.alive.take(g)
        draw_first = first is None and self.rules.first_player == "random"
        deal = self._deal_compute(s.rng_key.take(g), s.rng_counter.take(g), draw_first,
                                  None if alive.min() == self._full_alive else alive)
        if first is not None:
            deal = (deal[0], first.astype(np.int8), *deal[2:])
        self._write_deal(s, g, *deal)

    def _deal_compute(self, key: np.ndarray, ctr: np.ndarray, draw_first: bool, alive: np.ndarray | None):
        """The random part of L3 for games with streams ``(key, ctr)`` (``ctr`` is advanced in
        place) and ``alive`` words (None: everybody in): ``(ctr, first (int8, seat 0 unless
        draw_first), deck (n, 53) uint8, hands, hand bits, legal (n * P,) int64, the card
        turned up (n,) int64, top)``. Arrays are laid out so that numpy's inner loops run
        over the games."""
        n, P = key.size, self.num_players
        # deckgym.rng on each game's stream: random_below(P) for the first player (one draw),
        # then permutation_keys(52) (the next draw); both draws mixed together, one row of
        # 53 words per game (the 52 keys, then the first player's word)
        z = np.empty((2 if draw_first else 1, n), dtype=np.uint64)
        np.multiply(ctr, _GOLDEN, out=z[0])
        if draw_first:
            np.add(z[0], _GOLDEN, out=z[1])
        z ^= key
        _mix_inplace(z)
        y = np.empty((n, NUM_CARDS + 1), dtype=np.uint64)
        np.add(z[-1][:, None], _J[:NUM_CARDS], out=y[:, :NUM_CARDS])
        if draw_first:
            np.add(z[0], _J[0], out=y[:, NUM_CARDS])
        else:
            y[:, NUM_CARDS] = 0
        yf = y.reshape(-1)
        _mix_inplace(yf)
        if draw_first:
            first = y[:, NUM_CARDS] >> _U(40)
            first *= _U(P)
            first >>= _U(24)
            first = first.astype(np.int8)
        else:
            first = np.zeros(n, dtype=np.int8)
        ctr += _U(z.shape[0])
        # deckgym.rng.shuffled's permutation argsort(keys >> 1), by one sort of the keys
        # carrying the card id in their low 6 bits (the same unless two keys agree on their
        # top 57 bits)
        yf >>= _U(7)
        yf <<= _U(6)
        y |= _CARD_IDS53
        y[:, :NUM_CARDS].sort(axis=1)
        deck = np.empty((n, NUM_CARDS + 1), dtype=np.uint8)
        np.bitwise_and(yf, _U(63), out=deck.reshape(-1), casting="unsafe")
        deck[:, NUM_CARDS] = PAD
        # the seats in the game take consecutive cards (PAD for the others and past
        # hand_size), each hand sorted by a sorting network on its 5 card bytes
        if alive is None:
            hb = deck.take(self._deal_idx[self._full_alive], axis=1)
            base = self._deal_base[self._full_alive]
            up = deck[:, base].astype(_I64)  # L3: the top card is turned up: the first floor
        else:
            hb = deck[np.arange(n)[:, None], self._deal_idx[alive]]
            base = self._deal_base.take(alive)
            up = deck[np.arange(n), base].astype(_I64)
        hb = hb.reshape(n * P, 8)
        cols = [hb[:, i] for i in range(HAND_MAX)]
        for i, j in _SORT5:
            lo = np.minimum(cols[i], cols[j])
            np.maximum(cols[i], cols[j], out=cols[j])
            cols[i][...] = lo
        hands = hb.view(_I64).reshape(-1)
        u16 = hb.view(np.uint16).reshape(-1)
        hbits = _BITS16.take(u16[0::4])
        hbits |= _BITS16.take(u16[1::4])
        hbits |= _BITS16.take(u16[2::4])
        return ctr, first, deck, hands, hbits, self._legal_of(hands), up, base + 1

    def _write_deal(self, s: LeastScoreState, g: np.ndarray, ctr, first, deck, hands, hbits, legal, up, top) -> None:
        """Writes a deal (:meth:`_deal_compute`) into the games ``g``."""
        s.rng_counter[g] = ctr
        s.deck[g] = deck
        fi = self._flat_rows(g)
        s.hands.reshape(-1)[fi] = hands
        s.hand_bits.reshape(-1)[fi] = hbits
        s.legal.reshape(-1)[fi] = legal
        s.known.reshape(-1)[fi] = 0
        upbit = _BIT.take(up)
        s.floor[g] = up | (PAD_WORD & ~0xFF)
        s.floor_sel[g] = 1
        s.floor_bits[g] = upbit
        s.pending[g] = PAD_WORD
        s.pending_sel[g] = 0
        s.pending_bits[g] = 0
        s.top[g] = top
        s.seen[g] = upbit
        s.dead[g] = 0
        s.cur[g] = first
        s.first[g] = first
        s.phase[g] = 0
        s.turn[g] = 0
        s.round[g] += 1
        s.over[g] = False
        s.mask[g] = legal.take(self._bases(s.phase.shape[0])[1][: g.size] + first)  # nobody may declare before everyone has played (L7)

    def deal(self, seed: int, options: dict) -> LeastScoreState:
        """One game (B = 1) from an explicit deal; ``ValueError`` naming any problem.

        ``options``: ``{"hands": [[card, ...], ...] (one list per seat, 1..hand_size cards),
        "deck": [top, ...], "floor": [card, ...], "first_player": k, "scores": [...]}``;
        all but ``hands`` optional. Unlisted cards are shuffled with ``seed`` beneath the
        listed deck cards; without ``floor`` the top deck card is turned up (L3).
        """
        r, P = self.rules, self.num_players
        if not isinstance(options, dict):
            raise ValueError(f"options must be a dict, got {type(options).__name__}")
        allowed = set(self.DEAL_KEYS)
        unknown = sorted(map(str, set(options) - allowed))
        if unknown:
            raise ValueError(f"unknown deal option(s) {unknown}; allowed: {sorted(allowed)}")
        if "hands" not in options:
            raise ValueError("deal options need 'hands' (one list of cards per player)")
        hands_in = options["hands"]
        if not isinstance(hands_in, (list, tuple)) or len(hands_in) != P:
            got = f"{len(hands_in)} hands" if isinstance(hands_in, (list, tuple)) else repr(hands_in)
            raise ValueError(f"'hands' must list {P} hands (one per player), got {got}")
        used: dict[int, str] = {}

        def take(cards, where: str) -> list[int]:
            if isinstance(cards, str) or not isinstance(cards, (list, tuple)):
                raise ValueError(f"{where} must be a list of cards, got {cards!r}")
            out = []
            for t in cards:
                try:
                    c = parse_card(t)
                except ValueError as e:
                    raise ValueError(f"{where}: {e}") from None
                if c in used:
                    raise ValueError(f"duplicate card {t!r} in {where} (already in {used[c]})")
                used[c] = where
                out.append(c)
            return out

        hands = []
        for p, h in enumerate(hands_in):
            cards = take(h, f"hands[{p}]")
            if not 1 <= len(cards) <= r.hand_size:
                raise ValueError(f"hands[{p}] must hold 1..{r.hand_size} cards (hand_size), got {len(cards)}")
            hands.append(sorted(cards))
        floor = None
        if "floor" in options:
            floor = take(options["floor"], "floor")
            if not 1 <= len(floor) <= HAND_MAX:
                raise ValueError(f"floor must hold 1..{HAND_MAX} cards, got {len(floor)}")
        deck_top = take(options.get("deck", []), "deck")
        first = options.get("first_player")
        if first is not None and (
            not isinstance(first, (int, np.integer)) or isinstance(first, bool) or not 0 <= first < P
        ):
            raise ValueError(f"first_player must be a seat in 0..{P - 1}, got {first!r}")
        scores = options.get("scores", [0] * P)
        if (
            not isinstance(scores, (list, tuple))
            or len(scores) != P
            or not all(
                isinstance(x, (int, np.integer)) and not isinstance(x, bool) and 0 <= x < r.elimination_score
                for x in scores
            )
        ):
            raise ValueError(f"scores must list {P} ints in 0..{r.elimination_score - 1}, got {scores!r}")
        if floor is None and len(used) == NUM_CARDS:
            raise ValueError("no card left to turn up as the floor (give 'floor' or leave cards in the deck)")
        s = self._empty(1)
        s.rng_key[:] = make_keys(int(seed), np.zeros(1, dtype=_I64))
        if first is None:
            first = int(random_below(s.rng_key, s.rng_counter, P)[0]) if r.first_player == "random" else 0
        rest = np.array([c for c in range(NUM_CARDS) if c not in used], dtype=_I64)
        order = shuffled(s.rng_key, s.rng_counter, NUM_CARDS)[0]
        rest = rest[np.argsort(order[: rest.size], kind="stable")]  # unlisted cards in random order
        deck = deck_top + rest.tolist()
        if floor is None:  # L3: the top card of the deck is turned up
            floor, deck = [deck[0]], deck[1:]
        floor = sorted(floor)
        s.hands[0] = [_words_of(np.array(h, dtype=np.uint8)) for h in hands]
        s.hand_bits[0] = hand_word_bits(s.hands[0])
        s.legal[0] = self._legal_of(s.hands[0])
        s.floor[0] = _words_of(np.array(floor, dtype=np.uint8))
        s.floor_sel[0] = (1 << len(floor)) - 1
        s.floor_bits[0] = hand_word_bits(s.floor[0])
        top = NUM_CARDS - len(deck)
        s.deck[0, top:NUM_CARDS] = deck
        s.top[0] = top
        s.seen[0] = s.floor_bits[0]
        s.scores[0] = scores
        s.cur[0] = s.first[0] = first
        s.round[0] = 1
        s.mask[0] = s.legal[0, first]
        return s

    # ------------------------------------------------------------------ contract: queries
    def current_player(self, state: LeastScoreState) -> np.ndarray:
        return state.cur.astype(_I64)

    def phase(self, state: LeastScoreState) -> np.ndarray:
        return state.phase.astype(_I64)

    def alive(self, state: LeastScoreState) -> np.ndarray:
        al = state.alive
        if al.shape[0] == 1:  # B = 1: a copy of one table row (a slice, no fancy indexing)
            k = int(al[0])
            return self._alive_bool[k : k + 1].copy()
        return self._alive_bool[al]

    def hand_cards(self, state: LeastScoreState) -> np.ndarray:
        """(B, P, 5) int64 card ids in canonical order, -1 = empty slot."""
        h = state.hands.view(np.uint8).reshape(state.hands.shape + (8,))[..., :HAND_MAX].astype(_I64)
        h[h == PAD] = -1
        return h

    def hand_totals(self, state: LeastScoreState) -> np.ndarray:
        """(B, P) L1 hand totals."""
        return _VALUE256[state.hands.view(np.uint8).reshape(state.hands.shape + (8,))].sum(axis=2)

    def can_declare(self, state: LeastScoreState) -> np.ndarray:
        """(B,) bool: L7 -- every player still in the game has played a turn this round."""
        return state.turn >= _NALIVE[state.alive]

    def legal_action_mask(self, state: LeastScoreState) -> np.ndarray:
        """(B, 38) bool: one unpack of the mask words (a view of a (B, 64) array)."""
        m = state.mask
        B = m.shape[0]
        if B == 1:  # a copy of the cached (1, 38) row of this mask word
            k = int(m[0])
            row = self._mask_rows.get(k)
            if row is None:
                if len(self._mask_rows) >= 4096:
                    self._mask_rows.clear()
                row = self._mask_rows[k] = _BYTE_BOOLS.take(m.view(np.uint8).reshape(1, 8)[:, :5], axis=0).reshape(1, 40)[:, :NUM_ACTIONS].copy()
            return row.copy()
        bits = np.unpackbits(np.ascontiguousarray(m, dtype=_I64).view(np.uint8), bitorder="little")
        mask = bits.view(bool).reshape(B, 64)[:, :NUM_ACTIONS]
        self._last_mask = (mask, bits)  # sample_legal packs such a mask back in one call
        return mask

    # ------------------------------------------------------------------ contract: step
    def _new_result(self, B: int) -> StepResult:
        """A zero StepResult for ``B`` games."""
        P = self.num_players
        buf = np.zeros(16 * B * P + (3 + P) * B, dtype=np.uint8)  # one allocation for the 8 result arrays
        ints = buf[: 12 * B * P].view(np.int32).reshape(3, B, P)
        flags = buf[16 * B * P :].view(bool)
        return StepResult(
            rewards=buf[12 * B * P : 16 * B * P].view(np.float32).reshape(B, P),
            terminated=flags[:B],
            truncated=flags[B : 2 * B],
            round_over=flags[2 * B : 3 * B],
            round_points=ints[0],
            total_points=ints[1],
            winners=flags[3 * B :].reshape(B, P),
            extra={"hand_total": ints[2]},
        )

    def sample_legal(self, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """A uniformly random legal action per row, exactly uniform: ``(B,)`` int64.

        ``mask``: ``(B, 38)`` bool (``legal_action_mask``); a row with no legal action gets 0.
        The rows are packed into 38-bit words (one ``packbits`` of the mask's (B, 64) base
        when it is the layout ``legal_action_mask`` makes; other masks are first copied to
        that layout), then one uint32 draw per row is mapped exactly onto ``[0, n)``
        (Lemire's multiply with rejection; n = number of legal actions) and the u-th set bit
        is selected from per-byte prefix counts (SWAR) and a table.
        """
        B = mask.shape[0]
        if B == 1:  # one game (a few calls): one exact draw among the legal actions
            legal = np.flatnonzero(mask[0])
            if not legal.size:
                return np.zeros(1, dtype=_I64)
            u = int(rng.integers(legal.size))
            return legal[u : u + 1].astype(_I64, copy=False)
        if B < 64:  # fewer calls than the word path below (the same draws and actions)
            c = np.add.accumulate(np.asarray(mask, dtype=bool).view(np.uint8), axis=1, dtype=np.uint8)
            u = _uniform_below(c[:, -1].astype(np.uint64), rng).astype(np.uint8)
            return (c > u[:, None]).argmax(axis=1).astype(_I64, copy=False)  # (no legal action: 0)
        last = self._last_mask
        if last is not None and last[0] is mask:
            bits = last[1]
        else:
            bits = np.zeros((B, 64), dtype=bool)
            bits[:, :NUM_ACTIONS] = mask
        w = np.packbits(bits.reshape(-1), bitorder="little").view(np.uint64)  # bit a = action a legal
        w &= _MASK38
        pre = np.bitwise_count(w.view(np.uint8)).view(np.uint64)  # set bits per byte
        pre *= _L1  # byte i: set bits in bytes 0..i
        n = pre >> _U(56)
        m = np.multiply(rng.integers(0, 1 << 32, size=B, dtype=np.uint32), n, dtype=np.uint64)
        if m.astype(np.uint32).min() < 64:  # Lemire's rejection (2**32 mod n < n <= 38): rare
            m = _lemire_fix(m, n, rng)
        u = m >> _U(32)
        t = u * _L1
        t |= _H8
        t -= pre  # high bit of byte i set: at most u set bits in bytes 0..i
        t &= _H8
        sh = np.bitwise_count(t).astype(np.uint64)  # the byte holding the u-th set bit
        sh <<= _U(3)
        k = pre << _U(8)
        k >>= sh
        k &= _U(0xFF)
        np.subtract(u, k, out=k)  # the u-th set bit is the k-th of its byte
        b = w >> sh
        b &= _U(0xFF)
        b <<= _U(3)
        b |= k
        out = _SELECT8.take(b)
        out += sh.view(_I64)
        if not n.all():
            out[n == 0] = 0
        return out

    def step(self, state: LeastScoreState, actions: np.ndarray) -> StepResult:
        s = state
        a = np.asarray(actions)
        B = a.shape[0]
        if B == 1 and s.phase.shape[0] == 1:
            return self._step_one(s, int(a.reshape(-1)[0]))
        res = self._new_result(B)
        nd = np.count_nonzero(s.phase)
        if nd == 0:
            self._discard(s, a, None, res)
        elif nd == B:
            self._draw(s, a, None, res)
        else:  # a batch whose games are in different phases
            ixw = np.flatnonzero(s.phase)
            ixd = np.flatnonzero(s.phase == 0)
            self._discard(s, a.take(ixd), ixd, res)
            self._draw(s, a.take(ixw), ixw, res)
        return res

    def _step_one(self, s: LeastScoreState, a: int) -> StepResult:
        """``step`` for a batch of one game (the AEC env) on Python ints: the same rules and
        the same state, result and random draws as ``_discard`` / ``_draw`` (tests compare
        the two step by step); the rare round end, deal and reshuffle use the batched code."""
        cur = int(s.cur[0])
        if not s.phase[0]:  # L4 first half: discard the group a + 1 (or declare, L7)
            w = int(s.hands[0, cur])
            sel = a + 1
            x = w & _KEEP_ML[sel]
            t = x & _ST1L[sel]
            x = (x ^ t) | (t >> 8)
            t = x & _ST2L[sel]
            x = (x ^ t) | (t >> 16)
            t = x & _ST4L[sel]
            x = (x ^ t) | (t >> 32)
            s.hands[0, cur] = x | _PAD_FILLL[sel]
            d = (w & _DISC_ML[sel]) | _DISC_PADL[sel]
            dm = 0
            for b in d.to_bytes(8, "little")[:HAND_MAX]:
                dm |= _BITL[b]
            if dm:
                ndm = ~dm
                s.hand_bits[0, cur] = int(s.hand_bits[0, cur]) & ndm
                s.known[0, cur] = int(s.known[0, cur]) & ndm
                s.seen[0] = int(s.seen[0]) | dm
            s.pending[0] = d
            s.pending_sel[0] = sel & 31
            s.pending_bits[0] = dm
            s.phase[0] = 1
            s.mask[0] = _DRAW_WORDL[int(s.floor_sel[0])]
            if a != DECLARE:
                return self._nothing
            res = self._new_result(1)
            self._end_rounds(s, self._bases(1)[0], True, res)
            return res
        # L4 second half: the top deck card or one floor card; the turn passes left
        top = int(s.top[0])
        if a == DRAW_DECK:
            if top >= NUM_CARDS:  # L6: the dead pile becomes the new deck
                self._reshuffle(s, self._bases(1)[0])
                top = int(s.top[0])
            c = int(s.deck[0, top])
            kb = 0
            s.top[0] = top + 1
        else:
            c = (int(s.floor[0]) >> _FLOOR_SHIFTL[(int(s.floor_sel[0]) << 3) | ((a - TAKE_FLOOR) & 7)]) & 0xFF
            kb = _BITL[c]  # a floor card taken is known to be in that hand
            s.known[0, cur] = int(s.known[0, cur]) | kb
        s.hand_bits[0, cur] = int(s.hand_bits[0, cur]) | _BITL[c]
        hb = int(s.hands[0, cur]).to_bytes(8, "little")
        k = bisect_left(hb, c)  # sorted insertion of c (the PAD bytes sort last)
        nb = hb[:k] + bytes((c,)) + hb[k:7]
        s.hands[0, cur] = int.from_bytes(nb, "little")
        LT = _LEGAL_TERM
        ix = LT[0][nb[0]] + LT[1][nb[1]] + LT[2][nb[2]] + LT[3][nb[3]] + LT[4][nb[4]]
        ri = ix & 0x3FFF
        legal = self._Al[ri] | (self._Btl[ri] & self._MONOl[ix >> 14])
        s.legal[0, cur] = legal
        s.dead[0] = int(s.dead[0]) | (int(s.floor_bits[0]) ^ kb)  # the untaken floor cards
        turn = int(s.turn[0]) + 1
        alive = int(s.alive[0])
        nxt = _NEXTL[(alive << 3) | cur]
        mask = legal if nxt == cur else int(s.legal[0, nxt])
        if turn >= _NALIVEL[alive]:  # L7
            mask |= _DECL_BIT
        s.floor[0] = s.pending[0]  # the discards are the next player's floor
        s.floor_sel[0] = s.pending_sel[0]
        s.floor_bits[0] = s.pending_bits[0]
        s.pending[0] = PAD_WORD
        s.pending_sel[0] = 0
        s.pending_bits[0] = 0
        s.turn[0] = turn
        s.cur[0] = nxt
        s.phase[0] = 0
        s.mask[0] = mask
        if turn < self.rules.max_turns:
            return self._nothing
        res = self._new_result(1)  # L10
        self._end_rounds(s, self._bases(1)[0], False, res)
        return res

    def _discard(self, s: LeastScoreState, a: np.ndarray, ix: np.ndarray | None, res: StepResult) -> None:
        """L4 first half for the games ``ix`` (None: all): discard the group ``a + 1`` (or
        declare, a == 31, L7)."""
        _, arP, _ = self._bases(s.phase.shape[0])
        if ix is None:
            rows = arP + s.cur
            fs = s.floor_sel
        else:
            rows = arP.take(ix)
            rows += s.cur.take(ix)
            fs = s.floor_sel.take(ix)
        T = _A_DISC.take(a, axis=1)  # (7, n): the tables of each game's group
        hands, known, hbits = s.hands.reshape(-1), s.known.reshape(-1), s.hand_bits.reshape(-1)
        w = hands.take(rows)
        # kept cards: clear the discarded bytes, compact them down, refill with PAD
        x = w & T[0]
        t = x & T[1]
        x ^= t
        t >>= 8
        x |= t
        np.bitwise_and(x, T[2], out=t)
        x ^= t
        t >>= 16
        x |= t
        np.bitwise_and(x, T[3], out=t)
        x ^= t
        t >>= 32
        x |= t
        x |= T[4]
        hands[rows] = x
        d = np.bitwise_and(w, T[5], out=w)  # the discards, at their slots
        d |= T[6]
        dm = _BITS16.take(np.ndarray((3, d.size), np.uint16, buffer=d, strides=(2, 8)))  # 52-bit sets of byte pairs
        dm[0] |= dm[1]
        dm = np.bitwise_or(dm[0], dm[2], out=dm[0])
        ndm = ~dm
        hb = hbits.take(rows)
        hb &= ndm
        hbits[rows] = hb
        kn = known.take(rows)
        kn &= ndm  # discarded cards are no longer known to be held
        known[rows] = kn
        if ix is None:
            s.seen |= dm  # discards are face up
            s.pending[:] = d
            np.take(_A_PSEL, a, out=s.pending_sel)
            s.pending_bits[:] = dm
            s.phase[:] = 1
            np.take(_DRAW_WORD, fs, out=s.mask)  # L4: the deck or any floor card
        else:
            seen = s.seen.take(ix)
            seen |= dm
            s.seen[ix] = seen
            s.pending[ix] = d
            s.pending_sel[ix] = _A_PSEL.take(a)
            s.pending_bits[ix] = dm
            s.phase[ix] = 1
            s.mask[ix] = _DRAW_WORD.take(fs)
        if a.max() >= DECLARE:
            decl = a == DECLARE
            if decl.any():
                self._end_rounds(s, (self._bases(s.phase.shape[0])[0] if ix is None else ix)[decl], True, res)

    def _draw(self, s: LeastScoreState, a: np.ndarray, ix: np.ndarray | None, res: StepResult) -> None:
        """L4 second half for the games ``ix`` (None: all): take the top deck card or one
        floor card; the turn passes left."""
        ar, arP, ar53 = self._bases(s.phase.shape[0])
        g = (lambda x: x) if ix is None else (lambda x: x.take(ix))
        T = _A_DRAW.take(a, axis=1)  # (3, n) uint8: from the deck, deck index offset, floor index
        top = g(s.top)
        te = top + T[1]  # the deck column of the card taken (> 52 if not from the deck)
        empty = te == NUM_CARDS
        if empty.any():  # L6: an empty deck; the dead pile becomes the new deck
            self._reshuffle(s, (ar if ix is None else ix)[empty])
            top = g(s.top)
            te = top + T[1]
        np.minimum(te, NUM_CARDS, out=te)
        di = g(ar53) + te  # (a new array: g may return the cached bases)
        fs = g(s.floor_sel) << 3
        fs |= T[2]
        sh = _FLOOR_SHIFT.take(fs)
        fc = g(s.floor) >> sh  # the floor card taken (PAD if none)
        fc &= 0xFF
        c = np.minimum(fc, s.deck.reshape(-1).take(di))  # the card taken
        cur = g(s.cur)
        rowsP = g(arP)
        rows = rowsP + cur
        hands, known, hbits = s.hands.reshape(-1), s.known.reshape(-1), s.hand_bits.reshape(-1)
        w = hands.take(rows)
        # sorted insertion of c into the hand word (SWAR): the bytes >= c move up one byte
        cK = c * 0x0101010101010101
        m = w | -0x7F7F7F7F7F7F7F80
        m -= cK
        m >>= 7
        m &= 0x0101010101010101
        m *= 0xFF  # the bytes >= c
        wm = w & m
        w ^= wm
        wm <<= 8
        w |= wm
        np.left_shift(m, 8, out=wm)
        m ^= wm  # the lowest of them: where c goes
        m &= cK
        w |= m
        hands[rows] = w
        hb = hbits.take(rows)
        hb |= _BIT.take(c)
        hbits[rows] = hb
        kb = _BIT.take(fc)  # a floor card taken is known to be in that hand
        kn = known.take(rows)
        kn |= kb
        known[rows] = kn
        legal = s.legal.reshape(-1)
        legal[rows] = self._legal_of(w)
        fb = g(s.floor_bits) ^ kb  # the untaken floor cards go to the dead pile
        fb |= g(s.dead)
        turn = g(s.turn) + 1
        alive = g(s.alive)
        nxt = _NEXT.take((alive << 3) | cur)
        mask = legal.take(np.add(rowsP, nxt, out=rows))
        mask |= _DECL_WORD.take(turn >= _NALIVE.take(alive))  # L7
        top += T[0]
        if ix is None:
            s.top[:] = top
            s.dead[:] = fb
            s.floor[:] = s.pending  # the discards are the next player's floor
            s.floor_sel[:] = s.pending_sel
            s.floor_bits[:] = s.pending_bits
            s.pending[:] = PAD_WORD
            s.pending_sel[:] = 0
            s.pending_bits[:] = 0
            s.turn[:] = turn
            s.cur[:] = nxt
            s.phase[:] = 0
            s.mask[:] = mask
        else:
            s.top[ix] = top
            s.dead[ix] = fb
            s.floor[ix] = s.pending.take(ix)
            s.floor_sel[ix] = s.pending_sel.take(ix)
            s.floor_bits[ix] = s.pending_bits.take(ix)
            s.pending[ix] = PAD_WORD
            s.pending_sel[ix] = 0
            s.pending_bits[ix] = 0
            s.turn[ix] = turn
            s.cur[ix] = nxt
            s.phase[ix] = 0
            s.mask[ix] = mask
        if turn.max() >= self.rules.max_turns:  # L10
            self._end_rounds(s, (ar if ix is None else ix)[turn >= self.rules.max_turns], False, res)

    def _reshuffle(self, s: LeastScoreState, g: np.ndarray) -> None:
        """L6: shuffle the dead pile into a new deck (cards elsewhere get the sentinel key)."""
        isdead = _bits52(s.dead[g])
        ctr = s.rng_counter[g]
        keys = permutation_keys(s.rng_key[g], ctr, NUM_CARDS)
        s.rng_counter[g] = ctr
        keys[~isdead] = np.uint64(0xFFFFFFFFFFFFFFFF)
        order = np.argsort(keys, axis=1, kind="stable")  # dead cards first, in random order
        n = isdead.sum(axis=1)
        s.deck[g, :NUM_CARDS] = order[:, ::-1]  # so the dead cards are deck[52 - n:52]
        s.top[g] = NUM_CARDS - n
        s.dead[g] = 0

    def _end_rounds(self, s: LeastScoreState, g: np.ndarray, declared: bool, res: StepResult) -> None:
        """L8 scoring (or the L10 cap), then L9 elimination / next deal / end of the episode.

        Per-player arrays are (P, n) (seat, game), so that numpy's loops run over games."""
        r, P = self.rules, self.num_players
        n = g.size
        fi = self._flat_rows_T(g)  # (P, n): the flat (B * P) rows
        u = s.hands.reshape(-1).take(fi).view(np.uint16)  # (P, 4 n)
        tot = _VALUE2.take(u[:, 0::4])  # L1 hand totals, by byte pairs
        tot += _VALUE2.take(u[:, 1::4])
        tot += _VALUE2.take(u[:, 2::4])
        alive = s.alive.take(g)
        everybody = alive.min() == self._full_alive  # (always, in round episodes)
        al = self._alive_bool_T.take(alive, axis=1)  # (P, n)
        if declared:  # L8
            cur = s.cur.take(g)
            is_cur = self._arangeP_col == cur
            d = np.where(is_cur, tot, 0).sum(axis=0, dtype=np.int32)
            m = np.where(is_cur if everybody else al ^ is_cur, _INT32_MAX if everybody else tot, tot if everybody else _INT32_MAX).min(axis=0)
            ok = d <= m if r.tie_wins else d < m
            pts = tot - d  # correct: every other player scores total - d (the declarer: 0)
            if not everybody:
                pts *= al
            m -= d
            np.subtract(r.penalty, m, out=m)
            pts = np.where(ok, pts, is_cur * m)  # false: penalty + (d - m), others 0
        else:  # L10: everybody scores 0
            pts = np.zeros((P, n), dtype=np.int32)
        scores = s.scores.reshape(-1).take(fi) + pts
        s.scores.reshape(-1)[fi] = scores.astype(np.int16)
        res.round_over[g] = True
        res.round_points.reshape(-1)[fi] = pts
        res.total_points.reshape(-1)[fi] = scores
        res.extra["hand_total"].reshape(-1)[fi] = tot
        if self.reward == "points":
            res.rewards.reshape(-1)[fi] = -pts  # lower points are better
        if self.episode == "round":
            if declared:  # round winners: fewest round points, ties share
                best = (pts if everybody else np.where(al, pts, _INT32_MAX)).min(axis=0)
                winners = pts == best
                if not everybody:
                    winners &= al
                res.terminated[g] = True
                rewards = self._zero_sum.take(winners.sum(axis=0) * 2 + winners) if self.reward == "win" else None
            else:
                winners = np.zeros((P, n), dtype=bool)
                res.truncated[g] = True
                rewards = 0.0
            self._finish(s, g, winners, res, rewards, fi)
            return
        al, scores = al.T, scores.T  # (n, P) for the rarer match paths
        if not declared and r.cap_ends_match:  # L10 in a match: the match is truncated
            res.truncated[g] = True
            # The players eliminated earlier were paid -1/(P-1) each when they left (below):
            # the players still in share that back, so a match's rewards always sum to 0
            # (everybody 0 if nobody was eliminated).
            nal = al.sum(axis=1, keepdims=True)
            self._finish(s, g, np.zeros((n, P), dtype=bool), res, np.where(al, (P - nal) / ((P - 1) * nal), 0.0))
            return
        # L9: elimination (total >= threshold), then the next round or the end of the match
        newly = al & (scores >= r.elimination_score)
        left = al & ~newly
        s.alive[g] = left @ self._alive_weights
        nleft = left.sum(axis=1)
        end = nleft <= 1
        winners = np.zeros((n, P), dtype=bool)
        if end.any():
            lowest = np.where(newly[end], scores[end], _INT32_MAX).min(axis=1)
            winners[end] = np.where(
                (nleft[end] == 1)[:, None], left[end], newly[end] & (scores[end] == lowest[:, None])
            )
        if self.reward == "win":
            # A player eliminated before the end leaves the game (the AEC env removes it), so
            # it is paid its loss now: -1/(P-1), a zero-sum loser's value with one winner. At
            # the match end each winner gets +1: a match sums to 0 with one winner (with k > 1
            # tied winners, L9's rare tie, to k - (P-k)/(P-1); see env.py).
            res.rewards[g] = np.where(winners, np.float32(1.0), np.where(newly, np.float32(-1.0 / (P - 1)), 0.0))
        if end.any():
            ge = g[end]
            res.terminated[ge] = True
            self._finish(s, ge, winners[end], res, None)
        go = ~end
        if go.any():
            gg = g[go]
            nxt = _NEXT[(s.alive[gg].astype(_I64) << 3) | s.first[gg]]  # the start passes left
            self._deal(s, gg, nxt.astype(_I64))

    def _finish(self, s: LeastScoreState, g: np.ndarray, winners: np.ndarray, res: StepResult, rewards, fi=None) -> None:
        """The episode ends for games ``g``; ``rewards`` (``"win"``) are paid unless None.
        ``winners`` and ``rewards``: (n, P), or (P, n) when ``fi`` (:meth:`_flat_rows_T`)
        is given."""
        if fi is None:
            fi = self._flat_rows(g).reshape(winners.shape)
        res.winners.reshape(-1)[fi] = winners
        if self.reward == "win" and rewards is not None:
            res.rewards.reshape(-1)[fi] = rewards
        s.over[g] = True
        s.mask[g] = 0

    # ------------------------------------------------------------------ observations
    def observe(self, state: LeastScoreState, seat, out: np.ndarray | None = None) -> np.ndarray:
        """(B, obs_size) float32, ego-centric for ``seat`` (int or (B,) array); layout in env.py.

        A new array, unless ``out`` (a ``(B, obs_size)`` float32 array) is given: then the
        observation is written into it and ``out`` is returned (saves the allocation).

        The K 52-card blocks are gathered as K 52-bit words per game, unpacked and cast to
        float32 straight into the rows of ``obs``; the other fields are built in a small
        ``(B, rest)`` float32 scratch (mostly from tables) and copied row by row as one
        ``void`` item, both in L2-sized chunks of games.
        """
        s, P, K = state, self.num_players, self._nblocks
        B = s.phase.shape[0]
        if B == 1 and out is None:
            return self._observe_one(s, seat if type(seat) is int else int(np.asarray(seat).reshape(-1)[0]))
        if out is None:
            obs = np.empty((B, self.obs_size), dtype=np.float32)
        else:
            if out.shape != (B, self.obs_size) or out.dtype != np.float32:
                raise ValueError(f"out must be a ({B}, {self.obs_size}) float32 array, got {out.shape} {out.dtype}")
            obs = out
        X, D, tmp, tailQ = self._obs_scratch(B)
        # (P, B) gathers of the seats seen from each game's seat (ego order), the seat's hand
        # word and the seat + player to move pair (a row of the alive/to_move table)
        if isinstance(seat, (int, np.integer)):
            e = int(seat)
            ego = self._ego[e]
            hbT = s.hand_bits.T.take(ego, axis=0)
            knT = s.known.T.take(ego[1:], axis=0)
            scT = s.scores.T.take(ego, axis=0)
            hw = s.hands[:, e].copy()
            key = s.cur.astype(np.intp)
            key += e * P
        else:
            seat = np.asarray(seat)
            rows = self._bases(B)[1] + seat
            flatT = self._ego_deltaT.take(seat, axis=1)
            flatT += rows
            hbT = s.hand_bits.reshape(-1).take(flatT)
            knT = s.known.reshape(-1).take(flatT[1:])
            scT = s.scores.reshape(-1).take(flatT)
            hw = s.hands.reshape(-1).take(rows)
            key = seat * P
            key += s.cur
        # the K card blocks (52-bit words: own hand, floor, discard, seen, dead, opp_known)
        # packed end to end into nW 64-bit words per game, so that one unpack gives each
        # game's 52 K card bits contiguously
        blocks = (hbT[0], s.floor_bits, s.pending_bits, s.seen, s.dead, *knT)
        for j, pieces in enumerate(self._obs_pack):
            dj = D[j]
            for i, (k, sh) in enumerate(pieces):
                o = dj if i == 0 else tmp
                if sh > 0:
                    np.left_shift(blocks[k], sh, out=o)
                elif sh < 0:
                    np.right_shift(blocks[k], -sh, out=o)
                else:
                    np.copyto(o, blocks[k])
                if i:
                    np.bitwise_or(dj, tmp, out=dj)
        np.positive(D, out=X.T)  # (a ufunc: its loops run over B)
        # The rest of a row (T floats, T even) in ``tailQ``, as (groups, B, 4): float t of
        # game b at tailQ[t // 4, b, t % 4], so that it is copied into the rows of ``obs``
        # 16 bytes at a time. Hand slots: the first 4 groups, one table row per byte pair of
        # the hand word (the 16th float is overwritten by the first opponent's hand size);
        # alive, to_move, phase, can_declare: the groups that hold them, one table row per
        # seat, player to move, alive word, phase and L7 test (written before the fields that
        # share those groups); opponents' hand sizes and scores (the float32 products); deck
        # size; turn.
        for g in range(4):
            np.take(_SLOTG[g], np.ndarray((B,), np.uint16, buffer=hw, offset=g, strides=(8,)), axis=0, out=tailQ[g], mode="clip")
        key <<= P
        key += s.alive
        key <<= 2
        key += s.phase << 1
        key += s.turn >= _NALIVE.take(s.alive)
        g0 = self._obs_flags_g0
        np.take(self._obs_flags, key, axis=1, out=tailQ[g0 : g0 + self._obs_flags.shape[0]], mode="clip")
        t = 15
        for c in np.bitwise_count(hbT[1:]):
            np.multiply(c, np.float32(1.0 / self.rules.hand_size), out=tailQ[t >> 2, :, t & 3])
            t += 1
        for c in scT:
            np.multiply(c, np.float32(1.0 / self.rules.elimination_score), out=tailQ[t >> 2, :, t & 3])
            t += 1
        t += 2 * P + 2
        tailQ[t >> 2, :, t & 3] = self._obs_deck.take(s.top)
        t += 1
        np.multiply(s.turn, np.float32(1.0 / self.rules.max_turns), out=tailQ[t >> 2, :, t & 3])
        n = 52 * K
        ng = (self.obs_size - n) >> 2  # whole groups; T % 4 == 2: a last pair of floats
        Xb = X.view(np.uint8)
        for i in range(0, B, _OBS_CHUNK):  # L2-sized chunks of games: cards, then the rest
            j = min(i + _OBS_CHUNK, B)
            bits = np.unpackbits(Xb[i:j].reshape(-1), bitorder="little").reshape(j - i, -1)
            np.copyto(obs[i:j, :n], bits[:, :n], casting="unsafe")
            np.copyto(obs[i:j, n : n + 4 * ng].view(_V16).T, tailQ[:ng, i:j].view(_V16)[:, :, 0])
            np.copyto(obs[i:j, n + 4 * ng :].view(_V8)[:, 0], tailQ[ng, i:j, :2].view(_V8)[:, 0])
        return obs

    def _observe_one(self, s: LeastScoreState, e: int) -> np.ndarray:
        """``observe`` for one game (the AEC env) from Python ints: the same float32 values
        as the batched path (the scaled entries are read from tables of the batched float32
        products, ``_obs_tables``), few numpy calls."""
        K = self._nblocks
        ego = self._egol[e]
        hb = s.hand_bits[0].tolist()
        kn = s.known[0].tolist()
        sc = s.scores[0].tolist()
        f_cnt, f_score, f_deck, f_turn = self._obs_tables
        words = [hb[e], int(s.floor_bits[0]), int(s.pending_bits[0]), int(s.seen[0]), int(s.dead[0])]
        raw = []
        for b in int(s.hands[0, e]).to_bytes(8, "little")[:HAND_MAX]:
            raw += _SLOT3L[b]
        for q in ego[1:]:
            words.append(kn[q])
            raw.append(f_cnt[hb[q].bit_count()])
        X = np.array(words, dtype=_I64)
        obs = np.empty((1, self.obs_size), dtype=np.float32)
        obs[0, : 52 * K].reshape(K, NUM_CARDS)[...] = _BYTE_F32.take(X.view(np.uint8), axis=0).reshape(K, 64)[:, :NUM_CARDS]
        if 0 <= min(sc) and max(sc) < len(f_score):
            raw += [f_score[sc[q]] for q in ego]
        else:  # outside the table (not reachable by play): the batched product
            raw += (s.scores[0].take(ego) * np.float32(1.0 / self.rules.elimination_score)).tolist()
        alive, cur, phase, turn = int(s.alive[0]), int(s.cur[0]), int(s.phase[0]), int(s.turn[0])
        raw += self._ego_alive[e][alive]
        raw += self._ego_tomove[e][cur]
        raw += [phase, phase == 0 and turn >= _NALIVEL[alive], f_deck[int(s.top[0])]]
        raw.append(f_turn[turn] if 0 <= turn < len(f_turn) else float(s.turn[0] * np.float32(1.0 / self.rules.max_turns)))
        obs[0, 52 * K :] = raw
        return obs

    def _obs_scratch(self, B: int):
        """observe's per-batch-size buffers (internal: never returned)."""
        c = self._obs_cache.get(B)
        if c is None:
            P, K = self.num_players, self._nblocks
            c = self._obs_cache[B] = (
                np.empty((B, self._obs_nw), dtype=_I64),  # the card blocks packed end to end
                np.empty((self._obs_nw, B), dtype=_I64),  # the same, transposed
                np.empty(B, dtype=_I64),
                np.empty(((self.obs_size - 52 * K + 3) // 4, B, 4), dtype=np.float32),  # the rest of a row, by groups of 4
            )
        return c

    def obs_view(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        """Named, decoded fields of a batch of observations ``(B, obs_size)`` (or one)."""
        obs = np.asarray(obs, dtype=np.float32)
        if obs.ndim == 1:
            obs = obs[None]
        B, P, L = obs.shape[0], self.num_players, self.obs_layout

        def f(name):
            a, b = L[name]
            return obs[:, a:b]

        def ids_of(onehot, n=5):
            key = np.where(onehot > 0.5, _CARD_IDS, 99)
            key.sort(axis=1)
            key = key[:, :n]
            return np.where(key == 99, -1, key).astype(_I64)

        slots = f("hand_slots").reshape(B, 5, 3)
        rank = np.rint(slots[:, :, 0] * 13).astype(_I64) - 1
        suit = np.rint(slots[:, :, 1] * 4).astype(_I64) - 1
        return {
            "hand": np.where(rank >= 0, rank * 4 + suit, -1),
            "hand_mask": f("hand_mask") > 0.5,
            "floor": ids_of(f("floor")),
            "discard": f("discard") > 0.5,
            "seen": f("seen") > 0.5,
            "dead": f("dead") > 0.5,
            "opp_known": f("opp_known").reshape(B, P - 1, 52) > 0.5,
            "opp_hand_size": np.rint(f("opp_hand_size") * self.rules.hand_size).astype(_I64),
            "scores": np.rint(f("scores") * self.rules.elimination_score).astype(_I64),
            "alive": f("alive") > 0.5,
            "to_move": f("to_move") > 0.5,
            "phase": np.rint(f("phase")[:, 0]).astype(_I64),
            "can_declare": f("can_declare")[:, 0] > 0.5,
            "deck_size": np.rint(f("deck_size")[:, 0] * NUM_CARDS).astype(_I64),
            "turn": np.rint(f("turn")[:, 0] * self.rules.max_turns).astype(_I64),
        }

    # ------------------------------------------------------------------ readable state
    def state_dict(self, state: LeastScoreState, b: int = 0) -> dict:
        """The full state of game ``b`` (hidden cards included): for critics and debugging."""
        s, P = state, self.num_players

        def cards(word) -> list[str]:
            return [card_str(c) for c in np.array([word], dtype=_I64).view(np.uint8) if c < NUM_CARDS]

        def cardset(bits) -> list[str]:
            v = int(bits)
            return [card_str(c) for c in range(NUM_CARDS) if v >> c & 1]

        return {
            "hands": [cards(s.hands[b, p]) for p in range(P)],
            "hand_totals": [int(x) for x in self.hand_totals(s.take(slice(b, b + 1)))[0]],
            "known": [cardset(s.known[b, p]) for p in range(P)],
            "floor": cards(s.floor[b]),
            "discard": cards(s.pending[b]),
            "deck": [card_str(c) for c in s.deck[b, int(s.top[b]) : NUM_CARDS]],
            "dead": cardset(s.dead[b]),
            "seen": cardset(s.seen[b]),
            "scores": [int(x) for x in s.scores[b]],
            "alive": [bool(x) for x in self._alive_bool[s.alive[b]]],
            "current_player": int(s.cur[b]),
            "first_player": int(s.first[b]),
            "phase": self.phase_names[int(s.phase[b])],
            "turn": int(s.turn[b]),
            "round": int(s.round[b]),
            "can_declare": bool(s.turn[b] >= _NALIVE[s.alive[b]]),
            "over": bool(s.over[b]),
            "legal_actions": [self.action_names[a] for a in range(NUM_ACTIONS) if int(s.mask[b]) >> a & 1],
            "rng_key": int(s.rng_key[b]),
            "rng_counter": int(s.rng_counter[b]),
        }
