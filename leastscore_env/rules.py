"""The rules object of Least Score (spec: ``docs/RULES.md``, rules L1-L10).

:class:`LeastScoreRules` is a frozen dataclass; every point where the seed (004, Italian)
is silent or ambiguous is a field, and its default is the reading written here.

Decisions on ambiguities (each one a field, or a reading noted here):

* **Who starts** (L3, not in the seed): ``first_player="random"`` -- the first round's
  starting seat is drawn uniformly from the game's own random stream; in a match (L9) the
  start then passes left each round to the next seat still in the game. ``"seat0"`` makes
  seat 0 start the first round (handy for hand-built tests and tutorials).
* **First floor** (L3 [decided]): the top card of the deck is turned face up and is the first
  player's floor.
* **Pairs** (L5): a pair is a group of exactly two cards of one rank; it may be taken from a
  hand holding three of that rank (the seed forbids *discarding* three of a kind, not holding
  them). All four of a rank is the seed's "two pairs of one rank".
* **Sequences** (L5 [decided]): ``sequence_lengths=(3, 5)`` with mixed suits
  (``sequence_same_suit=False``); ace low or high, never wrapping (K-A-2).
* **Flush** (L5): five cards of one suit, hence only from a full hand (``hand_size == 5``).
* **Declaring** (L7): "every player still in the game has played at least one turn of the
  round" is counted as: completed turns this round >= number of players still in the game
  (turns go round the table from the round's first player, so this is exactly "everyone
  has played once").
* **Ties** (L8 [decided]): ``tie_wins=True`` -- a declarer whose total equals the lowest other
  total has declared correctly; ``False`` makes a tie a false declaration.
* **Round cap** (L10 [decided]): ``max_turns=200`` completed turns (a turn = discard + draw;
  a declaration is not a completed turn) ends the round with 0 points for everybody and is
  reported as a *truncation*. In ``"match"`` episodes ``cap_ends_match=True`` (default) makes
  the capped round end the whole match as a truncation (no winner: otherwise a table of
  players who never declare would never finish); ``False`` deals the next round instead.
* **Reshuffle** (L6 [decided]): the dead pile (every face-up card no longer on the floor or
  in anybody's hand) is shuffled into the new deck; the current floor and the cards just
  discarded by the player to move are not part of it.
* **Elimination** (L9 [decided]): ``elimination_score=100`` (the seed's other thresholds are 25
  and 50), "reaches" means ``>=``. Eliminated players are dealt no cards in later rounds.
* **Round winners** (reward ``"win"`` in ``"round"`` episodes): the players with the fewest
  round points, ties share (a correct declarer and everybody who had the same total; after
  a false declaration, every other player).
"""

from __future__ import annotations

from dataclasses import dataclass

from deckgym.rules import Rules, rule

__all__ = ["LeastScoreRules"]

FIRST_PLAYER_MODES = ("random", "seat0")


@dataclass(frozen=True)
class LeastScoreRules(Rules):
    """The settings of a Least Score game (docs/RULES.md L1–L10); impossible settings raise
    ``ValueError`` naming the field. Each field's meaning is written beside it
    (``deckgym rules leastscore`` prints them)."""

    num_players: int = rule(4, "L2: players, 2..8")
    hand_size: int = rule(5, "L3: cards dealt to each player, 1..5 (the action space is built for 5)")
    sequence_lengths: tuple[int, ...] = rule((3, 5), "L5: lengths a sequence may have, distinct, each 3..5")
    sequence_same_suit: bool = rule(False, "L5: sequences must be of one suit")
    tie_wins: bool = rule(True, "L8: a declarer level with the lowest other total wins")
    penalty: int = rule(20, "L8: fixed cost of a failed declaration (plus d - m), 0..1000")
    elimination_score: int = rule(100, "L9: total that eliminates a player (>=), 1..10000")
    max_turns: int = rule(200, "L10: completed turns before a round is capped, 1..30000")
    first_player: str = rule("random", "L3: who starts the first round: 'random' (the game's own stream) "
                                       "or 'seat0'; then it passes left")
    cap_ends_match: bool = rule(True, "L10: in a match, a capped round ends the match")

    def __post_init__(self) -> None:
        def is_int(x) -> bool:
            return isinstance(x, int) and not isinstance(x, bool)

        if not is_int(self.num_players) or not 2 <= self.num_players <= 8:
            raise ValueError(f"num_players must be an int in 2..8 (L2), got {self.num_players!r}")
        if not is_int(self.hand_size) or not 1 <= self.hand_size <= 5:
            raise ValueError(f"hand_size must be an int in 1..5 (L3), got {self.hand_size!r}")
        seq = self.sequence_lengths
        if isinstance(seq, list):
            object.__setattr__(self, "sequence_lengths", tuple(seq))
            seq = self.sequence_lengths
        if (
            not isinstance(seq, tuple)
            or not all(is_int(n) and 3 <= n <= 5 for n in seq)
            or len(set(seq)) != len(seq)
        ):
            raise ValueError(f"sequence_lengths must be a tuple of distinct ints in 3..5 (L5), got {seq!r}")
        object.__setattr__(self, "sequence_lengths", tuple(sorted(seq)))
        for name in ("sequence_same_suit", "tie_wins", "cap_ends_match"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be a bool, got {getattr(self, name)!r}")
        if not is_int(self.penalty) or not 0 <= self.penalty <= 1000:
            raise ValueError(f"penalty must be an int in 0..1000 (L8), got {self.penalty!r}")
        if not is_int(self.elimination_score) or not 1 <= self.elimination_score <= 10000:
            raise ValueError(f"elimination_score must be an int in 1..10000 (L9), got {self.elimination_score!r}")
        if not is_int(self.max_turns) or not 1 <= self.max_turns <= 30000:
            raise ValueError(f"max_turns must be an int in 1..30000 (L10), got {self.max_turns!r}")
        if self.first_player not in FIRST_PLAYER_MODES:
            raise ValueError(f"first_player must be one of {FIRST_PLAYER_MODES}, got {self.first_player!r}")
