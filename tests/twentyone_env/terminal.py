"""Twenty-One in words, for ``deckgym play`` (the text interface of ``deckgym.descriptor``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from deckgym.terminal import Move
from tests.twentyone_env.core import DRAW, STAND


class TwentyOneText:
    title = "Twenty-One"

    def __init__(self, core: Any) -> None:
        self.core, self.rules = core, core.rules

    def intro(self) -> list[str]:
        return [f"Goal: the highest total not over {self.rules.target}. Draw a card or stand."]

    def view(self, v: dict, names: list[str], me: int, match: bool) -> list[str]:
        P = self.core.num_players
        lines = [f"Deck: {int(v['deck_left'])} cards."]
        lines += [f"  {names[(me + i) % P]}: total {int(v['totals'][i])}" + (" (stood)" if v["stood"][i] else "")
                  for i in range(1, P)]
        return lines + self.own_lines(v)

    def own_lines(self, v: dict) -> list[str]:
        return [f"Your total: {int(v['totals'][0])}."]

    def own_step(self, a: int, before: dict, after: dict) -> str | None:
        return f"Your total: {int(after['totals'][0])}." if a == DRAW else None

    def mid_turn(self, v: dict) -> list[str]:
        return self.own_lines(v)

    def prompt(self, v: dict) -> str:
        return "Click a move: draw a card or stand."

    def moves(self, v: dict, mask: np.ndarray) -> list[Move]:
        every = [Move(DRAW, "draw a card", ("hit",)), Move(STAND, "stand", ("stay",))]
        return [m for m in every if mask[m.action]]

    def parse(self, text: str, moves: list[Move], v: dict) -> Move | str | None:
        return None

    def hint(self, v: dict) -> str:
        return "draw or stand"

    def opponent_step(self, who: str, a: int, before: dict, after: dict | None, partial: str | None,
                      res: Any) -> tuple[str | None, str | None]:
        return (f"{who} drew" if a == DRAW else f"{who} stood"), None

    def round_result(self, res: Any, names: list[str], me: int, last_seat: int | None = None,
                     last_action: int | None = None) -> list[str]:
        won = [names[s] for s in np.flatnonzero(res.round_points[0])]
        return [("Round won by " + ", ".join(won)) if won else "Everybody bust."]

    def reveal(self, table: dict, labels: list[str], me: int, in_round: list[int]) -> list[str]:
        return [f"  {labels[s]}: {' '.join(map(str, table['hands'][s]))} = {table['totals'][s]}" for s in in_round]

    def after_round(self, res: Any, names: list[str], me: int) -> list[str]:
        return []
