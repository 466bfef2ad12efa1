"""Play a deckgym game in the terminal against agents (``deckgym play``).

    deckgym play racko --vs racko:sequence
    deckgym play racko --vs racko:sequence --vs racko:ranges --players 3 --seat 1 --matches
    deckgym play leastscore --vs leastscore:counting          # 4 players: 3 counting agents
    deckgym play racko --vs ppo:models/racko_2p.safetensors --rule bonus=true

Everything shown comes from the human's own observation (``core.observe`` of the human's
seat decoded by ``core.obs_view``) and from what every player sees at the table: the moves
of the others (which pile, which slot, which floor card: public by the rules) and the
cards that were face up. Never the hidden state: not an opponent's unknown card, not the
draw pile. At each decision the legal moves are listed by number and name; type either
(a unique start of a name is enough; Least Score cards may be typed as ``3c 4d 5s``); ``?``
lists the moves again, ``q`` leaves. End of input leaves cleanly. Lines are folded at spaces to
the terminal's width (``width``; 80 columns when the output is not the terminal).

The session is driven by :class:`PlaySession` (``input_fn`` and ``output`` are injectable,
which is how the tests play scripted games); :func:`play` is the one-call form.
"""

from __future__ import annotations

import secrets
import shutil
import sys
from typing import Any, Callable, Sequence, TextIO

import numpy as np

from deckgym.agents.registry import make_agent
from deckgym.playout import infostate_core, observe_for, wants_infostate
from deckgym.registration import game as game_entry
from deckgym.rng import seed_of
from deckgym.terminal import Move, can_encode, normalize, wrap

__all__ = ["PlaySession", "play", "Move"]

QUIT_WORDS = {"q", "quit", "exit"}
HELP_WORDS = {"?", "h", "help", "moves"}


class _Quit(Exception):
    pass


class PlaySession:
    """One human seat against agents, on the game's core with one game (B = 1).

    Args:
        game: a registered game's name (``"racko"``, ``"leastscore"``).
        vs: agent specs of the other seats in seat order after the human; the last one
            fills the remaining seats.
        players: table size (default: the rules' default, or more if ``vs`` names more).
        seed: the deal (default: random, printed so the game can be replayed).
        seat: the human's seat.
        rules_kwargs: other rules fields; ``match``: play a whole match instead of a round.
        input_fn: reads one line (``input``-like; raises ``EOFError`` at the end);
        output: where the text goes; width: the columns lines are folded to (default: the
            terminal's width when printing to it, else 80).
        deal: an explicit deal (``core.deal(seed, deal)``: hand-built positions for tests and
            tutorials; such a game is not saved as a replay, which records seeds only).
    """

    def __init__(self, game: str, vs: Sequence[str] = (), players: int | None = None, seed: int | None = None,
                 seat: int = 0, rules_kwargs: dict[str, Any] | None = None, match: bool = False,
                 input_fn: Callable[[str], str] = input, output: TextIO | None = None,
                 replays: str | None = None, width: int | None = None, deal: dict | None = None) -> None:
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
        # a round's last step replayed on a round-episode core shows the cards as the round ended
        # (a match core has dealt the next round by then): the hands revealed at the end of a round
        self.round_core = entry.make_core(self.rules, episode="round", reward="win") if match else self.core
        self.match = match
        self.seat = int(seat)
        self.seed = int(seed) if seed is not None else secrets.randbelow(2**31)
        self.specs: dict[int, str] = {}
        self.agents: dict[int, Any] = {}
        others = [(self.seat + i) % P for i in range(1, P)]
        for i, s in enumerate(others):
            spec = vs[min(i, len(vs) - 1)]
            self.specs[s] = spec
            self.agents[s] = make_agent(spec, self.core, seed=seed_of(self.seed, 101, s), game=self.game)
        if any(wants_infostate(a) for a in self.agents.values()):
            # agents that act on information states (racko:search) need the core that records the
            # public history; everyone else, the person included, still sees the default view
            self.core, self.round_core = infostate_core(self.core), infostate_core(self.round_core)
        self.names = [f"player_{s}" for s in range(P)]
        self.labels = [f"you (player_{s})" if s == self.seat else f"player_{s} ({self.specs[s]})" for s in range(P)]
        self.text = entry.descriptor.text(self.core)
        self.input_fn = input_fn
        self.output = output if output is not None else sys.stdout
        if width is None:
            width = shutil.get_terminal_size((80, 24)).columns if output is None else 80
        if isinstance(width, bool) or not isinstance(width, int) or width < 20:
            raise ValueError(f"width must be an int of at least 20 columns, got {width!r}")
        self.width = width
        if deal is not None and not isinstance(deal, dict):
            raise ValueError(f"deal must be a dict of deal options, got {type(deal).__name__}")
        self.deal = deal
        encoding = getattr(self.output, "encoding", None) or "utf-8"
        self.encoding = encoding if can_encode("", encoding) else "ascii"
        self.text.symbols = can_encode("\u2663\u2666\u2665\u2660", self.encoding)  # else letters
        self.state: Any = None
        self.events: list[str] = []
        self.round = 1
        self.my_turns = 0  # the person's turns begun this round
        self.replays = replays  # a folder: the game is saved there as a replay (deckgym.replay)
        self.replay_path: str | None = None

    # -- io --------------------------------------------------------------------------------------
    def _printable(self, text: str) -> str:
        """``text`` as the output's encoding can print it (a character it lacks becomes ``?``)."""
        return text.encode(self.encoding, "replace").decode(self.encoding)

    def say(self, line: str = "", fold: bool = True) -> None:
        """One line of text, folded to the width (one write: a folded line stays one line); ``fold=False``
        keeps a line to copy whole (a file path) as it is."""
        self.output.write(self._printable((wrap(line, self.width) if fold else line) + "\n"))

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
        return self.my_view_of(self.state)

    def my_view_of(self, state: Any) -> dict:
        """The person's decoded observation of ``state`` (the default view, whatever the core)."""
        obs = observe_for(None, self.core, state, self.seat)
        return {k: v[0] for k, v in self.core.obs_view(obs).items()}

    def agent_action(self, seat: int, state: Any = None) -> int:
        """The agent of ``seat`` decides on ``state`` (default: the game being played), on the view it asks
        for; refused if illegal."""
        state = self.state if state is None else state
        obs = observe_for(self.agents[seat], self.core, state, seat)
        mask = self.core.legal_action_mask(state)
        a = int(self.agents[seat].act(obs, mask)[0])
        if not mask[0, a]:
            raise RuntimeError(f"agent {self.specs[seat]!r} chose the illegal action {a}")
        return a

    # -- the game --------------------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        """Play to the end of the round (or match); returns the result (``quit`` if left early)."""
        P = self.core.num_players
        self.state = self.core.init(1, self.seed) if self.deal is None else self.core.deal(self.seed, self.deal)
        self.record = self.new_record()
        try:
            return self._run(P)
        finally:
            self.save_replay()

    def new_record(self) -> Any:
        """The replay of this game (seat specs, ``human`` for the person), or ``None`` without a folder."""
        if self.replays is None or self.deal is not None:
            return None
        from deckgym.replay import GameRecord, make_header

        seats = ["human" if s == self.seat else self.specs[s] for s in range(self.core.num_players)]
        return GameRecord(self.game, self.core, make_header(self.game, self.core, seats, self.seed, 0))

    def save_replay(self) -> None:
        if self.record is None or len(self.record.lines) < 2:
            return
        from deckgym.replay import play_path

        self.replay_path = self.record.write(play_path(self.replays, self.game, self.seed))
        self.say(f"Saved the game as {self.replay_path} (watch it: deckgym view {self.replay_path}).", fold=False)

    def _run(self, P: int) -> dict[str, Any]:
        self.say(f"{self.text.title}, {P} players, {'a match' if self.match else 'one round'}, seed {self.seed}.")
        self.say("Seats: " + ", ".join(self.labels) + ".")
        for line in self.text.intro():
            self.say(line)
        self.say("Type a move's number or its name; ? lists the moves, q leaves.")
        partial: str | None = None
        out_told = False
        try:
            while True:
                cur = int(self.core.current_player(self.state)[0])
                before = self.my_view()
                if cur == self.seat:
                    a = self.human_decision()
                else:
                    a = self.agent_action(cur)
                before_step = self.state.take(np.array([0]))
                if self.record is not None:
                    res = self.record.step(self.state, cur, a)
                else:
                    res = self.core.step(self.state, np.array([a], dtype=np.int64))
                over = bool(res.round_over[0])
                if cur == self.seat and not over:
                    line = self.text.own_step(a, before, self.my_view())
                    if line:
                        self.say(line)
                if cur != self.seat and not out_told:
                    after = None if over else self.my_view()
                    line, partial = self.text.opponent_step(self.names[cur], a, before, after, partial, res)
                    if line:
                        self.events.append(line)
                if over:
                    in_round = [int(s) for s in np.flatnonzero(self.core.alive(before_step)[0])]
                    if self.match:
                        self.round_core.step(before_step, np.array([a], dtype=np.int64))
                    else:
                        before_step = self.state
                    self.end_of_round(res, cur, a, in_round, before_step)
                    partial = None
                    if res.terminated[0] or res.truncated[0]:
                        return self.final(res)
                    self.round += 1
                    self.my_turns = 0
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
            # the person's own count: the table's turn counter would call a first turn "turn 2"
            self.say(f"--- Your turn {self.my_turns + 1} ({self.names[self.seat]})"
                     + (f", round {self.round}" if self.match else "") + " ---")
            self.tell_events()
            self.my_turns += 1
            for line in self.text.view(v, self.labels, self.seat, self.match):
                self.say(line)
        else:
            for line in self.text.mid_turn(v):
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

    def tell_events(self) -> None:
        """What the others did since the person's last turn (before their first: since the deal)."""
        if self.events:
            self.say("Since your last turn:" if self.my_turns else "Since the deal:")
            for e in self.events:
                self.say("  " + e)
            self.events = []

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

    def end_of_round(self, res: Any, last_seat: int, last_action: int, in_round: list[int], final: Any) -> None:
        """The round's result (``last_*``: the move that ended it); ``final`` is the state as the round
        ended, every hand shown (R8, L7)."""
        self.say()
        self.tell_events()
        self.say(f"=== End of round {self.round} ===")
        lines = self.text.round_result(res, self.labels, self.seat, last_seat, last_action)
        lines += self.text.reveal(self.round_core.state_dict(final, 0), self.labels, self.seat, in_round)
        for line in lines + self.text.after_round(res, self.labels, self.seat):
            self.say(line)

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
         output: TextIO | None = None, replays: str | None = None) -> dict[str, Any]:
    """Play one round (or ``match``) in the terminal; see :class:`PlaySession` (``replays``: a folder to save the game in)."""
    return PlaySession(game, vs, players=players, seed=seed, seat=seat, rules_kwargs=rules_kwargs, match=match,
                       input_fn=input_fn, output=output, replays=replays).run()
