"""Least Score lookup tables on card words, seats and actions, built at import.

A card word holds a hand (or a floor) as 8 bytes of card ids (see :mod:`leastscore_env.state`).
The turn (L4) is a few whole-batch lookups in these tables; the tables ending in ``_PY`` are
the same values as Python lists for the B = 1 path of the AEC env (``_step_one``).
"""

from __future__ import annotations

import numpy as np

from leastscore_env.cards import NUM_CARDS, PAD, VALUE
from leastscore_env.state import DECLARE, DRAW_DECK, HAND_MAX, NUM_ACTIONS, PAD_WORD, SUBSET_SLOTS, TAKE_FLOOR

_I64 = np.int64
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
        d = SUBSET_SLOTS[sel]
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


# -- L4 discard: per discard group sel (0..32) ---------------------------------------------
#: KEEP_BYTES: byte mask of the kept cards; COMPRESS_STAGES: the bytes that move down 1, 2,
#: 4 bytes; KEPT_PAD_FILL: PAD in the bytes past the kept cards; DISCARD_BYTES: byte mask of
#: the discarded cards; DISCARD_PAD_FILL: PAD in every other byte; N_DISCARDED: card count
KEEP_BYTES, COMPRESS_STAGES, KEPT_PAD_FILL, DISCARD_BYTES, DISCARD_PAD_FILL, N_DISCARDED = _build_discard_tables()
COMPRESS_BY1, COMPRESS_BY2, COMPRESS_BY4 = COMPRESS_STAGES
#: by ``(fsel << 3) | j``: bit shift of the j-th card of a floor word with slot mask fsel
#: (j = 7, the "draw from deck" action, points at byte 5: always PAD)
FLOOR_CARD_SHIFT = np.full(256, 40, dtype=_I64)
for _fs in range(32):
    for _j, _slot in enumerate(SUBSET_SLOTS[_fs]):
        FLOOR_CARD_SHIFT[(_fs << 3) | _j] = 8 * _slot

# -- card sets -----------------------------------------------------------------------------
#: by card byte: its bit in a 52-bit card set (PAD and other bytes: 0)
CARD_BIT = np.zeros(256, dtype=_I64)
CARD_BIT[:NUM_CARDS] = np.int64(1) << np.arange(NUM_CARDS, dtype=_I64)
#: by the uint16 of two card bytes: the 52-bit set of both cards
PAIR_BITS = (CARD_BIT[np.arange(1 << 16) & 0xFF] | CARD_BIT[np.arange(1 << 16) >> 8]).astype(_I64)
#: by byte: its 8 bits as bools / as float32
BYTE_BITS = ((np.arange(256)[:, None] >> np.arange(8)) & 1).astype(bool)
BYTE_BITS_F32 = BYTE_BITS.astype(np.float32)

# -- seats (L9 eliminates; the turn passes left among the players still in) --------------
#: by alive word (bit p = seat p still in): the seats as bools (256, 8), and their number
ALIVE_SEATS = ((np.arange(256)[:, None] >> np.arange(8)) & 1).astype(bool)
N_ALIVE = ALIVE_SEATS.sum(axis=1).astype(np.int16)
#: by ``(alive << 3) | p``: the next seat in the game after p, to the left
NEXT_SEAT = np.zeros(256 * 8, dtype=np.int8)
for _m in range(256):
    for _p in range(8):
        for _o in range(1, 9):
            _q = (_p + _o) % 8
            if (_m >> _q) & 1:
                NEXT_SEAT[(_m << 3) | _p] = _q
                break

# -- action words and per-action tables ------------------------------------------------------
#: by floor slot mask fsel: the legal draw-phase actions (L4), the deck (32) and each floor card (33..)
DRAW_ACTIONS_WORD = np.array([(1 << DRAW_DECK) | (((1 << len(SUBSET_SLOTS[f])) - 1) << TAKE_FLOOR) for f in range(32)],
                             dtype=_I64)
#: by "may declare" (L7): the declare bit of the action word
DECLARE_WORD = np.array([0, 1 << DECLARE], dtype=_I64)
DECLARE_BIT = 1 << DECLARE
#: by action (columns 0..37): the discard tables of its group sel = a + 1 (declare: 32, no
#: card; draw actions: sel 0, nothing): keep, compress by 1, 2, 4, PAD fill, discards, their PAD
ACTION_DISCARD_TABLES = np.stack([
    t[np.minimum(np.arange(NUM_ACTIONS) + 1, 32) * (np.arange(NUM_ACTIONS) <= DECLARE)]
    for t in (KEEP_BYTES, COMPRESS_BY1, COMPRESS_BY2, COMPRESS_BY4, KEPT_PAD_FILL, DISCARD_BYTES, DISCARD_PAD_FILL)
])
#: by action: the hand-slot mask of the cards it discards (uint8)
ACTION_DISCARD_SLOTS = (((np.arange(NUM_ACTIONS) + 1) & 31).astype(np.uint8)
                        * (np.arange(NUM_ACTIONS) < DECLARE)).astype(np.uint8)
#: by action (uint8 rows): taken from the deck (0/1); added to ``top`` to index the deck (0
#: for the deck, 64 otherwise: past the PAD column); the floor card index j (7 = none)
ACTION_DRAW_TABLES = np.stack([
    (np.arange(NUM_ACTIONS) == DRAW_DECK),
    np.where(np.arange(NUM_ACTIONS) == DRAW_DECK, 0, 64),
    np.where(np.arange(NUM_ACTIONS) >= TAKE_FLOOR, np.arange(NUM_ACTIONS) - TAKE_FLOOR, 7),
]).astype(np.uint8)
for _t in (ACTION_DISCARD_TABLES, ACTION_DISCARD_SLOTS, ACTION_DRAW_TABLES):
    _t.flags.writeable = False

# -- values (L1) and sorting -------------------------------------------------------------------
INT32_MAX = np.iinfo(np.int32).max
#: by card byte: its L1 value (PAD and other bytes: 0)
BYTE_VALUE = np.zeros(256, dtype=np.int32)
BYTE_VALUE[: NUM_CARDS + 1] = VALUE
#: by the uint16 of two card bytes: their L1 total
PAIR_VALUE = (BYTE_VALUE[np.arange(1 << 16) & 0xFF] + BYTE_VALUE[np.arange(1 << 16) >> 8]).astype(np.int32)
#: a sorting network for 5 elements (comparator pairs, lower index gets the minimum)
SORT5_NETWORK = ((0, 3), (1, 4), (0, 2), (1, 3), (0, 1), (2, 4), (1, 2), (3, 4), (2, 3))


def _check_sort5() -> None:
    for bits in range(32):  # 0-1 principle
        v = [(bits >> i) & 1 for i in range(5)]
        for i, j in SORT5_NETWORK:
            if v[i] > v[j]:
                v[i], v[j] = v[j], v[i]
        assert v == sorted(v)


_check_sort5()

# -- the same tables as Python ints, for the B = 1 path ---------------------------------------
KEEP_BYTES_PY, COMPRESS_BY1_PY, COMPRESS_BY2_PY, COMPRESS_BY4_PY, KEPT_PAD_FILL_PY, DISCARD_BYTES_PY, \
    DISCARD_PAD_FILL_PY = (t.tolist() for t in (KEEP_BYTES, COMPRESS_BY1, COMPRESS_BY2, COMPRESS_BY4, KEPT_PAD_FILL,
                                                DISCARD_BYTES, DISCARD_PAD_FILL))
FLOOR_CARD_SHIFT_PY = FLOOR_CARD_SHIFT.tolist()
NEXT_SEAT_PY = NEXT_SEAT.tolist()
N_ALIVE_PY = N_ALIVE.tolist()
DRAW_ACTIONS_WORD_PY = DRAW_ACTIONS_WORD.tolist()
CARD_BIT_PY = CARD_BIT.tolist()


def hand_word_bits(words: np.ndarray) -> np.ndarray:
    """52-bit card sets (int64) of card words (any shape)."""
    w = np.asarray(words, dtype=_I64)
    return PAIR_BITS.take(w & 0xFFFF) | PAIR_BITS.take((w >> 16) & 0xFFFF) | CARD_BIT.take((w >> 32) & 0xFF)


def bits52(words: np.ndarray) -> np.ndarray:
    """(N,) 52-bit sets -> (N, 52) bool."""
    w = np.ascontiguousarray(words, dtype=_I64)
    return np.unpackbits(w.view(np.uint8).reshape(-1, 8), axis=1, count=NUM_CARDS, bitorder="little").view(bool)


def words_of(cards: np.ndarray) -> np.ndarray:
    """(..., k<=8) sorted card ids (PAD-filled) -> (...) card words."""
    c = np.asarray(cards)
    out = np.full(c.shape[:-1] + (8,), PAD, dtype=np.uint8)
    out[..., : c.shape[-1]] = c
    return out.view(_I64)[..., 0].copy()
