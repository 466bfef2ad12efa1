"""Counter-based random streams, one per game, vectorised over a batch.

Every game in a batch owns a 64-bit ``key`` (derived from the run seed and the game's
id) and a 64-bit ``counter``. A random draw hashes ``(key, counter, j)`` with the
SplitMix64 finaliser and then advances that game's counter, so game ``i`` of seed ``s``
sees exactly the same random numbers whatever the batch size is, and whatever the
other games in the batch do. This is what makes seeded runs reproducible bit for bit
across ``B = 1`` (the AEC env) and ``B = 4096`` (the vectorised core).
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

__all__ = ["make_keys", "random_u64", "random_below", "shuffled", "permutation_keys", "seed_of"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31 = np.uint64(30), np.uint64(27), np.uint64(31)
_J = np.arange(256, dtype=np.uint64) * np.uint64(0xD1B54A32D192ED03)


def _mix(z: np.ndarray) -> np.ndarray:
    """SplitMix64 finaliser (a bijection on uint64 with good avalanche)."""
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


class SeedError(TypeError, ValueError):
    """A seed that is not ``None`` or a non-negative int (a ``TypeError`` for the wrong type and a
    ``ValueError`` like every other bad setting)."""


def check_seed(seed: Any) -> None:
    """The one seed check of every entry point (AEC and Gymnasium ``reset``, the vector env's
    ``seed=``): ``None`` or a non-negative int (Python or numpy). ``1.7`` must not deal seed 1,
    ``True`` is no seed, and a negative seed is refused rather than wrapped."""
    if seed is None:
        return
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise SeedError(f"seed must be None or an int, got {type(seed).__name__} {seed!r} "
                        "(a seed must be a non-negative integer)")
    if seed < 0:
        raise SeedError(f"seed must be a non-negative integer or None, got {seed!r}")


def make_keys(seed: int, game_ids: np.ndarray) -> np.ndarray:
    """One uint64 key per game, from the run seed and each game's id."""
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
        raise TypeError(f"seed must be an int, got {type(seed).__name__}")
    ids = np.asarray(game_ids, dtype=np.uint64)
    s = _mix(np.array([int(seed) & 0xFFFFFFFFFFFFFFFF], dtype=np.uint64) + _GOLDEN)
    return _mix((ids + np.uint64(1)) * _GOLDEN ^ s)


def random_u64(keys: np.ndarray, counters: np.ndarray, n: int) -> np.ndarray:
    """``(B, n)`` uint64 random words; advances ``counters`` (in place) by one.

    ``keys`` and ``counters`` are ``(B,)`` uint64 arrays (``counters`` is modified).
    Pass the rows of the games that draw (e.g. ``keys[m]``) and write the counters back.
    """
    if n > _J.shape[0]:
        raise ValueError(f"random_u64 draws at most {_J.shape[0]} words per call, asked {n}")
    base = _mix(keys ^ (counters * _GOLDEN))
    counters += np.uint64(1)
    return _mix(base[:, None] + _J[:n])


def random_below(keys: np.ndarray, counters: np.ndarray, bound: np.ndarray | int) -> np.ndarray:
    """``(B,)`` integers uniform in ``[0, bound)`` (bias < 2**-40 for bounds < 2**24)."""
    words = random_u64(keys, counters, 1)[:, 0] >> np.uint64(40)
    return ((words * np.asarray(bound, dtype=np.uint64)) >> np.uint64(24)).astype(np.int64)


def permutation_keys(keys: np.ndarray, counters: np.ndarray, n: int) -> np.ndarray:
    """``(B, n)`` random sort keys: ``argsort`` of them is a uniform permutation.

    Useful to shuffle a variable subset of a row: give the cards that must not move a key
    of ``0xFFFF…`` (they sort last) before the ``argsort``.
    """
    # Clear the low bits so that the all-ones sentinel is strictly larger than any key.
    return random_u64(keys, counters, n) >> np.uint64(1)


def shuffled(keys: np.ndarray, counters: np.ndarray, n: int) -> np.ndarray:
    """``(B, n)`` int64: a uniform random permutation of ``0..n-1`` per game."""
    return np.argsort(permutation_keys(keys, counters, n), axis=1, kind="stable")


def seed_of(*parts: int | str) -> int:
    """A 32-bit seed derived from integers (a run seed, a chunk, a seat, ...) and names (an agent
    spec: hashed, not looked up): the one way deckgym seeds an agent or a sub-stream from several
    parts, so equal parts give equal seeds everywhere."""
    words = [_name_word(p) if isinstance(p, str) else int(p) & 0xFFFFFFFF for p in parts]
    return int(np.random.SeedSequence(words).generate_state(1)[0])


def _name_word(name: str) -> int:
    """A name as a 64-bit integer (blake2b: the same on every machine and Python, unlike ``hash``)."""
    return int.from_bytes(hashlib.blake2b(name.encode(), digest_size=8).digest(), "little")
