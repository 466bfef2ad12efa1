"""Uniformly random legal actions of Rack-O, exactly uniform, for whole batches
(``RackoCore.sample_legal``: random agents, soak runs, benchmarks)."""

from __future__ import annotations

import numpy as np

from racko_env.state import DISCARD_DRAWN, NUM_ACTIONS

_SAMPLE_SPAN = 110  # lcm of the legal-action counts 2, 10, 11
# u uniform on [0, 110) and 110 = lcm(2, 10, 11), so u mod (legal count) is exactly uniform; the
# table maps (kind of mask, u) to the action. Kinds: place_discard, choose, place_drawn (first legal, count).
_SAMPLE_TABLE = np.concatenate([lo + np.arange(_SAMPLE_SPAN) % n
                                for lo, n in [(2, 10), (0, 2), (2, 11)]]).astype(np.int64)


class RackoSampling:
    """``sample_legal`` of a :class:`racko_env.core.RackoCore`, a part it holds as ``core.sampling``
    (it needs nothing but the mask's layout)."""

    def sample_legal(self, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """A uniformly random legal action per row, exactly uniform: ``(B,)`` int64.

        ``mask``: a ``(B, 13)`` mask of this core (``legal_action_mask``; R4: its legal
        actions are 0-1, 2-11 or 2-12, told apart by columns 0 and 12). One uint16 draw per
        row from ``rng`` (uniform on [0, 110), 110 = lcm(2, 10, 11)) and a table lookup: about
        a tenth of ``argmax(rng.random((B, 13)) * mask, axis=1)``.
        """
        if not isinstance(mask, np.ndarray) or mask.dtype != bool or mask.ndim != 2 or mask.shape[1] != NUM_ACTIONS:
            got = f"{mask.dtype} {mask.shape}" if isinstance(mask, np.ndarray) else type(mask).__name__
            raise ValueError(f"mask must be a (B, {NUM_ACTIONS}) bool array (legal_action_mask), got {got}")
        u = rng.integers(0, _SAMPLE_SPAN, size=mask.shape[0], dtype=np.uint16)
        key = np.multiply(mask[:, 0], _SAMPLE_SPAN, dtype=np.intp)
        key += np.multiply(mask[:, DISCARD_DRAWN], 2 * _SAMPLE_SPAN, dtype=np.intp)
        key += u
        return _SAMPLE_TABLE.take(key)
