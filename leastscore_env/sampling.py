"""Uniformly random legal actions of Least Score, exactly uniform, for whole batches
(``LeastScoreCore.sample_legal``: random agents, soak runs, benchmarks)."""

from __future__ import annotations

import numpy as np

from leastscore_env.state import NUM_ACTIONS
from leastscore_env.turn import LeastScoreTurns

_I64 = np.int64
_U = np.uint64
#: by ``(byte << 3) | k``: the position of the k-th set bit of the byte
SELECT_IN_BYTE = np.zeros(256 * 8, dtype=_I64)
for _b in range(256):
    for _k, _i in enumerate(i for i in range(8) if _b >> i & 1):
        SELECT_IN_BYTE[(_b << 3) | _k] = _i
#: by n: Lemire's rejection threshold (2**32 mod n) for n legal actions
LEMIRE_THRESHOLD = np.array([(1 << 32) % n if n else 0 for n in range(65)], dtype=np.uint64)
_L1, _H8 = _U(0x0101010101010101), _U(0x8080808080808080)
_MASK38 = _U((1 << NUM_ACTIONS) - 1)


def _lemire_fix(m: np.ndarray, n: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Lemire's rejection step for ``m = r * n`` (r: uint32 draws): rows whose low 32 bits
    fall below ``2**32 mod n`` draw again (as :func:`_uniform_below`)."""
    bad = (m & _U(0xFFFFFFFF)) < LEMIRE_THRESHOLD.take(n)
    while bad.any():
        ix = np.flatnonzero(bad)
        m[ix] = rng.integers(0, 1 << 32, size=ix.size, dtype=np.uint32).astype(np.uint64) * n[ix]
        bad[ix] = (m[ix] & _U(0xFFFFFFFF)) < LEMIRE_THRESHOLD.take(n[ix])
    return m


def _uniform_below(n: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """(B,) uint64 exactly uniform in ``[0, n)`` (0 where n = 0) for uint64 ``n <= 64``: one
    uint32 per row, Lemire's multiply with rejection (probability < n / 2**32 per row)."""
    m = rng.integers(0, 1 << 32, size=n.shape[0], dtype=np.uint32).astype(np.uint64) * n
    bad = (m & _U(0xFFFFFFFF)) < LEMIRE_THRESHOLD.take(n)
    while bad.any():
        ix = np.flatnonzero(bad)
        m[ix] = rng.integers(0, 1 << 32, size=ix.size, dtype=np.uint32).astype(np.uint64) * n[ix]
        bad[ix] = (m[ix] & _U(0xFFFFFFFF)) < LEMIRE_THRESHOLD.take(n[ix])
    return m >> _U(32)


class LeastScoreSampling:
    """``sample_legal`` of a :class:`leastscore_env.core.LeastScoreCore`, a part it holds as
    ``core.sampling``; ``turns``: whose last batched mask it packs back in one call."""

    def __init__(self, turns: LeastScoreTurns) -> None:
        self.turns = turns

    def sample_legal(self, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """A uniformly random legal action per row, exactly uniform: ``(B,)`` int64.

        ``mask``: ``(B, 38)`` bool (``legal_action_mask``); a row with no legal action gets 0.
        The rows are packed into 38-bit words (one ``packbits`` of the mask's (B, 64) base
        when it is the layout ``legal_action_mask`` makes; other masks are first copied to
        that layout), then one uint32 draw per row is mapped exactly onto ``[0, n)``
        (Lemire's multiply with rejection; n = number of legal actions) and the u-th set bit
        is selected from per-byte prefix counts (SWAR) and a table.
        """
        if not isinstance(mask, np.ndarray) or mask.dtype != bool or mask.ndim != 2 or mask.shape[1] != NUM_ACTIONS:
            got = f"{mask.dtype} {mask.shape}" if isinstance(mask, np.ndarray) else type(mask).__name__
            raise ValueError(f"mask must be a (B, {NUM_ACTIONS}) bool array (legal_action_mask), got {got}")
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
        last = self.turns.last_mask
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
        out = SELECT_IN_BYTE.take(b)
        out += sh.view(_I64)
        if not n.all():
            out[n == 0] = 0
        return out
