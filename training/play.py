"""Play a deckgym game in the terminal against agents (``deckgym play``).

    deckgym play racko --vs racko:sequence
    deckgym play racko --vs racko:sequence --vs racko:ranges --players 3 --seat 1 --match
    deckgym play leastscore --vs leastscore:counting          # 4 players: 3 counting agents
    deckgym play racko --vs ppo:models/racko_2p.zip --rule bonus=true

Everything shown comes from the human's own observation (``core.observe`` of the human's
seat decoded by ``core.obs_view``) and from what every player sees at the table: the moves
of the others (which pile, which slot, which floor card: public by the rules) and the
cards that were face up. Never the hidden state: not an opponent's unknown card, not the
draw pile. At each decision the legal moves are listed by number and name; type either
(a unique start of a name is enough; Least Score cards may be typed as ``3c 4d 5s``); ``?``
lists the moves again, ``q`` leaves. End of input leaves cleanly.

The session is driven by :class:`PlaySession` (``input_fn`` and ``output`` are injectable,
which is how the tests play scripted games); :func:`play` is the one-call form.
"""

from __future__ import annotations

import re
import secrets
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence, TextIO

import numpy as np

from agents.registry import make_agent
from deckgym.registration import game as game_entry
from leastscore_env.core import DECLARE, DRAW_DECK, HAND_MAX, TAKE_FLOOR
from racko_env.core import DISCARD_DRAWN, DRAW, TAKE

__all__ = ["PlaySession", "play", "Move"]

QUIT_WORDS = {"q", "quit", "exit"}
HELP_WORDS = {"?", "h", "help", "moves"}
_SUIT_ASCII = str.maketrans({"\u2663": "c", "\u2666": "d", "\u2665": "h", "\u2660": "s"})


def _can_encode(text: str, encoding: str) -> bool:
    try:
        text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def _n(k: int, word: str) -> str:
    return f"{k} {word}" + ("" if k == 1 else "s")


def normalize(text: str) -> str:
    """Lower case, suit symbols as letters, single spaces: how typed moves are compared."""
    return " ".join(text.translate(_SUIT_ASCII).lower().replace(",", " ").split())


@dataclass
class Move:
    action: int
    name: str
    aliases: tuple[str, ...] = ()
    keys: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        self.keys = tuple(dict.fromkeys(normalize(k) for k in (self.name, *self.aliases)))


class _Quit(Exception):
    pass


# ---------------------------------------------------------------------------------------------
# Rack-O text
# ---------------------------------------------------------------------------------------------
class _RackoText:
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
        run = f", with a run of {r.min_run_to_win} consecutive numbers" if r.min_run_to_win > 1 else ""
        return [f"Goal: get the 10 cards of your rack increasing from slot 1 (front) to slot 10{run} (R7).",
                "Each turn: draw from the pile or take the discard, then put the card in a slot "
                "(the card there is discarded) or discard a drawn card (R4, R5)."]

    def view(self, v: dict, names: list[str], me: int, match: bool) -> list[str]:
        P = self.core.num_players
        lines = [f"Draw pile: {_n(v['draw_size'], 'card')}.  Discard pile: {_n(v['discard_size'], 'card')}, top "
                 + (self.card(v["discard_top"]) if v["discard_top"] else "(empty)") + "."]
        lines.append("Opponents (what is known):")
        for i in range(P - 1):
            s = (me + 1 + i) % P
            known = [f"slot {k + 1} = {self.card(c)}" for k, c in enumerate(v["opp_known"][i]) if c > 0]
            txt = ", ".join(known) + "; other slots unknown" if known else "no card known"
            score = f"  (total {v['scores'][i + 1]})" if match else ""
            lines.append(f"  {names[s]}: {txt}{score}")
        lines += self.rack_lines(v)
        if match:
            lines.append(f"Your total: {v['scores'][0]} (a match ends at {self.rules.target_score}).")
        return lines

    def rack_lines(self, v: dict) -> list[str]:
        from racko_env.core import r8_points

        rack = v["rack"]
        width = max(3, max(len(self.card(c)) for c in rack) + 1)
        lines = ["Your rack (slot 1 = front):",
                 "  slot " + "".join(f"{k:>{width}}" for k in range(1, 11)),
                 "  card " + "".join(f"{self.card(c):>{width}}" for c in rack)]
        pts = int(r8_points(np.asarray(rack)))
        lines.append(f"  in order from slot 1 up to slot {pts // 5} ({pts} points if the round ended now)")
        if v["hand"]:
            how = "drawn from the pile" if v["phase"] == 2 else "taken from the discard pile"
            lines.append(f"You hold {self.card(v['hand'])} ({how}).")
        return lines

    def moves(self, v: dict, mask: np.ndarray) -> list[Move]:
        out = []
        hand, rack, top = v["hand"], v["rack"], v["discard_top"]
        for a in np.flatnonzero(mask):
            a = int(a)
            if a == DRAW:
                out.append(Move(a, "draw from the pile", ("draw", "pile")))
            elif a == TAKE:
                out.append(Move(a, f"take discard {self.card(top)}", ("take", "take discard")))
            elif TAKE < a < DISCARD_DRAWN:
                k = a - TAKE
                out.append(Move(a, f"put {self.card(hand)} in slot {k} (replacing {self.card(rack[k - 1])})",
                                (f"slot {k}", f"put in slot {k}", f"put {self.card(hand)} in slot {k}")))
            elif a == DISCARD_DRAWN:
                out.append(Move(a, f"discard {self.card(hand)}", ("discard",)))
        return out

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

    def round_result(self, res: Any, names: list[str], me: int) -> list[str]:
        P = self.core.num_players
        went = res.extra["went_out"][0]
        w = max(len(n) for n in names)
        lines = []
        if went.any():
            w = int(np.flatnonzero(went)[0])
            bonus = int(res.extra["run_bonus"][0, w])
            lines.append(f"{names[w]} went out: Rack-O!" + (f" (run bonus {bonus})" if bonus else ""))
        else:
            lines.append(f"No Rack-O within {self.rules.max_turns} turns (R9): the most points win the round.")
        for s in range(P):
            lines.append(f"  {names[s]:<{w}} round points {int(res.round_points[0, s]):>4}   "
                         f"total {int(res.total_points[0, s]):>5}")
        return lines


# ---------------------------------------------------------------------------------------------
# Least Score text
# ---------------------------------------------------------------------------------------------
class _LeastScoreText:
    """What a Least Score player at the table sees, in words."""

    title = "Least Score"

    def __init__(self, core: Any) -> None:
        self.core = core
        self.rules = core.rules
        from leastscore_env import cards

        self.cards = cards

    symbols = True  # suit symbols; letters (``10H``) on a terminal that cannot print them

    def card(self, c: int) -> str:
        return self.cards.card_str(int(c), symbols=self.symbols)

    def cardlist(self, ids: Any) -> str:
        return " ".join(self.card(c) for c in ids)

    def intro(self) -> list[str]:
        return ["Goal: the lowest hand total (A=1, 2-10, J/Q/K=10). Each turn: declare, or discard a single, "
                "a pair, all four of a rank, a run of 3 or 5 ranks or a 5-card flush,",
                "then take the top of the deck or one card of the floor (the previous player's discards) (L4-L7)."]

    def total(self, ids: Any) -> int:
        return int(sum(self.cards.card_value(c) for c in ids))

    def view(self, v: dict, names: list[str], me: int, match: bool) -> list[str]:
        P = self.core.num_players
        alive = v["alive"]
        lines = [f"Deck: {_n(v['deck_size'], 'card')}."]
        lines.append("Opponents (what is known):")
        for i in range(P - 1):
            s = (me + 1 + i) % P
            if not alive[i + 1]:
                lines.append(f"  {names[s]}: eliminated (total {v['scores'][i + 1]})")
                continue
            known = np.flatnonzero(v["opp_known"][i])
            kt = "known: " + self.cardlist(known) if len(known) else "no card known"
            score = f"  (total {v['scores'][i + 1]})" if match else ""
            lines.append(f"  {names[s]}: {_n(v['opp_hand_size'][i], 'card')}, {kt}{score}")
        floor = [c for c in v["floor"] if c >= 0]
        src = "turned up from the deck" if v["turn"] == 0 else f"player_{self._previous(alive, me, P)}'s discards"
        lines.append(f"Floor ({src}): " + (self.cardlist(floor) if floor else "(empty)"))
        lines += self.hand_lines(v)
        if match:
            lines.append(f"Your total: {v['scores'][0]} (eliminated at {self.rules.elimination_score}).")
        return lines

    @staticmethod
    def _previous(alive: np.ndarray, me: int, P: int) -> int:
        for i in range(P - 1, 0, -1):  # ego index i = seat me + i; the previous one alive
            if alive[i]:
                return (me + i) % P
        return me

    def hand_lines(self, v: dict) -> list[str]:
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

    def round_result(self, res: Any, names: list[str], me: int, declarer: int | None = None,
                     in_round: list[int] | None = None) -> list[str]:
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
            seats = in_round if in_round is not None else range(P)
            lines.append("Hands shown (L7), totals: " + ", ".join(f"{names[s]} {int(tot[s])}" for s in seats))
        else:
            lines.append(f"Nobody declared within {self.rules.max_turns} turns (L10): no points this round.")
        for s in range(P):
            lines.append(f"  {names[s]:<{w}} round points {int(pts[s]):>4}   total {int(res.total_points[0, s]):>5}")
        return lines


_TEXTS = {"racko": _RackoText, "leastscore": _LeastScoreText}


# ---------------------------------------------------------------------------------------------
# the session
# ---------------------------------------------------------------------------------------------
def _seed_of(*parts: int) -> int:
    return int(np.random.SeedSequence([int(p) & 0xFFFFFFFF for p in parts]).generate_state(1)[0])


class PlaySession:
    """One human seat against agents, on the game's core with one game (B = 1).

    Args:
        game: ``"racko"`` or ``"leastscore"``.
        vs: agent specs of the other seats in seat order after the human; the last one
            fills the remaining seats.
        players: table size (default: the rules' default, or more if ``vs`` names more).
        seed: the deal (default: random, printed so the game can be replayed).
        seat: the human's seat.
        rules_kwargs: other rules fields; ``match``: play a whole match instead of a round.
        input_fn: reads one line (``input``-like; raises ``EOFError`` at the end);
        output: where the text goes.
    """

    def __init__(self, game: str, vs: Sequence[str] = (), players: int | None = None, seed: int | None = None,
                 seat: int = 0, rules_kwargs: dict[str, Any] | None = None, match: bool = False,
                 input_fn: Callable[[str], str] = input, output: TextIO | None = None) -> None:
        entry = game_entry(game)
        self.game = entry.name
        vs = list(vs) or ["random"]
        kw = dict(rules_kwargs or {})
        if players is not None:
            kw["num_players"] = players
        elif "num_players" not in kw:
            default = entry.make_rules().num_players
            kw["num_players"] = max(default, len(vs) + 1)
        self.rules = entry.make_rules(**kw)
        P = self.rules.num_players
        if len(vs) > P - 1:
            raise ValueError(f"{len(vs)} opponents given (--vs) but a table of {P} has only {P - 1} other seats")
        if not (isinstance(seat, (int, np.integer)) and 0 <= seat < P):
            raise ValueError(f"seat must be in 0..{P - 1}, got {seat!r}")
        self.core = entry.make_core(self.rules, episode="match" if match else "round", reward="win")
        self.match = match
        self.seat = int(seat)
        self.seed = int(seed) if seed is not None else secrets.randbelow(2**31)
        self.specs: dict[int, str] = {}
        self.agents: dict[int, Any] = {}
        others = [(self.seat + i) % P for i in range(1, P)]
        for i, s in enumerate(others):
            spec = vs[min(i, len(vs) - 1)]
            self.specs[s] = spec
            self.agents[s] = make_agent(spec, self.core, seed=_seed_of(self.seed, 101, s), game=self.game)
        self.names = [f"player_{s}" for s in range(P)]
        self.labels = [f"you (player_{s})" if s == self.seat else f"player_{s} ({self.specs[s]})" for s in range(P)]
        self.text = _TEXTS[self.game](self.core)
        self.input_fn = input_fn
        self.output = output if output is not None else sys.stdout
        encoding = getattr(self.output, "encoding", None) or "utf-8"
        self.encoding = encoding if _can_encode("", encoding) else "ascii"
        self.text.symbols = _can_encode("\u2663\u2666\u2665\u2660", self.encoding)  # else letters
        self.state: Any = None
        self.events: list[str] = []
        self.round = 1

    # -- io --------------------------------------------------------------------------------------
    def _printable(self, text: str) -> str:
        """``text`` as the output's encoding can print it (a character it lacks becomes ``?``)."""
        return text.encode(self.encoding, "replace").decode(self.encoding)

    def say(self, line: str = "") -> None:
        self.output.write(self._printable(line + "\n"))

    def ask(self, prompt: str) -> str:
        self.output.write(self._printable(prompt))
        self.output.flush()
        try:
            line = self.input_fn("")
        except (EOFError, KeyboardInterrupt):
            raise _Quit("input closed") from None
        if line is None:
            raise _Quit("input closed")
        return str(line)

    # -- observation -----------------------------------------------------------------------------
    def my_view(self) -> dict:
        obs = self.core.observe(self.state, self.seat)
        return {k: v[0] for k, v in self.core.obs_view(obs).items()}

    # -- the game --------------------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        """Play to the end of the round (or match); returns the result (``quit`` if left early)."""
        P = self.core.num_players
        self.state = self.core.init(1, self.seed)
        self.say(f"{self.text.title}, {P} players, {'a match' if self.match else 'one round'}, seed {self.seed}.")
        self.say("Seats: " + ", ".join(self.labels) + ".")
        for line in self.text.intro():
            self.say(line)
        self.say("Type a move's number or its name; ? lists the moves, q leaves.")
        partial: str | None = None
        declarer: int | None = None
        out_told = False
        try:
            while True:
                cur = int(self.core.current_player(self.state)[0])
                before = self.my_view()
                if cur == self.seat:
                    a = self.human_decision()
                else:
                    obs = self.core.observe(self.state, cur)
                    mask = self.core.legal_action_mask(self.state)
                    a = int(self.agents[cur].act(obs, mask)[0])
                    if not mask[0, a]:
                        raise RuntimeError(f"agent {self.specs[cur]!r} chose the illegal action {a}")
                if self.game == "leastscore" and a == DECLARE:
                    declarer = cur
                res = self.core.step(self.state, np.array([a], dtype=np.int64))
                over = bool(res.round_over[0])
                if cur != self.seat and not out_told:
                    after = None if over else self.my_view()
                    line, partial = self.text.opponent_step(self.names[cur], a, before, after, partial, res)
                    if line:
                        self.events.append(line)
                if over:
                    in_round = [(self.seat + i) % P for i in range(P) if before["alive"][i]] \
                        if self.game == "leastscore" else list(range(P))
                    self.end_of_round(res, declarer, sorted(in_round))
                    declarer, partial = None, None
                    if res.terminated[0] or res.truncated[0]:
                        return self.final(res)
                    self.round += 1
                    self.say()
                    self.say(f"=== Round {self.round} ===")
                    if not self.core.alive(self.state)[0, self.seat] and not out_told:
                        self.say("You are out of the match; the others play on.")
                        out_told = True
        except _Quit as q:
            self.say()
            self.say(f"{str(q).capitalize()}: leaving the game (seed {self.seed}).")
            return {"game": self.game, "seed": self.seed, "quit": True}

    def human_decision(self) -> int:
        v = self.my_view()
        start_of_turn = v["phase"] == 0
        self.say()
        if start_of_turn:
            self.say(f"--- Your turn ({self.names[self.seat]}), turn {v['turn'] + 1}"
                     + (f", round {self.round}" if self.match else "") + " ---")
            if self.events:
                self.say("Since your last turn:")
                for e in self.events:
                    self.say("  " + e)
                self.events = []
            for line in self.text.view(v, self.labels, self.seat, self.match):
                self.say(line)
        else:
            for line in (self.text.rack_lines(v) if self.game == "racko" else self.text.hand_lines(v)):
                self.say(line)
        moves = self.text.moves(v, self.core.legal_action_mask(self.state)[0])
        self.show_moves(moves)
        while True:
            raw = self.ask("Your move> ")
            text = normalize(raw)
            if text in QUIT_WORDS:
                raise _Quit("you quit")
            if text in HELP_WORDS:
                self.show_moves(moves)
                continue
            got = self.choose(text, moves, v)
            if isinstance(got, Move):
                self.say(f"You: {got.name}.")
                return got.action
            self.say(f"Not a move: {got}. Type 1-{len(moves)}, a move's name, ? for the list or q to leave.")

    def show_moves(self, moves: list[Move]) -> None:
        self.say("Moves:")
        for i, m in enumerate(moves, 1):
            self.say(f"  {i:>2}. {m.name}")

    def choose(self, text: str, moves: list[Move], v: dict) -> Move | str:
        """The move ``text`` names, or a one-line reason why it names none."""
        if not text:
            return "empty input"
        if text.isdigit():
            n = int(text)
            return moves[n - 1] if 1 <= n <= len(moves) else f"there is no move {n} (moves are 1-{len(moves)})"
        for m in moves:
            if text in m.keys:
                return m
        got = self.text.parse(text, moves, v)
        if got is not None:
            return got
        hits = [m for m in moves if any(k.startswith(text) for k in m.keys)]
        if len(hits) == 1:
            return hits[0]
        if hits:
            return f"{raw_quote(text)} could be {len(hits)} moves ({'; '.join(m.name for m in hits[:3])}" \
                   + ("; ..." if len(hits) > 3 else "") + ")"
        return f"{raw_quote(text)} is not a legal move now ({self.text.hint(v)})"

    def end_of_round(self, res: Any, declarer: int | None, in_round: list[int]) -> None:
        self.say()
        if self.events:
            self.say("Since your last turn:")
            for e in self.events:
                self.say("  " + e)
            self.events = []
        self.say(f"=== End of round {self.round} ===")
        if self.game == "leastscore":
            lines = self.text.round_result(res, self.labels, self.seat, declarer, in_round)
        else:
            lines = self.text.round_result(res, self.labels, self.seat)
        for line in lines:
            self.say(line)
        if self.game == "leastscore" and self.match and not res.terminated[0]:
            tot = res.total_points[0]
            for s in range(self.core.num_players):
                if tot[s] >= self.rules.elimination_score and tot[s] - res.round_points[0, s] < self.rules.elimination_score:
                    self.say(f"You reached {self.rules.elimination_score} points: you are eliminated (L9)." if s == self.seat
                             else f"{self.labels[s]} reached {self.rules.elimination_score} points and is eliminated (L9).")

    def final(self, res: Any) -> dict[str, Any]:
        winners = [int(s) for s in np.flatnonzero(res.winners[0])]
        what = "match" if self.match else "round"
        if not winners:
            self.say(f"The {what} ends with no winner.")
        elif self.seat in winners:
            self.say(f"You win the {what}!" if len(winners) == 1 else
                     f"You share the win of the {what} with " + ", ".join(self.labels[s] for s in winners if s != self.seat) + ".")
        else:
            self.say(f"{' and '.join(self.labels[s] for s in winners)} win{'s' if len(winners) == 1 else ''} the {what}.")
        return {"game": self.game, "seed": self.seed, "quit": False, "seat": self.seat,
                "round_points": res.round_points[0].tolist(), "total_points": res.total_points[0].tolist(),
                "winners": winners, "rounds": self.round}


def raw_quote(text: str) -> str:
    return repr(text) if len(text) <= 40 else repr(text[:37] + "...")


def play(game: str, vs: Sequence[str] = (), players: int | None = None, seed: int | None = None, seat: int = 0,
         rules_kwargs: dict[str, Any] | None = None, match: bool = False, input_fn: Callable[[str], str] = input,
         output: TextIO | None = None) -> dict[str, Any]:
    """Play one round (or ``match``) in the terminal; see :class:`PlaySession`."""
    return PlaySession(game, vs, players=players, seed=seed, seat=seat, rules_kwargs=rules_kwargs, match=match,
                       input_fn=input_fn, output=output).run()
