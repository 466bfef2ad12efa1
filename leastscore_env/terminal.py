"""Least Score in words, as a player at the table sees it (``deckgym play``): the state from one seat's
observation, the legal moves by name, typed moves (cards as ``3c 4d 5s``), what the others did
(public information only).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from deckgym.terminal import Move, plural
from leastscore_env import cards
from leastscore_env.state import DECLARE, DRAW_DECK, HAND_MAX, TAKE_FLOOR

class LeastScoreText:
    """What a Least Score player at the table sees, in words."""

    title = "Least Score"

    def __init__(self, core: Any) -> None:
        self.core = core
        self.rules = core.rules
        self.cards = cards

    symbols = True  # suit symbols; letters (``10H``) on a terminal that cannot print them

    def card(self, c: int) -> str:
        return self.cards.card_str(int(c), symbols=self.symbols)

    def cardlist(self, ids: Any) -> str:
        return " ".join(self.card(c) for c in ids)

    def intro(self) -> list[str]:
        # one line per idea, each short enough for an 80-column terminal
        return ["Goal: the lowest hand total (A=1, 2-10, J/Q/K=10).",
                "Each turn: declare (L7), or discard a group (L5) and then take a card (L4).",
                "  Groups: a single, a pair, all four of a rank, a run of 3 or 5 ranks, a flush.",
                "  Take the top of the deck or one floor card (the previous player's discards)."]

    def total(self, ids: Any) -> int:
        return int(sum(self.cards.card_value(c) for c in ids))

    def view(self, v: dict, names: list[str], me: int, match: bool) -> list[str]:
        P = self.core.num_players
        alive = v["alive"]
        lines = [f"Deck: {plural(v['deck_size'], 'card')}."]
        lines.append("Opponents (what is known):")
        for i in range(P - 1):
            s = (me + 1 + i) % P
            if not alive[i + 1]:
                lines.append(f"  {names[s]}: eliminated (total {v['scores'][i + 1]})")
                continue
            known = np.flatnonzero(v["opp_known"][i])
            kt = "known: " + self.cardlist(known) if len(known) else "no card known"
            score = f"  (total {v['scores'][i + 1]})" if match else ""
            lines.append(f"  {names[s]}: {plural(v['opp_hand_size'][i], 'card')}, {kt}{score}")
        floor = [c for c in v["floor"] if c >= 0]
        src = "turned up from the deck" if v["turn"] == 0 else f"player_{self._previous(alive, me, P)}'s discards"
        lines.append(f"Floor ({src}): " + (self.cardlist(floor) if floor else "(empty)"))
        lines += self.own_lines(v)
        if match:
            lines.append(f"Your total: {v['scores'][0]} (eliminated at {self.rules.elimination_score}).")
        return lines

    @staticmethod
    def _previous(alive: np.ndarray, me: int, P: int) -> int:
        for i in range(P - 1, 0, -1):  # ego index i = seat me + i; the previous one alive
            if alive[i]:
                return (me + i) % P
        return me

    def own_lines(self, v: dict) -> list[str]:
        hand = [c for c in v["hand"] if c >= 0]
        lines = [f"Your hand: {self.cardlist(hand)}  (total {self.total(hand)})"]
        if v["phase"] == 1:
            lines.append(f"You discarded {self.cardlist(np.flatnonzero(v['discard']))}; now take a card.")
        elif v["can_declare"]:
            lines.append("You may declare: the lowest total wins the round (L7, L8).")
        return lines

    def moves(self, v: dict, mask: np.ndarray) -> list[Move]:
        hand = [int(c) for c in v["hand"]]
        floor = [int(c) for c in v["floor"]]
        discards, others = [], []
        for a in np.flatnonzero(mask):
            a = int(a)
            if a < DECLARE:
                ids = [hand[i] for i in range(HAND_MAX) if (a + 1) >> i & 1]
                names = [self.card(c) for c in ids]
                discards.append((len(ids), ids, Move(a, "discard " + " ".join(names), (" ".join(names),))))
            elif a == DECLARE:
                tot = self.total(c for c in hand if c >= 0)
                others.append(Move(a, f"declare (your total: {tot})", ("declare",)))
            elif a == DRAW_DECK:
                others.append(Move(a, "take the deck", ("deck", "draw")))
            else:
                c = floor[a - TAKE_FLOOR]
                others.append(Move(a, f"take {self.card(c)} from the floor", (f"take {self.card(c)}", self.card(c))))
        discards.sort(key=lambda t: (-t[0], t[1]))
        return [m for *_, m in discards] + others

    def reveal(self, table: dict, labels: list[str], me: int, in_round: list[int]) -> list[str]:
        """The hands of the players in the round, as it ended (shown at a declaration, L7)."""
        w = max(len(labels[s]) for s in in_round)
        lines = ["Hands shown:"]
        for s in in_round:
            ids = [self.cards.parse_card(c) for c in table["hands"][s]]
            lines.append(f"  {labels[s]:<{w}}  {self.cardlist(ids):<{3 * HAND_MAX + 4}} total {self.total(ids):>2}")
        return lines

    def hint(self, v: dict) -> str:
        if v["phase"] == 0:
            return "discard a legal group from your hand" + (" or declare" if v["can_declare"] else "")
        return "take the top of the deck or one floor card"

    def parse(self, text: str, moves: list[Move], v: dict) -> Move | str | None:
        """Cards typed in any order (``discard 5s 3c 4d``, ``take 7c``)."""
        words = text.split()
        if words and words[0] in ("discard", "take"):
            verb, words = words[0], words[1:]
        else:
            verb = ""
        if not words:
            return None
        try:
            ids = sorted(self.cards.parse_card(w) for w in words)
        except ValueError:
            return None
        hand = [int(c) for c in v["hand"] if c >= 0]
        floor = [int(c) for c in v["floor"] if c >= 0]
        if v["phase"] == 0 and verb != "take":
            missing = [c for c in ids if c not in hand]
            if missing:
                return f"{self.cardlist(missing)} {'is' if len(missing) == 1 else 'are'} not in your hand"
            for m in moves:
                if m.action < DECLARE and sorted(hand[i] for i in range(HAND_MAX) if (m.action + 1) >> i & 1) == ids:
                    return m
            return f"{self.cardlist(ids)} is not a legal group (L5: a single, a pair, all four of a rank, " \
                   "a run of 3 or 5 ranks, a 5-card flush)"
        if v["phase"] == 1 and verb != "discard" and len(ids) == 1:
            if ids[0] not in floor:
                return f"{self.card(ids[0])} is not on the floor"
            return next(m for m in moves if m.action >= TAKE_FLOOR and floor[m.action - TAKE_FLOOR] == ids[0])
        return None

    # -- what the others did (public information only) ------------------------------------------
    def opponent_step(self, who: str, a: int, before: dict, after: dict | None, partial: str | None,
                      res: Any) -> tuple[str | None, str | None]:
        if a == DECLARE:
            return f"{who} declared", None
        if a < DECLARE:
            if after is None:
                return f"{who} discarded", None
            return None, f"{who} discarded {self.cardlist(np.flatnonzero(after['discard']))}"
        start = partial or f"{who} played"
        if a == DRAW_DECK:
            return f"{start} and took the deck", None
        return f"{start} and took {self.card(before['floor'][a - TAKE_FLOOR])} from the floor", None

    def round_result(self, res: Any, names: list[str], me: int, last_seat: int | None = None,
                     last_action: int | None = None) -> list[str]:
        """The declaration (L8) or the cap (L10), and every seat's points."""
        declarer = last_seat if last_action == DECLARE else None
        P = self.core.num_players
        lines = []
        tot = res.extra["hand_total"][0]
        pts = res.round_points[0]
        w = max(len(n) for n in names)
        if declarer is not None:
            ok = int(pts[declarer]) == 0
            d = int(tot[declarer])
            lines.append(f"{names[declarer]} declared with a total of {d}: "
                         + ("correct, the lowest hand (L8)." if ok else
                            f"false, someone had less: {self.rules.penalty} + the difference (L8)."))
        else:
            lines.append(f"Nobody declared within {self.rules.max_turns} turns (L10): no points this round.")
        for s in range(P):
            lines.append(f"  {names[s]:<{w}} round points {int(pts[s]):>4}   total {int(res.total_points[0, s]):>5}")
        return lines

    def after_round(self, res: Any, names: list[str], me: int) -> list[str]:
        """In a match, who reached the elimination score this round (L9)."""
        limit = self.rules.elimination_score
        if self.core.episode != "match" or res.terminated[0]:
            return []
        tot, pts = res.total_points[0], res.round_points[0]
        return [f"You reached {limit} points: you are eliminated (L9)." if s == me
                else f"{names[s]} reached {limit} points and is eliminated (L9)."
                for s in range(self.core.num_players) if tot[s] >= limit and tot[s] - pts[s] < limit]
