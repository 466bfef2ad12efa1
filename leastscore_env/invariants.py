"""Least Score's soak checks (``deckgym soak``, :mod:`deckgym.evaluation.soak`): the rule variants
played, the card check, the shuffle of what a seat cannot see, and the moves of random play."""

from __future__ import annotations

from typing import Any

import numpy as np

from leastscore_env.cards import PAD
from leastscore_env.tables import hand_word_bits, words_of

#: (name, rules fields, episode): soaked as ``leastscore_<name>``
VARIANTS = [
    ("2p", {"num_players": 2}, "round"),
    ("4p", {"num_players": 4}, "round"),
    ("8p", {"num_players": 8}, "round"),
    ("4p_suited_3card_strict", {"num_players": 4, "sequence_same_suit": True, "sequence_lengths": (3, 4, 5),
                                "hand_size": 3, "tie_wins": False, "max_turns": 40}, "round"),
    ("4p_match", {"num_players": 4, "elimination_score": 50}, "match"),
    ("6p_match_cap_continues", {"num_players": 6, "elimination_score": 25, "cap_ends_match": False, "max_turns": 30},
     "match"),
]


def cards_ok(core: Any, st: Any) -> np.ndarray:
    """(B,) bool: hands, floor, pending discards, dead pile and deck hold the 52 cards once each,
    and every hand's card word holds the cards of its bit set."""
    places = np.concatenate([st.hand_bits, st.floor_bits[:, None], st.pending_bits[:, None], st.dead[:, None]], axis=1)
    count = _bits_matrix(places).sum(axis=1) + _deck_matrix(st)
    words_ok = (hand_word_bits(st.hands) == st.hand_bits).all(axis=1)
    floor_ok = hand_word_bits(st.floor) == st.floor_bits
    return (count == 1).all(axis=1) & words_ok & floor_ok


def _bits_matrix(bits: np.ndarray) -> np.ndarray:
    """(...,) 52-bit int64 sets → (..., 52) bool."""
    b = np.ascontiguousarray(bits, dtype=np.int64)
    return np.unpackbits(b.view(np.uint8).reshape(b.shape + (8,)), axis=-1, count=52, bitorder="little").astype(bool)


def _deck_matrix(st: Any) -> np.ndarray:
    """(B, 52) bool: the cards still face down in the deck."""
    B = st.deck.shape[0]
    live = np.arange(st.deck.shape[1])[None, :] >= st.top.astype(np.int64)[:, None]
    live &= st.deck < 52
    out = np.zeros((B, 53), bool)
    out[np.nonzero(live)[0], st.deck[live].astype(np.int64)] = True
    return out[:, :52]


def hidden_shuffle(core: Any, st: Any, seat: np.ndarray, rng: np.random.Generator) -> Any:
    """A copy of ``st`` in which the opponents' cards not publicly known and the deck are
    dealt again at random (each opponent keeps its hand size and its known cards)."""
    B, P = st.hands.shape
    rows = np.arange(B)
    deck = _deck_matrix(st)
    unknown = np.where(np.arange(P)[None, :] != seat[:, None], st.hand_bits & ~st.known, 0)
    pool = deck | _bits_matrix(np.bitwise_or.reduce(unknown, axis=1))
    idx = np.arange(52, dtype=np.float64)
    perm = np.argsort(np.where(pool, rng.random((B, 52)), 52 + idx), axis=1)  # hidden cards first, shuffled
    out = st.copy()
    off = np.zeros(B, np.int64)
    j = np.arange(5)[None, :]
    for q in range(P):  # over seats, not games
        u = np.bitwise_count(unknown[:, q].view(np.uint64)).astype(np.int64)
        take = j < u[:, None]
        cards = perm[rows[:, None], np.minimum(off[:, None] + j, 51)]
        new_bits = np.bitwise_or.reduce(np.where(take, np.left_shift(np.int64(1), cards), 0), axis=1)
        bits = np.where(seat == q, st.hand_bits[:, q], (st.hand_bits[:, q] & st.known[:, q]) | new_bits)
        sorted_cards = np.sort(np.where(_bits_matrix(bits), np.arange(52), PAD), axis=1)[:, :5]
        out.hands[:, q] = words_of(sorted_cards.astype(np.uint8))
        out.hand_bits[:, q] = bits
        off += np.where(seat == q, 0, u)
    top = st.top.astype(np.int64)
    col = np.arange(st.deck.shape[1])[None, :]
    in_deck = (col >= top[:, None]) & (col < 52)
    src = np.clip(off[:, None] + col - top[:, None], 0, 51)
    out.deck[:] = np.where(in_deck, perm[rows[:, None], src], st.deck).astype(st.deck.dtype)
    legal_of = getattr(core, "_legal_of", None)
    if legal_of is not None:  # the opponents' legal discards follow their new hands
        mover_legal = st.legal[rows, st.player.astype(np.int64)]
        out.legal[:] = legal_of(out.hands)
        out.legal[rows, st.player.astype(np.int64)] = mover_legal
    return out


def moves(core: Any, st: Any, actions: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Uniformly random play reaches every rule (declarations included) unbiased."""
    return actions
