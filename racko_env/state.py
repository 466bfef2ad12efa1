"""Rack-O state layout, action ids and phases (rule ids R1–R12: ``docs/RULES.md``).

State layout (:class:`RackoState`, one row per game; ``P`` players, ``N`` cards,
``K = N − 10·P`` cards outside the racks). Default sizes: 2p 149 B, 3p 181 B, 4p 213 B
per game (limit 256).

=============  ===========  ========  =====================================================
field          shape        dtype     meaning
=============  ===========  ========  =====================================================
racks          (B, P, 10)   int8      card in each slot (slot 1 first). **Negative** = the
                                      card is publicly known to be there (the owner took it
                                      from the discard pile, R5); ``abs()`` is the card.
piles          (B, K+1)     int8      draw pile and discard pile in one array, growing from
                                      opposite ends. With ``s = disc_n`` and ``h = 1`` during
                                      a place phase (a card in hand) else 0: the draw pile is
                                      ``piles[0 : K-s-h]`` (top = last), the card in hand is
                                      ``piles[K-s-1]`` (a place phase), the discard pile is
                                      ``piles[K-s : K]`` (top = ``piles[K-s]``, bottom =
                                      ``piles[K-1]``). ``piles[K] = 0`` is a sentinel, so
                                      ``piles[K-s]`` is 0 when the discard pile is empty.
disc_n         (B,)         int8      s, discard pile size.
phase          (B,)         int8      0 choose, 1 place_discard (took the discard top),
                                      2 place_drawn (drew from the draw pile).
player         (B,)         int8      seat to act.
dealer         (B,)         int8      dealer of the round (R3); ``player`` starts at dealer+1.
turn           (B,)         int16     completed turns this round (R9).
pub            (B, 2, N+1)  bool      public flags of card c (index 0 unused): ``pub[:, 0]`` =
                                      was face up this round, ``pub[:, 1]`` = is in the
                                      discard pile now.
scores         (B, P)       int16     match totals (R12; team totals per seat with R11).
rng_key        (B,)         uint64    per-game random stream (``deckgym.rng``).
rng_counter    (B,)         uint64
=============  ===========  ========  =====================================================

Every card 1..N is exactly once in ``|racks| ∪ piles[:K]`` at every step (in a place phase
the card in hand sits in the gap between the two piles). The draw pile size is implied:
``K − s − h``, so the R6 reshuffle (draw pile empty ⇔ ``s = K`` in the choose phase)
always permutes exactly the ``K − 1`` cards under the discard top: a fixed-size shuffle.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from deckgym.core import BatchState

__all__ = ["RackoState", "RackoInfoState", "with_history", "empty_state", "draw_pile_size", "ACTION_NAMES", "PHASE_NAMES", "NUM_ACTIONS", "DRAW", "TAKE", "DISCARD_DRAWN",
           "CHOOSE", "PLACE_DISCARD", "PLACE_DRAWN", "LOG_TURNS", "LOG_TOOK", "LOG_SWAPPED", "LOG_THREW"]

#: action ids (2..11 = slot 1..10)
DRAW, TAKE, DISCARD_DRAWN = 0, 1, 12
NUM_ACTIONS = 13
ACTION_NAMES = ("draw", "take_discard") + tuple(f"slot_{i}" for i in range(1, 11)) + ("discard_drawn",)
PHASE_NAMES = ("choose", "place_discard", "place_drawn")
#: phase ids (R4: choose a pile, then place the card taken)
CHOOSE, PLACE_DISCARD, PLACE_DRAWN = 0, 1, 2
#: turns per seat kept in an information state's turn log (a 2-player round of the planners
#: lasts 18 turns in the median, 42 at the 99th percentile: 21 per seat)
LOG_TURNS = 24
#: kinds of a logged turn
LOG_TOOK, LOG_SWAPPED, LOG_THREW = 1, 2, 3


@dataclass
class RackoState(BatchState):
    """State of ``B`` Rack-O games; see the module docstring for the field layout."""

    former_names = {"scores": "totals"}  # named as Least Score's (replays of deckgym 0.1.0 say totals)

    racks: np.ndarray
    piles: np.ndarray
    disc_n: np.ndarray
    phase: np.ndarray
    player: np.ndarray
    dealer: np.ndarray
    turn: np.ndarray
    pub: np.ndarray
    scores: np.ndarray
    rng_key: np.ndarray
    rng_counter: np.ndarray


def empty_state(b: int, P: int, N: int, K: int) -> RackoState:
    """``b`` games of zeros (``P`` players, ``N`` cards, ``K`` outside the racks), to be dealt."""
    return RackoState(
        racks=np.zeros((b, P, 10), np.int8), piles=np.zeros((b, K + 1), np.int8),
        disc_n=np.zeros(b, np.int8), phase=np.zeros(b, np.int8), player=np.zeros(b, np.int8),
        dealer=np.zeros(b, np.int8), turn=np.zeros(b, np.int16), pub=np.zeros((b, 2, N + 1), bool),
        scores=np.zeros((b, P), np.int16), rng_key=np.zeros(b, np.uint64), rng_counter=np.zeros(b, np.uint64),
    )


@dataclass
class RackoInfoState(RackoState):
    """A :class:`RackoState` plus the public history of the round (cores built with
    ``obs="infostate"``, :mod:`racko_env.infostate`). Absolute seats; cleared at every deal.

    ``took[b, p, c]``: seat p took card c from the discard pile; ``thrown[b, p, c]``: seat p
    drew card c and threw it straight away; ``left[b, p, c]``: the slot (1..10) card c last
    left in seat p's rack (0: never); ``slot_out[b, p, i]``: the card that last left slot i
    (0: none, the slot holds its dealt card); ``slot_turn[b, p, i]``: the turn it left (-1: never). ``log[b, p, j]``: seat p's
    ``j``-th most recent turn (j < ``LOG_TURNS``) as (card on the discard pile when the turn
    began, kind 1 took / 2 drew and swapped / 3 drew and threw, slot 1..10 or 0, card that
    ended on the discard pile); all 0 before that seat's first turn.
    """

    took: np.ndarray  # (B, P, N+1) bool
    thrown: np.ndarray  # (B, P, N+1) bool
    left: np.ndarray  # (B, P, N+1) int8
    slot_out: np.ndarray  # (B, P, 10) int8
    slot_turn: np.ndarray  # (B, P, 10) int16
    log: np.ndarray  # (B, P, LOG_TURNS, 4) int8


def draw_pile_size(st: RackoState) -> np.ndarray:
    """``(B,)`` cards in each game's draw pile, ``piles[:, :size]`` (the layout above: ``K - s - h``)."""
    K = st.piles.shape[1] - 1
    return K - st.disc_n.astype(np.int64) - (st.phase != CHOOSE)


def with_history(st: RackoState, P: int, N: int) -> RackoInfoState:
    """``st``'s games (the same arrays) with an empty history: only right at a deal."""
    from dataclasses import fields

    b = st.disc_n.shape[0]
    return RackoInfoState(**{f.name: getattr(st, f.name) for f in fields(RackoState)},
                          took=np.zeros((b, P, N + 1), bool), thrown=np.zeros((b, P, N + 1), bool),
                          left=np.zeros((b, P, N + 1), np.int8), slot_out=np.zeros((b, P, 10), np.int8),
                          slot_turn=np.full((b, P, 10), -1, np.int16), log=np.zeros((b, P, LOG_TURNS, 4), np.int8))
