"""Replays: a game as JSON Lines, written while it is played, read back and re-simulated.

One file per game (schema: ``docs/REPLAYS.md``): a ``header`` line (game, rules, episode,
each seat's agent spec, seed, deal id, deckgym version), one ``decision`` line per move
(seat, phase, the action, its name, the legal actions, the full state before the move,
the acting seat's decoded observation, the agent's action probabilities when it exposes
them), a ``round`` line at the end of every round of a match but the last, and an
``end`` line (round points, winners, why the round ended, the final state).

Every state is written twice: readable (``core.state_dict``, for people and the god view)
and raw (each state field's bytes, base64), so :func:`resimulate` can re-deal the game from
its seed and deal id, replay the actions and check that every state is the same bit for bit.

    for turn in play_out(core, state, agents, owner, before_step=rec.before_step, after_step=rec.after_step):
        ...
    rec.records  # {game row: GameRecord}, finished ones have .done

:class:`GameRecord` records one game from any loop (terminal or browser play);
:class:`Recorder` records chosen rows of a batch through :func:`deckgym.playout.play_out`'s hooks.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import stat
from dataclasses import dataclass, field, fields
from typing import Any, Callable, Sequence

import numpy as np

from deckgym import __version__, strict_json
from deckgym.registration import game as game_entry

__all__ = ["FORMAT", "FORMAT_VERSION", "GameRecord", "Recorder", "Replay", "ReplayError", "load", "resimulate",
           "make_header", "end_reason", "jsonable", "move_namer", "play_path"]

FORMAT = "deckgym-replay"
FORMAT_VERSION = 1


class ReplayError(ValueError):
    """A replay file that is not one (bad JSON, a missing line or field) or does not re-simulate."""


def jsonable(x: Any) -> Any:
    """``x`` with numpy values as plain JSON values (arrays as lists) and rules objects dropped."""
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items() if k != "rules"}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, np.generic):
        return x.item()
    return x


def raw_state(state: Any, b: int) -> dict[str, str]:
    """Game ``b``'s state fields as base64 of their bytes (what "bit for bit" compares)."""
    return {f.name: base64.b64encode(np.ascontiguousarray(getattr(state, f.name)[b]).tobytes()).decode("ascii")
            for f in fields(state)}


def current_names(state_cls: type, raw: dict[str, str]) -> dict[str, str]:
    """``raw`` with the field names of older replays renamed to today's (``BatchState.former_names``)."""
    former = {old: new for new, old in getattr(state_cls, "former_names", {}).items()}
    return {former.get(k, k): v for k, v in raw.items()}


def state_from_raw(core: Any, raw: dict[str, str]) -> Any:
    """A batch of one game (B = 1) holding the state written by :func:`raw_state`."""
    template = core.init(1, 0)
    raw = current_names(type(template), raw)
    out = {}
    for f in fields(template):
        ref = getattr(template, f.name)
        if f.name not in raw:
            raise ReplayError(f"raw state lacks the field {f.name!r}")
        try:
            buf = base64.b64decode(raw[f.name], validate=True)
        except (ValueError, TypeError):
            raise ReplayError(f"raw state field {f.name!r} is not base64") from None
        if len(buf) != ref[0].nbytes:
            raise ReplayError(f"raw state field {f.name!r} has {len(buf)} bytes, expected {ref[0].nbytes}")
        out[f.name] = np.frombuffer(buf, dtype=ref.dtype).reshape(ref.shape).copy()
    return type(template)(**out)


def move_namer(game: str, core: Any) -> Callable[[dict, np.ndarray], dict[int, str]]:
    """``names(view, mask) -> {action: move name}``: the moves as the terminal names them (the
    game's descriptor's ``text``)."""
    text = game_entry(game).descriptor.text(core)

    def names(view: dict, mask: np.ndarray) -> dict[int, str]:
        return {m.action: m.name for m in text.moves(view, mask)}

    return names


def make_header(game: str, core: Any, seats: Sequence[str], seed: int, deal: int, **extra: Any) -> dict[str, Any]:
    """The first line of a replay: what is needed to deal the game again and to label it."""
    rules = core.rules
    return {"type": "header", "format": FORMAT, "version": FORMAT_VERSION, "game": game,
            "rules": jsonable(dataclasses.asdict(rules)), "rules_repr": repr(rules), "episode": core.episode,
            "num_players": int(core.num_players), "seats": list(seats), "seed": int(seed), "deal": int(deal),
            "deckgym_version": __version__, "action_names": list(core.action_names),
            "phase_names": list(core.phase_names), **extra}


def end_reason(game: str, core: Any, result: Any, r: int, last_action: int) -> str:
    """Why a round ended, as the game's descriptor says (Rack-O: ``"rack-o"`` or ``"cap"``, R9;
    Least Score: ``"declare"`` or ``"cap"``, L10)."""
    return game_entry(game).descriptor.end_reason(core, result, r, last_action)


def _decoded(core: Any, obs_row: np.ndarray) -> dict[str, Any]:
    return {k: jsonable(v[0]) for k, v in core.obs_view(obs_row[None]).items()}


class GameRecord:
    """The lines of one game's replay, added move by move (``decision`` then ``outcome``)."""

    def __init__(self, game: str, core: Any, header: dict[str, Any]) -> None:
        self.game, self.core = game, core
        self.lines: list[dict[str, Any]] = [header]
        self.done = False
        self._namer = move_namer(game, core)
        self._rounds = 0

    def decision(self, state: Any, b: int, seat: int, obs_row: np.ndarray, mask_row: np.ndarray, action: int,
                 probs: np.ndarray | None = None) -> None:
        """Record the move ``action`` of ``seat`` in game ``b`` of ``state`` (the state before the move)."""
        core = self.core
        legal = [int(a) for a in np.flatnonzero(mask_row)]
        view = _decoded(core, obs_row)
        line: dict[str, Any] = {
            "type": "decision", "index": len(self.lines) - 1 - self._rounds, "seat": int(seat),
            "phase": core.phase_names[int(core.phase(state)[b])], "action": int(action),
            "action_name": core.action_names[int(action)], "legal": legal,
            "state": jsonable(core.state_dict(state, b)), "raw": raw_state(state, b), "obs": view,
        }
        names = self._namer({k: v[0] for k, v in core.obs_view(obs_row[None]).items()}, np.asarray(mask_row, dtype=bool))
        line["move"] = names.get(int(action), core.action_names[int(action)])
        line["legal_moves"] = [names.get(a, core.action_names[a]) for a in legal]
        if probs is not None:
            line["probs"] = [round(float(probs[a]), 6) for a in legal]
        self.lines.append(line)

    def outcome(self, result: Any, r: int, state: Any, b: int) -> None:
        """After the move: a ``round`` line when row ``r`` of ``result`` ends a round, ``end`` when the episode ends
        (``state`` row ``b``: the state after the move)."""
        if not bool(result.round_over[r]):
            return
        last = self.lines[-1]["action"]
        line = {"round_points": jsonable(result.round_points[r]), "total_points": jsonable(result.total_points[r]),
                "reason": end_reason(self.game, self.core, result, r, last),
                "extra": {k: jsonable(v[r]) for k, v in result.extra.items()}}
        if bool(result.terminated[r] | result.truncated[r]):
            self.lines.append({"type": "end", **line, "winners": [int(s) for s in np.flatnonzero(result.winners[r])],
                               "state": jsonable(self.core.state_dict(state, b)), "raw": raw_state(state, b)})
            self.done = True
        else:
            self._rounds += 1
            self.lines.append({"type": "round", "decision": self.lines[-1]["index"], **line})

    def step(self, state: Any, seat: int, action: int, probs: np.ndarray | None = None) -> Any:
        """Play ``action`` of ``seat`` in the one game of ``state`` (B = 1, checked by the core), record it
        and return the core's ``StepResult`` (a loop of its own, e.g. a person playing)."""
        core = self.core
        before, obs, mask = state.copy(), core.observe(state, seat)[0], core.legal_action_mask(state)[0]
        res = core.step(state, np.array([int(action)], dtype=np.int64))
        self.decision(before, 0, seat, obs, mask, int(action), probs)
        self.outcome(res, 0, state, 0)
        return res

    def write(self, path: str) -> str:
        """Write the replay as JSON Lines to ``path`` (atomically: a link there is replaced, not followed);
        returns the path."""
        from deckgym.outputs import write_text

        return write_text(path, "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in self.lines))


def play_path(folder: str, game: str, seed: int) -> str:
    """Where a person's game goes: ``FOLDER/<game>-play-seed<seed>-<date>-<time>.jsonl`` (the folder is created)."""
    import time

    os.makedirs(folder, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = os.path.join(folder, f"{game}-play-seed{seed}-{stamp}.jsonl")
    n = 1
    while os.path.exists(path):  # two games in one second
        n += 1
        path = os.path.join(folder, f"{game}-play-seed{seed}-{stamp}-{n}.jsonl")
    return path


class Recorder:
    """Records chosen games of a batch played by :func:`deckgym.playout.play_out`.

    ``rows``: the batch rows to record; ``headers[i]``: the header of ``rows[i]``;
    ``agents``/``owner``: as given to ``play_out``, to ask the moving agent for its action
    probabilities (an optional ``action_probs(obs, masks) -> (n, A)`` method). Pass
    ``before_step`` and ``after_step`` to ``play_out``.
    """

    def __init__(self, game: str, core: Any, rows: Sequence[int], headers: Sequence[dict[str, Any]],
                 agents: Sequence[Any] = ()) -> None:
        self.core, self.agents = core, list(agents)
        self.records = {int(r): GameRecord(game, core, h) for r, h in zip(rows, headers)}
        self._wanted = np.array(sorted(self.records), dtype=np.int64)
        self._pending: dict[int, tuple] = {}

    def _hits(self, turn: Any) -> np.ndarray:
        return np.flatnonzero(np.isin(turn.games, self._wanted))

    def before_step(self, turn: Any) -> None:
        for i in self._hits(turn):
            # copies: the state is stepped in place right after
            self._pending[int(turn.games[i])] = (turn.state.take(slice(i, i + 1)), turn.obs[i].copy())

    def after_step(self, turn: Any) -> None:
        for i in self._hits(turn):
            g = int(turn.games[i])
            before, obs = self._pending.pop(g)
            mask = turn.masks[i]
            agent = self.agents[int(turn.owner[i])] if self.agents else None
            probs_fn = getattr(agent, "action_probs", None)
            probs = probs_fn(obs[None], mask[None])[0] if probs_fn is not None else None
            rec = self.records[g]
            rec.decision(before, 0, int(turn.seats[i]), obs, mask, int(turn.actions[i]), probs)
            rec.outcome(turn.result, i, turn.state, i)


# ---------------------------------------------------------------------------------------------
# reading
# ---------------------------------------------------------------------------------------------
@dataclass
class Replay:
    """A replay read by :func:`load`: the header, the decisions in order, the round lines and the end line."""

    path: str
    header: dict[str, Any]
    decisions: list[dict[str, Any]] = field(default_factory=list)
    rounds: list[dict[str, Any]] = field(default_factory=list)
    end: dict[str, Any] | None = None

    @property
    def game(self) -> str:
        return self.header["game"]

    def make_core(self) -> Any:
        """The core this game was played on (its rules and episode)."""
        entry = game_entry(self.game)
        try:
            return entry.make_core(entry.make_rules(**_rules_kwargs(self.header["rules"])),
                                   episode=self.header["episode"], reward="win")
        except Exception as exc:  # the game's own checks (rules against the table): a bad file, named
            raise ReplayError(f"replay {self.path}: cannot set up its game ({type(exc).__name__}: {exc})") from None

    def summary(self) -> dict[str, Any]:
        """Game, seats, deal and outcome in a few fields (the viewer's list)."""
        end = self.end or {}
        return {"game": self.game, "seats": self.header["seats"], "seed": self.header["seed"],
                "deal": self.header["deal"], "decisions": len(self.decisions), "winners": end.get("winners"),
                "round_points": end.get("round_points"), "reason": end.get("reason")}


def _rules_kwargs(rules: dict[str, Any]) -> dict[str, Any]:
    return {k: tuple(v) if isinstance(v, list) else v for k, v in rules.items()}


# -- what a replay file may hold: every field typed, every line and number bounded ---------------
MAX_FILE_BYTES = 256 * 2**20
MAX_LINE_CHARS = 8 * 2**20
MAX_DEPTH = 12  # the deepest real line (a state's nested lists) is 4
MAX_INT_DIGITS = 20  # a 64-bit unsigned state field (a random stream); a longer integer is no field of a replay


class _Bad(ValueError):
    """A value the JSON parser's hooks refuse (one line, no file name yet)."""


def _parse_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise _Bad(f"an integer of {len(text.lstrip('-'))} digits (at most {MAX_INT_DIGITS})")
    return int(text)


def _depth(x: Any) -> int:
    deepest, stack = 0, [(x, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, (dict, list)):
            deepest = max(deepest, d)
            if d <= MAX_DEPTH:
                stack.extend((w, d + 1) for w in (v.values() if isinstance(v, dict) else v))
    return deepest


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_scalar(v: Any) -> bool:
    return v is None or isinstance(v, (bool, int, float, str))


_KINDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "str": (lambda v: isinstance(v, str), "a string"),
    "nat": (lambda v: _is_int(v) and v >= 0, "an integer >= 0"),
    "dict": (lambda v: isinstance(v, dict), "an object"),
    "strs": (lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v), "a list of strings"),
    "nats": (lambda v: isinstance(v, list) and all(_is_int(x) and x >= 0 for x in v), "a list of integers >= 0"),
    "nums": (lambda v: isinstance(v, list) and all(_is_num(x) for x in v), "a list of numbers"),
    "raw": (lambda v: isinstance(v, dict) and all(isinstance(x, str) for x in v.values()),
            "an object of base64 strings"),
    "rules": (lambda v: isinstance(v, dict) and all(_is_scalar(x) or (isinstance(x, list) and all(map(_is_scalar, x)))
                                                     for x in v.values()), "an object of rules fields"),
}
# per line type: required fields, then optional ones, with their kinds
_SCHEMA: dict[str, tuple[dict[str, str], dict[str, str]]] = {
    "header": ({"game": "str", "rules": "rules", "episode": "str", "num_players": "nat", "seats": "strs",
                "seed": "nat", "deal": "nat"},
               {"rules_repr": "str", "deckgym_version": "str", "action_names": "strs", "phase_names": "strs",
                "rotation": "nat"}),
    "decision": ({"seat": "nat", "action": "nat", "legal": "nats", "state": "dict", "raw": "raw", "phase": "str",
                  "action_name": "str"},
                 {"index": "nat", "move": "str", "legal_moves": "strs", "probs": "nums", "obs": "dict"}),
    "round": ({"decision": "nat", "round_points": "nums", "total_points": "nums", "reason": "str"}, {"extra": "dict"}),
    "end": ({"winners": "nats", "round_points": "nums", "total_points": "nums", "reason": "str", "state": "dict",
             "raw": "raw"}, {"extra": "dict"}),
}


def _check_fields(obj: dict[str, Any], where: str) -> None:
    """Every field of a line of type ``obj["type"]`` present (if required) and of its kind."""
    required, optional = _SCHEMA[obj["type"]]
    missing = [k for k in required if k not in obj]
    if missing:
        raise ReplayError(f"{where}: a {obj['type']} without {', '.join(missing)}")
    for key, kind in {**required, **optional}.items():
        ok, what = _KINDS[kind]
        if key in obj and not ok(obj[key]):
            raise ReplayError(f"{where}: {obj['type']} field {key!r} must be {what}, got {type(obj[key]).__name__}")


def _check_decision(d: dict[str, Any], players: int, where: str) -> None:
    if d["seat"] >= players:
        raise ReplayError(f"{where}: seat {d['seat']} at a table of {players}")
    for key in ("legal_moves", "probs"):
        if key in d and len(d[key]) != len(d["legal"]):
            raise ReplayError(f"{where}: {key} has {len(d[key])} entries for {len(d['legal'])} legal actions")


def _read_lines(path: str) -> list[dict[str, Any]]:
    """The file's lines as objects with a ``type``; ReplayError for anything else (size, JSON, depth, numbers)."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):  # a FIFO or a device named *.jsonl would block or never end
            raise ReplayError(f"replay {path}: not a regular file")
        if st.st_size > MAX_FILE_BYTES:
            raise ReplayError(f"replay {path}: {st.st_size} bytes, more than a replay holds ({MAX_FILE_BYTES})")
        with open(path, "rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise ReplayError(f"replay {path}: cannot read it ({exc.strerror or exc})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ReplayError(f"replay {path}: not UTF-8 text") from None
    rows = [ln for ln in text.splitlines() if ln.strip()]
    if not rows:
        raise ReplayError(f"replay {path}: the file is empty")
    lines = []
    for n, ln in enumerate(rows, 1):
        where = f"replay {path} line {n}"
        if len(ln) > MAX_LINE_CHARS:
            raise ReplayError(f"{where}: {len(ln)} characters, more than a replay line holds ({MAX_LINE_CHARS})")
        try:
            obj = strict_json.loads(ln, where, parse_int=_parse_int)
        except strict_json.JSONError as exc:
            raise ReplayError(str(exc)) from None
        if not isinstance(obj, dict) or "type" not in obj:
            raise ReplayError(f"{where}: not a replay line (an object with a 'type')")
        if _depth(obj) > MAX_DEPTH:
            raise ReplayError(f"{where}: nested deeper than a replay line ({MAX_DEPTH} levels)")
        lines.append(obj)
    return lines


def load(path: str | os.PathLike) -> Replay:
    """Read a replay file; :class:`ReplayError` naming the file and line if it is not a valid one.

    Every field's type is checked (``docs/REPLAYS.md``), and the file, each line, the nesting
    and every number are bounded: a file from anywhere gives a replay or one clear error."""
    path = os.fspath(path)
    lines = _read_lines(path)
    head = lines[0]
    if head.get("type") != "header" or head.get("format") != FORMAT:
        raise ReplayError(f"replay {path}: the first line is not a {FORMAT} header")
    if head.get("version") != FORMAT_VERSION:
        raise ReplayError(f"replay {path}: format version {head.get('version')!r}, this deckgym reads {FORMAT_VERSION}")
    missing = [k for k in _SCHEMA["header"][0] if k not in head]
    if missing:
        raise ReplayError(f"replay {path}: the header lacks {missing[0]!r}")
    _check_fields(head, f"replay {path} line 1")
    try:
        entry = game_entry(head["game"])
    except ValueError as exc:
        raise ReplayError(f"replay {path}: {exc}") from None
    if head["episode"] not in ("round", "match"):
        raise ReplayError(f"replay {path}: episode {head['episode']!r}, not 'round' or 'match'")
    if len(head["seats"]) != head["num_players"]:
        raise ReplayError(f"replay {path}: {len(head['seats'])} seats for {head['num_players']} players")
    try:
        entry.make_rules(**_rules_kwargs(head["rules"]))
    except Exception as exc:  # the game's own checks of its rules: any refusal is a bad file
        raise ReplayError(f"replay {path}: its rules are not valid ({type(exc).__name__}: {exc})") from None
    rep = Replay(path, head)
    for n, obj in enumerate(lines[1:], 2):
        kind, where = obj["type"], f"replay {path} line {n}"
        if rep.end is not None:
            raise ReplayError(f"{where}: a {kind!r} line after the end line")
        if not isinstance(kind, str) or kind not in _SCHEMA or kind == "header":
            raise ReplayError(f"{where}: unknown line type {kind!r}")
        _check_fields(obj, where)
        if kind == "decision":
            _check_decision(obj, head["num_players"], where)
            rep.decisions.append(obj)
        elif kind == "round":
            rep.rounds.append(obj)
        else:
            rep.end = obj
    return rep


def resimulate(replay: Replay) -> int:
    """Deal the replay's game again from its seed and deal id, play its actions and check that
    every recorded state (and the end) is the same bit for bit, and each action was legal.
    Returns the number of moves checked; :class:`ReplayError` at the first difference."""
    core = replay.make_core()
    h = replay.header
    state = core.init(1, int(h["seed"]), game_ids=np.array([int(h["deal"])]))
    res = None
    for k, d in enumerate(replay.decisions):
        _same(replay, state, d["raw"], f"move {k}")
        a = int(d["action"])
        if not core.legal_action_mask(state)[0, a]:
            raise ReplayError(f"replay {replay.path} move {k}: action {a} is not legal there")
        res = core.step(state, np.array([a], dtype=np.int64))
    if replay.end is not None:
        _same(replay, state, replay.end["raw"], "the end")
        if res is None or not bool(res.terminated[0] | res.truncated[0]):
            raise ReplayError(f"replay {replay.path}: the actions do not end the game, but the replay has an end line")
        winners = [int(s) for s in np.flatnonzero(res.winners[0])]
        if winners != replay.end["winners"] or res.round_points[0].tolist() != replay.end["round_points"]:
            raise ReplayError(f"replay {replay.path}: re-simulated winners {winners} / points "
                              f"{res.round_points[0].tolist()} differ from the end line")
    return len(replay.decisions)


def _same(replay: Replay, state: Any, raw: dict[str, str], where: str) -> None:
    now = raw_state(state, 0)
    raw = current_names(type(state), raw)
    diff = [k for k in now if now[k] != raw.get(k)]
    if diff:
        raise ReplayError(f"replay {replay.path}: the re-simulated state differs at {where} (fields {', '.join(diff)})")
