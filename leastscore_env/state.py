"""Least Score state layout, action ids and the card-word representation (rules L1–L10:
``docs/RULES.md``).

Representation (chosen for speed: the hot path works on one int64 word per game):

* a hand is one int64 *card word*: 8 bytes, byte ``i`` = the i-th card id of the hand in
  canonical order, ``PAD`` (52) after the last card (bytes 5..7 are always PAD);
* the floor and the pending discards are card words whose cards stay at the hand slots
  they were discarded from (``PAD`` elsewhere) plus a 5-bit mask of those slots;
* sets of cards (seen, dead pile, known cards, floor) are 52-bit masks in an int64.

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

from dataclasses import dataclass

import numpy as np

from deckgym.core import BatchState
from leastscore_env.cards import NUM_CARDS, PAD

__all__ = ["LeastScoreState", "LeastScoreInfoState", "with_history", "empty_state", "NUM_ACTIONS", "DECLARE", "DRAW_DECK", "TAKE_FLOOR", "HAND_MAX",
           "PAD_WORD", "SUBSET_SLOTS", "ACTION_NAMES", "PHASE_NAMES"]

NUM_ACTIONS = 38
DECLARE = 31
DRAW_DECK = 32
TAKE_FLOOR = 33  # + j
HAND_MAX = 5
PAD_WORD = int.from_bytes(bytes([PAD] * 8), "little")  # a card word with no card
PHASE_NAMES = ("discard", "draw")
#: the hand slots of discard group ``sel`` (action ``sel - 1``); row 32 = declare: no card moves
SUBSET_SLOTS = [[i for i in range(HAND_MAX) if (sel >> i) & 1] for sel in range(33)]
SUBSET_SLOTS[32] = []


def _action_names() -> tuple[str, ...]:
    names = ["discard_" + "+".join(f"s{i}" for i in SUBSET_SLOTS[a + 1]) for a in range(31)]
    names += ["declare", "draw_deck"] + [f"take_floor_{j}" for j in range(5)]
    return tuple(names)


ACTION_NAMES = _action_names()


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
    player        (B,) int8     the seat to act
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

    former_names = {"player": "cur"}  # named as Rack-O's (replays of deckgym 0.1.0 say cur)

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
    player: np.ndarray
    first: np.ndarray
    phase: np.ndarray
    turn: np.ndarray
    round: np.ndarray
    over: np.ndarray
    mask: np.ndarray
    rng_key: np.ndarray
    rng_counter: np.ndarray


def empty_state(B: int, P: int) -> LeastScoreState:
    """``B`` games of ``P`` seats with empty hands, to be dealt."""
    _I64 = np.int64
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
        alive=np.full(B, (1 << P) - 1, dtype=np.int16),
        player=np.zeros(B, dtype=np.int8),
        first=np.zeros(B, dtype=np.int8),
        phase=np.zeros(B, dtype=np.int8),
        turn=np.zeros(B, dtype=np.int16),
        round=np.zeros(B, dtype=np.int16),
        over=np.zeros(B, dtype=bool),
        mask=np.zeros(B, dtype=_I64),
        rng_key=np.zeros(B, dtype=np.uint64),
        rng_counter=np.zeros(B, dtype=np.uint64),
    )


@dataclass
class LeastScoreInfoState(LeastScoreState):
    """A :class:`LeastScoreState` plus the public history of the round (cores built with
    ``obs="infostate"``, :mod:`leastscore_env.infostate`). Absolute seats; cleared at every deal.

    ``thrown[b, p]``: 52-bit set of the cards seat p threw this round; ``picked[b, p]``: the
    cards it took from the floor; ``draws[b, p]``: how many cards it drew from the deck.
    """

    thrown: np.ndarray  # (B, P) int64
    picked: np.ndarray  # (B, P) int64
    draws: np.ndarray  # (B, P) int16


def with_history(st: LeastScoreState) -> LeastScoreInfoState:
    """``st``'s games (the same arrays) with an empty history."""
    from dataclasses import fields

    B, P = st.hands.shape
    return LeastScoreInfoState(**{f.name: getattr(st, f.name) for f in fields(LeastScoreState)},
                               thrown=np.zeros((B, P), np.int64), picked=np.zeros((B, P), np.int64),
                               draws=np.zeros((B, P), np.int16))
