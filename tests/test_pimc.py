"""deckgym.agents.pimc: the (observation, candidate, world) rows of a PIMC search, the per-candidate
means and the keep-unless-beaten rule, on hand-made arrays."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from deckgym.agents.pimc import candidate_means, candidate_rows, keep_unless_beaten
from deckgym.core import BatchState


@dataclass
class _Worlds(BatchState):
    tag: np.ndarray


def test_rows_pair_every_candidate_with_the_same_worlds() -> None:
    worlds = _Worlds(tag=np.arange(6) * 10)  # 2 observations × 3 worlds: b·3 + j
    cand = np.array([[5, 7], [4, -1]])
    states, acts = candidate_rows(worlds, cand)
    assert states.tag.tolist() == [0, 10, 20, 0, 10, 20, 30, 40, 50, 30, 40, 50]
    assert acts.tolist() == [5, 5, 5, 7, 7, 7, 4, 4, 4, 4, 4, 4]  # the padded candidate replays the first
    assert acts.dtype == np.int64


def test_means_and_the_margin() -> None:
    cand = np.array([[5, 7, 9], [4, 6, -1]])
    values = np.array([0, 0, 1, 1, 1, 1, 0, 1, 1, 0.5, 0.5, 0.5, 1, 1, 1, 9, 9, 9], float)
    mean = candidate_means(values, cand)
    np.testing.assert_allclose(mean[0], [1 / 3, 1, 2 / 3])
    assert mean[1, 2] == -np.inf and mean[1, 1] == 1
    assert keep_unless_beaten(mean, cand, 0.0).tolist() == [7, 6]
    assert keep_unless_beaten(mean, cand, 0.5).tolist() == [7, 4]  # 1 - 0.5 is not more than 0.5
    assert keep_unless_beaten(mean, cand, 0.7).tolist() == [5, 4]
