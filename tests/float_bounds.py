"""Tolerances for network outputs compared with values computed on another machine.

A float32 matrix product is not the same bit for bit on every processor: another BLAS kernel
(AVX2 or AVX-512, MKL or OpenBLAS), another thread split or FMA changes the order in which a dot
product is summed, and so its last bits. Tests that compare logits with a file written elsewhere
use the bound below, never equality.

The bound is Higham and Mary's probabilistic one ("A new approach to probabilistic rounding
error analysis", SIAM J. Sci. Comput. 41(5), 2019, Theorem 2.4): rounding errors are independent
and of mean zero, so a float32 dot product of ``n`` terms, summed in any order, is off the exact
sum by at most ``lam * sqrt(n) * u * sum_i |w_i x_i|`` with probability at least
``1 - 2 exp(-lam**2 / 2)``, where ``u = 2**-24`` (half an ulp). Adding the bias is one more term;
two machines differ by at most twice that. An input error ``e`` reaches the next layer as
``sqrt(W**2 @ e**2)`` (independent errors add in quadrature; relu and tanh are 1-Lipschitz), and
tanh itself may round differently by an ulp on each machine. ``LAMBDA = 4`` bounds each element
with probability above 0.999: a few ulps times the square root of the layer size. The worst-case
bound (``n u`` instead of ``sqrt(n) u``, errors added in absolute value) is 0.03 of a logit for
the shipped 256-unit networks: too loose to catch much. Measured between an AVX-512 and another
processor, the largest difference was 0.23 of the bound at ``lam = 1`` (about 5e-6 of a logit),
so ``LAMBDA = 4`` leaves a margin of 17. A wrong weight or input moves a logit by far more.
"""

from __future__ import annotations

from typing import Any

import numpy as np

U32 = 2.0 ** -24  # unit roundoff of float32
U64 = 2.0 ** -53  # unit roundoff of float64
LAMBDA = 4.0  # confidence of the probabilistic bound: each element holds with probability > 0.999


def logit_tolerance(layers: list[tuple[Any, Any]], x: np.ndarray, activation: str) -> np.ndarray:
    """``(B, out)``: how far two machines' float32 outputs of the MLP ``layers`` on ``x`` may differ.

    ``layers`` are ``(weight (out, in), bias (out,))`` pairs, first to last, with ``activation``
    (``"relu"`` or ``"tanh"``) between them, as ``torch.nn.Linear`` computes them."""
    h = np.asarray(x, np.float64)
    err = np.zeros_like(h)
    for i, (w, b) in enumerate(layers):
        w, b = np.asarray(w, np.float64), np.asarray(b, np.float64)
        rounding = 2 * LAMBDA * np.sqrt(w.shape[1] + 1) * U32 * (np.abs(h) @ np.abs(w).T + np.abs(b))
        err = rounding + np.sqrt(err ** 2 @ (w ** 2).T)
        h = h @ w.T + b
        if i < len(layers) - 1:
            if activation == "tanh":
                h = np.tanh(h)
                err = err + 2 * U32 * np.abs(h)
            else:
                h = np.maximum(h, 0)
    return err


def decisive_rows(scores: np.ndarray, tol: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """``(B,)`` the rows whose best legal score leads every other legal score by more than both
    scores' tolerances: there the argmax is the same on any machine. The others are near-ties."""
    s = np.where(masks, scores, -np.inf)
    best = np.argmax(s, axis=1)
    rows = np.arange(len(s))
    lead = s[rows, best][:, None] - s
    margin = tol[rows, best][:, None] + tol
    rivals = masks.copy()
    rivals[rows, best] = False
    return ~((lead <= margin) & rivals).any(axis=1)
