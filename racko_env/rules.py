"""Rack-O rules: the settings of one game, validated (``docs/RULES.md`` R1–R12).

:class:`RackoRules` is a frozen dataclass; ``None`` fields are resolved to the spec's
defaults in ``__post_init__`` (so ``RackoRules(num_players=3).deck_size == 50``), and an
impossible setting raises ``ValueError`` naming the field.

Decisions taken where the spec or the seeds are ambiguous (each one is a field, so a user
can switch it; the default is listed first):

- **R1** ``deck_size`` is capped at 127 because cards are stored as ``int8``.
- **R3** the dealer deals one card at a time starting with the player to his left, and each
  player fills his rack from slot 10 to slot 1; the card after the deal is turned up, the
  next one is the top of the draw pile.
- **R4/R5** a player who was dealt an increasing rack still has to play a turn: Rack-O is
  only checked at the end of the owner's turn (R7 "at the end of that turn").
- **R6** the reshuffle happens lazily, when the player to move chooses to draw from an
  empty draw pile (never earlier), so the timing of the randomness is the spec's.
  ``reshuffle="flip"`` turns the discard pile (without its top card) over: its bottom card
  becomes the top of the new draw pile.
- **R7** a "run" is a sequence of consecutive numbers in adjacent slots (on an increasing
  rack, consecutive numbers are necessarily adjacent); ``min_run_to_win`` counts cards.
- **R8** every player who did not go out scores ``5 ×`` the length of the increasing prefix
  from slot 1 (at least 1 card, so at least 5 points); a rack that is fully increasing but
  lacks the R7 run scores 50.
- **R9** ``max_turns`` counts completed turns of the round (both decisions of a turn are one
  turn). A Rack-O on the last allowed turn is still a Rack-O. With ``episode="match"`` a
  capped round only ends the round: the match goes on (R12 always ends it, since the round
  winner scores at least 5), and the match end is a termination.
- **R10** the bonus goes only to the player who went out, for the longest run in the rack
  (runs shorter than 3 earn nothing).
- **R11** ``partner_bonus=True``: with ``partners=True`` the player who went out earns the R10
  run bonus for the team even if ``bonus=False`` (seed 000 describes the run bonus as part of
  the partner variant; docs/RULES.md R11 says the same). Only the rack of the player who went out
  counts. In the partner variant every per-seat score (round points, totals) is the team's
  score; the individual R8 points are reported separately (``own_points``).
- **R12** a match ends after the round in which some player (team) reaches ``target_score``;
  the highest total wins and equal highest totals share the win.
"""

from __future__ import annotations

from dataclasses import dataclass

from deckgym.rules import Rules, rule

__all__ = ["RackoRules", "DEFAULT_DECK", "MAX_DECK"]

#: R1: deck size by number of players.
DEFAULT_DECK = {2: 40, 3: 50, 4: 60}
#: Cards are int8 in the state.
MAX_DECK = 127
#: R10: bonus by longest run (3, 4, 5, 6 or more).
RUN_BONUS = {3: 50, 4: 100, 5: 200, 6: 400}
#: Largest total kept in the int16 state (a round adds at most 2 × 475 in partners).
MAX_TARGET = 30_000
MAX_TURNS = 30_000


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


@dataclass(frozen=True)
class RackoRules(Rules):
    """The settings of a Rack-O game (docs/RULES.md R1–R12); impossible settings raise
    ``ValueError`` naming the field. Each field's meaning is written beside it
    (``deckgym rules racko`` prints them)."""

    num_players: int = rule(2, "R1: players, 2..4")
    deck_size: int | None = rule(None, f"R1: cards 1..N; None: 40 / 50 / 60 for 2 / 3 / 4 players; "
                                       f"an override needs 10 * num_players + 2 <= N <= {MAX_DECK}")
    min_run_to_win: int | None = rule(None, "R7: cards of consecutive numbers needed to go out, 0..10 "
                                            "(0 or 1: no run); None: 3 with 2 players, else 0")
    bonus: bool = rule(False, "R10: Bonus Rack-O, a run bonus for the player who goes out")
    partners: bool = rule(False, "R11: partner variant, 4 players only, seats 0 & 2 against 1 & 3")
    partner_bonus: bool = rule(True, "R11: with partners, the run bonus is earned even without bonus")
    reshuffle: str = rule("shuffle", "R6: an empty draw pile is rebuilt from the discards: 'shuffle' or 'flip'")
    max_turns: int = rule(300, f"R9: completed turns before a round is capped, 1..{MAX_TURNS}")
    target_score: int = rule(500, f"R12: total that ends the match, 1..{MAX_TARGET}")

    def __post_init__(self) -> None:
        p = self.num_players
        if not _is_int(p) or not 2 <= p <= 4:
            raise ValueError(f"num_players must be an int in 2..4 (R1), got {p!r}")
        n = self.deck_size
        if n is None:
            object.__setattr__(self, "deck_size", DEFAULT_DECK[p])
        elif not _is_int(n) or not 10 * p + 2 <= n <= MAX_DECK:
            raise ValueError(f"deck_size must be an int in {10 * p + 2}..{MAX_DECK} for {p} players (R1), got {n!r}")
        r = self.min_run_to_win
        if r is None:
            object.__setattr__(self, "min_run_to_win", 3 if p == 2 else 0)
        elif not _is_int(r) or not 0 <= r <= 10:
            raise ValueError(f"min_run_to_win must be an int in 0..10 (R7), got {r!r}")
        for name in ("bonus", "partners", "partner_bonus"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be a bool, got {getattr(self, name)!r}")
        if self.partners and p != 4:
            raise ValueError(f"partners requires num_players=4 (R11), got num_players={p}")
        if self.reshuffle not in ("shuffle", "flip"):
            raise ValueError(f"reshuffle must be 'shuffle' or 'flip' (R6), got {self.reshuffle!r}")
        if not _is_int(self.max_turns) or not 1 <= self.max_turns <= MAX_TURNS:
            raise ValueError(f"max_turns must be an int in 1..{MAX_TURNS} (R9), got {self.max_turns!r}")
        if not _is_int(self.target_score) or not 1 <= self.target_score <= MAX_TARGET:
            raise ValueError(f"target_score must be an int in 1..{MAX_TARGET} (R12), got {self.target_score!r}")

    # -- derived ------------------------------------------------------------------------
    @property
    def pile_size(self) -> int:
        """K = N − 10·P: cards outside the racks (draw pile + discard pile + card in hand)."""
        return int(self.deck_size) - 10 * self.num_players

    @property
    def run_bonus_active(self) -> bool:
        """Whether the player who goes out earns the R10 run bonus (R10, or R11 partners)."""
        return self.bonus or (self.partners and self.partner_bonus)

    @staticmethod
    def run_bonus(longest_run: int) -> int:
        """R10: bonus for the longest run (in cards) of the rack of the player who went out."""
        if longest_run < 3:
            return 0
        return RUN_BONUS[min(longest_run, 6)]

    def team_of(self, seat: int) -> int:
        """R11: team of a seat (seats 0&2 → 0, 1&3 → 1); without partners, the seat itself."""
        return seat % 2 if self.partners else seat
