"""Play a deckgym game in the browser against agents (``deckgym play GAME --vs SPEC --web``).

The person plays one seat (seat 0 by default); the agents' moves are made on the server
and told as the terminal tells them (public information only). The page draws the person's
seat view (``<game>_env.table_view.seat_table`` of their own observation: nothing hidden is
ever sent) and offers the legal moves only, named as ``deckgym play`` names them, each with the
place on the table a click plays it (``target``, see ``deckgym.terminal.Move``), what to do now
(``prompt``) and the goal and rules (``intro``). At the end every rack or hand is revealed with
the scoring, and the game is saved as a replay.

API (JSON, 127.0.0.1 only; every call presents the token of the printed URL and a change is
``Content-Type: application/json``: :mod:`deckgym.viewer.server`):

* ``GET /api/state``: the table, the legal moves ``[{action, name, target}]`` when it is the
  person's turn, ``prompt``, ``intro``, the log of moves, ``decision`` (moves made so far), and
  at the end ``result``.
* ``POST /api/move`` ``{"action": A, "decision": N}``: play move ``A`` (``decision``, optional,
  must equal the current count: a stale click from another tab is refused). A malformed
  body, an unknown or illegal action, a move after the end: a 4xx answer naming the problem,
  and the game is unchanged.
* ``POST /api/new`` ``{}``: deal a new game (the next seed).

Requests are served one at a time (one lock around the game): two clicks, or two tabs,
never interleave, and a burst of ``new`` deals exactly one game per request.
"""

from __future__ import annotations

import io
import threading
from typing import Any, Sequence

import numpy as np

from deckgym.replay import GameRecord, jsonable, make_header, play_path
from deckgym.viewer.frames import final_table, table_view
from deckgym.viewer.server import JsonApp, RequestError, serve
from deckgym.evaluation.play import PlaySession

__all__ = ["WebGame", "WebPlayApp", "serve_play"]


class WebGame:
    """One game of a person against agents, advanced a move at a time (the agents' moves at once).

    ``deal``: an explicit deal (``core.deal``), for hand-built positions; such a game is not saved
    (a replay records seeds only)."""

    def __init__(self, game: str, vs: Sequence[str] = (), players: int | None = None, seed: int | None = None,
                 seat: int = 0, rules_kwargs: dict[str, Any] | None = None, match: bool = False,
                 replays: str | None = "replays", deal: dict | None = None) -> None:
        # the terminal session's set-up: table, agents (seeded from the deal), labels and move names
        self.session = PlaySession(game, vs, players=players, seed=seed, seat=seat, rules_kwargs=rules_kwargs,
                                   match=match, output=io.StringIO(), deal=deal)
        s = self.session
        self.game, self.core, self.seat, self.seed, self.text = s.game, s.core, s.seat, s.seed, s.text
        self.labels = [f"you (player_{k})" if k == self.seat else f"player_{k} ({s.specs[k]})"
                       for k in range(self.core.num_players)]
        self.tv = table_view(self.game)
        self.replays = replays if deal is None else None
        self.replay_path: str | None = None
        self.state = self.core.init(1, self.seed) if deal is None else self.core.deal(self.seed, deal)
        seats = ["human" if k == self.seat else s.specs[k] for k in range(self.core.num_players)]
        self.record = GameRecord(self.game, self.core, make_header(self.game, self.core, seats, self.seed, 0))
        self.log: list[str] = []
        self.result: dict[str, Any] | None = None
        self.decisions = 0
        self._partial: str | None = None
        self.lock = threading.Lock()
        self._advance()

    # -- what the person sees ----------------------------------------------------------------------
    def my_view(self) -> dict[str, Any]:
        return self.session.my_view_of(self.state)

    def moves(self) -> list[Any]:
        """The person's legal moves (terminal names), empty when it is not their turn."""
        if self.result is not None or int(self.core.current_player(self.state)[0]) != self.seat:
            return []
        return self.text.moves(self.my_view(), self.core.legal_action_mask(self.state)[0])

    def snapshot(self) -> dict[str, Any]:
        view = self.my_view()
        table = self.result["table"] if self.result else self.tv.seat_table(view, self.seat, self.labels)
        moves = self.moves()
        return jsonable({"game": self.game, "title": self.text.title, "seed": self.seed, "seat": self.seat,
                         "labels": self.labels, "decision": self.decisions, "table": table,
                         "intro": self.text.intro(), "prompt": self.text.prompt(view) if moves else "",
                         "moves": [{"action": m.action, "name": m.name, "target": m.target} for m in moves],
                         "log": self.log[-40:], "result": self.result and {k: v for k, v in self.result.items()
                                                                          if k != "table"},
                         "replay": self.replay_path})

    # -- moves --------------------------------------------------------------------------------------
    def move(self, body: Any) -> dict[str, Any]:
        """Play the person's move named by ``body`` (see the module doc); RequestError, game unchanged, if bad."""
        if not isinstance(body, dict) or "action" not in body:
            raise RequestError('malformed request: send {"action": A} with A one of the legal moves\' actions')
        action = body["action"]
        if isinstance(action, bool) or not isinstance(action, int):
            raise RequestError(f"malformed request: action must be an integer, got {action!r}")
        with self.lock:
            if "decision" in body and body["decision"] != self.decisions:
                raise RequestError(f"stale move: it was sent for move {body['decision']!r}, the game is at move "
                                   f"{self.decisions} (reload the page)", 409)
            if self.result is not None:
                raise RequestError("the game is over: start a new one", 409)
            legal = {m.action: m.name for m in self.moves()}
            if action not in legal:
                listed = "; ".join(f"{a} ({n})" for a, n in legal.items())
                raise RequestError(f"illegal move {action}: the legal moves are {listed}")
            self.log.append(f"You: {legal[action]}.")
            self._play(self.seat, action)
            self._advance()
            return self.snapshot()

    def _play(self, cur: int, a: int) -> None:
        before = self.my_view()
        res = self.record.step(self.state, cur, a)
        self.decisions += 1
        over = bool(res.round_over[0])
        if cur == self.seat and not over:
            line = self.text.own_step(a, before, self.my_view())
            if line:
                self.log.append(line)
        if cur != self.seat:
            after = None if over else self.my_view()
            line, self._partial = self.text.opponent_step(f"player_{cur}", a, before, after, self._partial, res)
            if line:
                self.log.append(line + ".")
        if over:
            self._round_over(res, cur, a)

    def _round_over(self, res: Any, last_seat: int, last_action: int) -> None:
        lines = self.text.round_result(res, self.labels, self.seat, last_seat, last_action)
        self.log.extend(lines)
        self._partial = None
        if bool(res.terminated[0] | res.truncated[0]):
            end = self.record.lines[-1]
            winners = [int(s) for s in np.flatnonzero(res.winners[0])]
            self.result = {"winners": winners, "round_points": res.round_points[0].tolist(),
                           "total_points": res.total_points[0].tolist(), "reason": end["reason"], "lines": lines,
                           "you_won": self.seat in winners,
                           "table": final_table(self.tv, end["state"], self.labels)}
            if self.replays is not None:
                self.replay_path = self.record.write(play_path(self.replays, self.game, self.seed))

    def _advance(self) -> None:
        """The agents' moves up to the person's next decision (or the end)."""
        s = self.session
        while self.result is None:
            cur = int(self.core.current_player(self.state)[0])
            if cur == self.seat:
                return
            a = s.agent_action(cur, self.state)
            self._play(cur, a)


class WebPlayApp(JsonApp):
    """The play page and its API (see the module doc); ``new`` deals the next game with the same settings."""

    pages = {"/": "play.html"}

    def __init__(self, **settings: Any) -> None:
        self.settings = settings
        self.game = WebGame(**settings)
        self.lock = threading.Lock()  # the game is read, moved and replaced by one request at a time

    def get(self, path: str, query: dict[str, list[str]]) -> Any:
        if path == "/api/state":
            with self.lock, self.game.lock:
                return self.game.snapshot()
        raise RequestError(f"no such address {path}", 404)

    def post(self, path: str, body: Any) -> Any:
        if path == "/api/move":
            with self.lock:
                return self.game.move(body)
        if path == "/api/new":
            with self.lock:
                settings = {**self.settings, "seed": (self.game.seed + 1) % 2**31}
                self.game = WebGame(**settings)  # built first: a failure leaves the old game and seed
                self.settings = settings
                return self.game.snapshot()
        raise RequestError(f"no such address {path} (POST)", 404)


def serve_play(port: int | None = None, **settings: Any) -> None:
    """``deckgym play ... --web``: serve the play page on 127.0.0.1 (``port`` default 8766) until Ctrl-C."""
    port = 8766 if port is None else port
    app = WebPlayApp(**settings)
    print(f"{app.game.text.title}, seed {app.game.seed}: you are player_{app.game.seat}; "
          f"games are saved in {settings.get('replays') or 'no folder'}")
    serve(app, port, what="play")
