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
        return ["Goal: the lowest hand value when someone declares (L8).",
                "Card values: A=1, 2-10 as marked, J/Q/K=10 (L1); a hand's value is their sum.",
                "Each turn: declare (L7), or discard a group (L5) and then take a card (L4).",
                f"  Groups: {self.groups()}.",
                "  Take the top of the deck or one floor card (the previous player's discards)."]

    def groups(self) -> str:
        """The groups that may be thrown away (L5), under these rules."""
        r = self.rules
        runs = " or ".join(str(n) for n in r.sequence_lengths)
        suit = " of one suit" if r.sequence_same_suit else ""
        return f"a single, a pair, all four of a rank, a run of {runs} ranks{suit}, a flush"

    def value(self, ids: Any) -> int:
        """A hand's value: the sum of its cards (L1); a player's *score* is the sum of its round points."""
        return int(sum(self.cards.card_value(c) for c in ids))

    def view(self, v: dict, names: list[str], me: int, match: bool) -> list[str]:
        P = self.core.num_players
        alive = v["alive"]
        lines = [f"Deck: {plural(v['deck_size'], 'card')}."]
        lines.append("Opponents (what is known):")
        for i in range(P - 1):
            s = (me + 1 + i) % P
            if not alive[i + 1]:
                lines.append(f"  {names[s]}: eliminated (score {v['scores'][i + 1]})")
                continue
            known = np.flatnonzero(v["opp_known"][i])
            kt = "known: " + self.cardlist(known) if len(known) else "no card known"
            score = f"  (score {v['scores'][i + 1]})" if match else ""
            lines.append(f"  {names[s]}: {plural(v['opp_hand_size'][i], 'card')}, {kt}{score}")
        floor = [c for c in v["floor"] if c >= 0]
        src = "turned up from the deck" if v["turn"] == 0 else f"player_{self._previous(alive, me, P)}'s discards"
        lines.append(f"Floor ({src}): " + (self.cardlist(floor) if floor else "(empty)"))
        dead = np.flatnonzero(v["dead"])
        lines.append("Dead pile (out of play until the deck runs out, L6): "
                     + (self.cardlist(dead) if len(dead) else "(empty)"))
        lines += self.own_lines(v)
        if match:
            lines.append(f"Your score: {v['scores'][0]} (a player is out at {self.rules.elimination_score}, L9).")
        return lines

    @staticmethod
    def _previous(alive: np.ndarray, me: int, P: int) -> int:
        for i in range(P - 1, 0, -1):  # ego index i = seat me + i; the previous one alive
            if alive[i]:
                return (me + i) % P
        return me

    def own_step(self, a: int, before: dict, after: dict) -> str | None:
        """What the person learnt from their own move: the card the deck gave them (L4)."""
        if a != DRAW_DECK:
            return None
        new = sorted(set(int(c) for c in after["hand"] if c >= 0) - set(int(c) for c in before["hand"] if c >= 0))
        hand = [c for c in after["hand"] if c >= 0]
        got = f"You drew {self.cardlist(new)} from the deck. " if new else ""
        return got + f"Your hand: {self.cardlist(hand)} (hand value {self.value(hand)})."

    def mid_turn(self, v: dict) -> list[str]:
        """The lines shown for the second decision of a turn."""
        return self.own_lines(v)

    def own_lines(self, v: dict) -> list[str]:
        hand = [c for c in v["hand"] if c >= 0]
        lines = [f"Your hand: {self.cardlist(hand)}  (hand value {self.value(hand)})"]
        if v["phase"] == 1:
            lines.append(f"You discarded {self.cardlist(np.flatnonzero(v['discard']))}; now take a card.")
        elif v["can_declare"]:
            lines.append("You may declare: the lowest hand value wins the round (L7, L8).")
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
                target = {"cards": [self.cards.card_str(c, symbols=True) for c in ids]}
                discards.append((len(ids), ids, Move(a, "discard " + " ".join(names), (" ".join(names),), target)))
            elif a == DECLARE:
                tot = self.value(c for c in hand if c >= 0)
                others.append(Move(a, f"declare (your hand value: {tot})", ("declare",)))
            elif a == DRAW_DECK:
                others.append(Move(a, "take the deck", ("deck", "draw"), {"pile": "deck"}))
            else:
                c = floor[a - TAKE_FLOOR]
                others.append(Move(a, f"take {self.card(c)} from the floor", (f"take {self.card(c)}", self.card(c)),
                                   {"pile": "floor", "card": self.cards.card_str(c, symbols=True)}))
        discards.sort(key=lambda t: (-t[0], t[1]))
        return [m for *_, m in discards] + others

    def reveal(self, table: dict, labels: list[str], me: int, in_round: list[int]) -> list[str]:
        """The hands of the players in the round, as it ended (shown at a declaration, L7)."""
        w = max(len(labels[s]) for s in in_round)
        lines = ["Hands shown:"]
        for s in in_round:
            ids = [self.cards.parse_card(c) for c in table["hands"][s]]
            lines.append(f"  {labels[s]:<{w}}  {self.cardlist(ids):<{3 * HAND_MAX + 4}} hand value {self.value(ids):>2}")
        return lines

    def prompt(self, v: dict) -> str:
        """What to do now, for the browser (where a click plays the move)."""
        if v["phase"] == 1:
            return "Now take a card: click the deck, or a card of the floor."
        return ("Your turn: click the cards of a group in your hand (the groups are in the rules above), then the "
                "discard button" + (", or declare." if v["can_declare"] else "."))

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
            lines.append(f"{names[declarer]} declared with a hand value of {d}: "
                         + ("correct, the lowest hand (L8)." if ok else
                            f"false, someone had less: {self.rules.penalty} + the difference (L8)."))
        else:
            lines.append(f"Nobody declared within {self.rules.max_turns} turns (L10): no points this round.")
        for s in range(P):
            lines.append(f"  {names[s]:<{w}} round points {int(pts[s]):>4}   score {int(res.total_points[0, s]):>5}")
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
