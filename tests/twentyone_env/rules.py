"""Twenty-One's rules (see the package docstring)."""

from __future__ import annotations

from dataclasses import dataclass

from deckgym.rules import Rules, rule


@dataclass(frozen=True)
class TwentyOneRules(Rules):
    num_players: int = rule(2, "players at the table, 2-6")
    target: int = rule(21, "the highest total that does not bust")
    max_turns: int = rule(40, "decisions per round before the round is capped")
    rounds_to_win: int = rule(3, "round wins that win a match")

    def __post_init__(self) -> None:
        if not 2 <= self.num_players <= 6:
            raise ValueError(f"num_players must be 2-6, got {self.num_players}")
        for name in ("target", "max_turns", "rounds_to_win"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
