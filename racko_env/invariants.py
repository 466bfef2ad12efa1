"""Rack-O's soak checks (``deckgym soak``, :mod:`deckgym.evaluation.soak`): the rule variants
played, the card check, the shuffle of what a seat cannot see, and the move bias of random play."""

from __future__ import annotations

from typing import Any

import numpy as np

#: (name, rules fields, episode): soaked as ``racko_<name>``
VARIANTS = [
    ("2p", {"num_players": 2}, "round"),
    ("3p", {"num_players": 3}, "round"),
    ("4p", {"num_players": 4}, "round"),
    ("2p_bonus_flip_deck50", {"num_players": 2, "bonus": True, "reshuffle": "flip", "deck_size": 50, "max_turns": 60},
     "round"),
    ("4p_partners", {"num_players": 4, "partners": True}, "round"),
    ("2p_match_short", {"num_players": 2, "target_score": 60, "max_turns": 100}, "match"),
    ("4p_partners_match", {"num_players": 4, "partners": True, "target_score": 300}, "match"),
]


def cards_ok(core: Any, st: Any) -> np.ndarray:
    """(B,) bool: the racks and the piles hold every card 1..N exactly once."""
    B, K = st.piles.shape[0], core.pile_size
    cards = np.concatenate([np.abs(st.racks.astype(np.int16)).reshape(B, -1), st.piles[:, :K]], axis=1)
    return (np.sort(cards, axis=1) == np.arange(1, core.deck_size + 1)).all(axis=1) & (st.piles[:, K] == 0)


def hidden_shuffle(core: Any, st: Any, seat: np.ndarray, rng: np.random.Generator) -> Any:
    """A copy of ``st`` with every card ``seat`` (per game) cannot see permuted among the hidden places."""
    B, P, K = st.piles.shape[0], core.num_players, core.pile_size
    vals = np.concatenate([st.racks.reshape(B, P * 10).astype(np.int16), st.piles[:, :K].astype(np.int16)], axis=1)
    M = vals.shape[1]
    owner = np.repeat(np.arange(P), 10)
    hidden = np.zeros((B, M), bool)
    hidden[:, : P * 10] = (owner[None, :] != seat[:, None]) & (vals[:, : P * 10] > 0)  # not publicly known
    s = st.disc_n.astype(np.int64)
    h = (st.phase != 0).astype(np.int64)
    col = np.arange(K)[None, :]
    hidden[:, P * 10:] = col < (K - s - h)[:, None]  # the draw pile
    drawn = (st.phase == 2) & (st.player != seat)  # a card an opponent drew from the pile
    hidden[:, P * 10:] |= drawn[:, None] & (col == (K - s - 1)[:, None])
    out = st.copy()
    new = _permute_hidden(vals, hidden, rng)
    out.racks[:] = new[:, : P * 10].reshape(B, P, 10).astype(st.racks.dtype)
    out.piles[:, :K] = new[:, P * 10:].astype(st.piles.dtype)
    return out


def _permute_hidden(vals: np.ndarray, hidden: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Per row, the values at the ``hidden`` columns randomly permuted among those columns."""
    B, M = vals.shape
    idx = np.arange(M, dtype=np.float64)
    order_a = np.argsort(np.where(hidden, idx, M + idx), axis=1)  # hidden columns first, in order
    order_b = np.argsort(np.where(hidden, rng.random((B, M)), M + idx), axis=1)  # hidden first, shuffled
    rows = np.arange(B)[:, None]
    new = vals.copy()
    new[rows, order_a] = vals[rows, order_b]
    return new


def moves(core: Any, st: Any, actions: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Nine placements in ten go to the card's bucket slot (still legal: any slot is): uniformly
    random play almost never builds an increasing rack, so rounds would only end at the cap
    and the win-and-bonus code would go unexercised."""
    K = core.pile_size
    rows = np.arange(st.piles.shape[0])
    hand = st.piles[rows, np.clip(K - st.disc_n.astype(np.int64) - 1, 0, K)].astype(np.int64)
    bucket = 2 + np.minimum(9, (hand - 1) * 10 // core.deck_size)
    place = (st.phase != 0) & (rng.random(rows.size) < 0.9)
    return np.where(place, bucket, actions)
