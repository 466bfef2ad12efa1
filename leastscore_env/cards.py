"""Cards of Least Score (L1): one standard 52-card deck, no jokers.

A card is an int ``id = rank * 4 + suit`` with

* ``rank`` 0..12 = A, 2, 3, ..., 10, J, Q, K,
* ``suit`` 0..3 = clubs < diamonds < hearts < spades (C, D, H, S),

so sorting ids sorts cards by rank, then suit: the *canonical order* used for hands and
floors everywhere (actions and observations number hand slots in this order).

Id ``52`` (:data:`PAD`) is the padding "no card" of fixed-size arrays; it has rank 13,
suit 0 and value 0, and the lookup arrays below have an entry for it.

Values (L1): Ace 1, 2..10 face value, J/Q/K 10.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "NUM_CARDS", "NUM_RANKS", "PAD", "PAD_RANK", "RANK", "SUIT", "RANK_VALUE", "VALUE", "BIT",
    "RANK_NAMES", "SUIT_NAMES", "SUIT_SYMBOLS", "card_str", "parse_card", "parse_cards", "card_value",
    "mask_to_cards", "cards_to_mask",
]

NUM_CARDS = 52
NUM_RANKS = 13
PAD = 52  # "no card" in fixed-size card arrays; sorts after every real card
PAD_RANK = 13

RANK_NAMES = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUIT_NAMES = ("C", "D", "H", "S")
SUIT_SYMBOLS = ("\u2663", "\u2666", "\u2665", "\u2660")  # ♣ ♦ ♥ ♠

_ids = np.arange(NUM_CARDS + 1)
#: rank of each card id (index 52 = PAD -> 13)
RANK = (_ids >> 2).astype(np.int8)
#: suit of each card id (PAD -> 0)
SUIT = np.where(_ids < NUM_CARDS, _ids & 3, 0).astype(np.int8)
#: L1 value of each rank 0..12 (A 1, 2..10 face value, J/Q/K 10): the one place it is written
RANK_VALUE = np.minimum(np.arange(NUM_RANKS) + 1, 10).astype(np.int64)
#: L1 value of each card id (PAD -> 0)
VALUE = np.concatenate([RANK_VALUE[_ids[:NUM_CARDS] >> 2], [0]]).astype(np.int64)
#: the uint64 bit of each card id in a 52-bit card set (PAD -> 0)
BIT = np.concatenate([np.uint64(1) << np.arange(NUM_CARDS, dtype=np.uint64), [0]]).astype(np.uint64)
RANK.flags.writeable = SUIT.flags.writeable = RANK_VALUE.flags.writeable = VALUE.flags.writeable = False
BIT.flags.writeable = False

_RANK_OF = {name: i for i, name in enumerate(RANK_NAMES)}
_RANK_OF["T"] = 9  # common alias for ten
_SUIT_OF = {name: i for i, name in enumerate(SUIT_NAMES)}
_SUIT_OF.update({sym: i for i, sym in enumerate(SUIT_SYMBOLS)})


def card_str(card: int, symbols: bool = False) -> str:
    """``"AS"``, ``"10H"``, ``"KD"`` (or ``"A♠"`` with ``symbols``) for a card id."""
    c = int(card)
    if not 0 <= c < NUM_CARDS:
        raise ValueError(f"card id must be in 0..51, got {card!r}")
    return RANK_NAMES[c >> 2] + (SUIT_SYMBOLS if symbols else SUIT_NAMES)[c & 3]


def parse_card(text: str) -> int:
    """The card id of ``"10H"``, ``"as"``, ``"Q♠"``...; ``ValueError`` naming a malformed card."""
    if not isinstance(text, str):
        raise ValueError(f"malformed card {text!r}: expected a string such as 'AS' or '10H'")
    s = text.strip().upper()
    if len(s) < 2 or s[:-1] not in _RANK_OF or s[-1] not in _SUIT_OF:
        raise ValueError(f"malformed card {text!r}: expected rank A,2..10,J,Q,K then suit C,D,H,S (e.g. '10H')")
    return _RANK_OF[s[:-1]] * 4 + _SUIT_OF[s[-1]]


def parse_cards(texts) -> list[int]:
    """Card ids of a list of card strings (each checked by :func:`parse_card`)."""
    if isinstance(texts, str):
        raise ValueError(f"expected a list of cards, got the string {texts!r}")
    return [parse_card(t) for t in texts]


def card_value(card: int) -> int:
    """L1 value: A 1, 2..10 face value, J/Q/K 10."""
    return int(VALUE[int(card)])


def cards_to_mask(cards) -> int:
    """52-bit int set of card ids."""
    m = 0
    for c in cards:
        m |= 1 << int(c)
    return m


def mask_to_cards(mask: int) -> list[int]:
    """Card ids (canonical order) of a 52-bit set."""
    m = int(mask)
    return [c for c in range(NUM_CARDS) if m >> c & 1]
