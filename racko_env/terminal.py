"""Rack-O in words, as a player at the table sees it (``deckgym play``): the state from one seat's
observation, the legal moves by name, typed moves, what the others did (public information only).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from deckgym.terminal import Move, plural
from racko_env.state import DISCARD_DRAWN, DRAW, TAKE
from racko_env.tables import r8_points

class RackoText:
    """What a Rack-O player at the table sees, in words."""

    title = "Rack-O"

    def __init__(self, core: Any) -> None:
        self.core = core
        self.rules = core.rules

    @staticmethod
    def card(c: int) -> str:
        return str(int(c))

    def intro(self) -> list[str]:
        r = self.rules
        run = f", with a run of {r.min_run_to_win} consecutive numbers such as 24-25-26" if r.min_run_to_win > 1 else ""
        return [f"Cards: the numbers 1 to {self.core.deck_size}, one of each (R1); your rack has 10 slots, "
                "slot 1 at the front (R2).",
                f"Goal: the 10 cards of your rack increasing from slot 1 to slot 10{run} (R7): a Rack-O.",
                "Each turn: draw from the pile or take the discard, then put the card in a slot "
                "(the card there is discarded) or discard a drawn card (R4, R5).",
                "Points: 5 for each card of the increasing stretch from slot 1; 75 for going out (R8)."]

    def view(self, v: dict, names: list[str], me: int, match: bool) -> list[str]:
        P = self.core.num_players
        lines = [f"Draw pile: {plural(v['draw_size'], 'card')}.  Discard pile: {plural(v['discard_size'], 'card')}, top "
                 + (self.card(v["discard_top"]) if v["discard_top"] else "(empty)") + "."]
        lines.append("Opponents (what is known):")
        for i in range(P - 1):
            s = (me + 1 + i) % P
            known = [f"slot {k + 1} = {self.card(c)}" for k, c in enumerate(v["opp_known"][i]) if c > 0]
            txt = ", ".join(known) + "; other slots unknown" if known else "no card known"
            score = f"  (score {v['scores'][i + 1]})" if match else ""
            lines.append(f"  {names[s]}: {txt}{score}")
        lines += self.own_lines(v)
        if match:
            lines.append(f"Your score: {v['scores'][0]} (the match ends when someone reaches {self.rules.target_score}).")
        return lines

    def own_step(self, a: int, before: dict, after: dict) -> str | None:
        """What the person learnt from their own move: nothing here (the drawn card is shown with the
        next decision, the rack at the next turn)."""
        return None

    def mid_turn(self, v: dict) -> list[str]:
        """The lines shown for the second decision of a turn."""
        return self.own_lines(v)

    def own_lines(self, v: dict) -> list[str]:
        """The player's rack and the card in hand."""
        rack = v["rack"]
        width = max(3, max(len(self.card(c)) for c in rack) + 1)
        lines = ["Your rack (slot 1 = front):",
                 "  slot " + "".join(f"{k:>{width}}" for k in range(1, 11)),
                 "  card " + "".join(f"{self.card(c):>{width}}" for c in rack)]
        pts = int(r8_points(np.asarray(rack)))
        lines.append("  " + self.order_text(pts // 5) + f" (R8: {pts} points now)")
        if v["hand"]:
            how = "drawn from the pile" if v["phase"] == 2 else "taken from the discard pile"
            lines.append(f"You hold {self.card(v['hand'])} ({how}).")
        return lines

    @staticmethod
    def order_text(n: int) -> str:
        """How much of a rack counts under R8, from the number ``n`` of cards increasing from slot 1."""
        if n >= 10:
            return "all 10 cards increase from slot 1"
        if n == 1:
            return "slot 2 is already lower than slot 1, so only slot 1 counts"
        return f"slots 1-{n} increase, slot {n + 1} breaks the order"

    def reveal(self, table: dict, labels: list[str], me: int, in_round: list[int]) -> list[str]:
        """Every rack as the round ended (the racks are shown to score, R8)."""
        w = max(len(labels[s]) for s in range(len(labels)))
        return ["Racks shown:"] + [f"  {labels[s]:<{w}}  " + " ".join(f"{self.card(c):>2}" for c in table["racks"][s])
                                   for s in range(len(labels))]

    def moves(self, v: dict, mask: np.ndarray) -> list[Move]:
        out = []
        hand, rack, top = v["hand"], v["rack"], v["discard_top"]
        for a in np.flatnonzero(mask):
            a = int(a)
            if a == DRAW:
                out.append(Move(a, "draw from the pile", ("draw", "pile"), {"pile": "draw pile"}))
            elif a == TAKE:
                out.append(Move(a, f"take discard {self.card(top)}", ("take", "take discard"), {"pile": "discard pile"}))
            elif TAKE < a < DISCARD_DRAWN:
                k = a - TAKE
                out.append(Move(a, f"put {self.card(hand)} in slot {k} (replacing {self.card(rack[k - 1])})",
                                (f"slot {k}", f"put in slot {k}", f"put {self.card(hand)} in slot {k}"), {"slot": k}))
            elif a == DISCARD_DRAWN:
                out.append(Move(a, f"discard {self.card(hand)}", ("discard",), {"pile": "discard pile"}))
        return out

    def prompt(self, v: dict) -> str:
        """What to do now, for the browser (where a click plays the move)."""
        held = self.card(v["hand"])
        return ("Your turn: click the draw pile, or the discard pile to take its top card (it must go into your rack).",
                f"Click the slot of your rack where {held} goes (the card there is discarded).",
                f"You drew {held}: click a slot of your rack for it, or the discard pile to throw it away.")[int(v["phase"])]

    def hint(self, v: dict) -> str:
        return ("first choose a pile: draw from the pile or take the discard", "put the card you took in a slot 1-10",
                "put the drawn card in a slot 1-10 or discard it")[int(v["phase"])]

    def parse(self, text: str, moves: list[Move], v: dict) -> Move | str | None:
        m = re.search(r"slot\s*(\d+)", text)
        if m and not 1 <= int(m.group(1)) <= 10:
            return f"there is no slot {m.group(1)} (slots 1-10)"
        return None

    # -- what the others did (public information only) ------------------------------------------
    def opponent_step(self, who: str, a: int, before: dict, after: dict | None, partial: str | None,
                      res: Any) -> tuple[str | None, str | None]:
        """(event line when the turn is complete, partial description of the turn so far)."""
        if a == DRAW:
            return None, f"{who} drew from the pile"
        if a == TAKE:
            return None, f"{who} took the discard {self.card(before['discard_top'])}"
        start = partial or f"{who} played"
        went = bool(res.round_over[0]) and bool(res.extra.get("went_out", np.zeros((1, 1)))[0].any())
        if TAKE < a < DISCARD_DRAWN:
            line = f"{start} and put it in slot {a - TAKE}"
            if after is not None:
                line += f", discarding {self.card(after['discard_top'])}"
            return line + (": Rack-O!" if went else ""), None
        if after is not None:
            return f"{start} and discarded {self.card(after['discard_top'])}", None
        return f"{start} and discarded it", None

    def round_result(self, res: Any, names: list[str], me: int, last_seat: int | None = None,
                     last_action: int | None = None) -> list[str]:
        """Who went out (R7) or the cap (R9), and every seat's points."""
        P = self.core.num_players
        went = res.extra["went_out"][0]
        w = max(len(n) for n in names)
        lines = []
        if went.any():
            out = int(np.flatnonzero(went)[0])
            bonus = int(res.extra["run_bonus"][0, out])
            lines.append(f"{names[out]} went out: Rack-O!" + (f" (run bonus {bonus})" if bonus else ""))
        else:
            lines.append(f"No Rack-O within {self.rules.max_turns} turns (R9): the most points win the round.")
        for s in range(P):
            lines.append(f"  {names[s]:<{w}} round points {int(res.round_points[0, s]):>4}   "
                         f"score {int(res.total_points[0, s]):>5}")
        return lines

    def after_round(self, res: Any, names: list[str], me: int) -> list[str]:
        """Nobody leaves a Rack-O match between rounds."""
        return []
