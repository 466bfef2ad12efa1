"""A replay as the viewer page draws it: one frame per move (and one for the end).

A frame holds the god view (every card, from the recorded ``state``) and one seat view per
seat, each built from that seat's own observation only: the state is re-created bit for bit
from the recorded ``raw`` bytes and observed with ``core.observe(state, seat)``, so a seat
view cannot show a card the seat could not see. The tables themselves are drawn by each
game's ``table_view`` module (``racko_env.table_view``, ``leastscore_env.table_view``), which also
puts each decision in words (``phase_text``): the page shows no name meant for code.
"""

from __future__ import annotations

import json
import os
from typing import Any

from deckgym.registration import game as game_entry
from deckgym.replay import Replay, ReplayError, jsonable, load, state_from_raw
from deckgym.viewer.budget import OutOfBudget, spend

MAX_LABEL_SPEC = 40  # characters of an agent spec in a seat's label: the label is drawn on every table


def table_view(game: str) -> Any:
    """The game's ``table_view`` module (``god_table``, ``seat_table``)."""
    return game_entry(game).descriptor.table_view


def seat_labels(header: dict[str, Any]) -> list[str]:
    """``player_S (SPEC)`` per seat, the spec cut to ``MAX_LABEL_SPEC`` characters (the header keeps it whole)."""
    return [f"player_{s} ({spec if len(spec) <= MAX_LABEL_SPEC else spec[:MAX_LABEL_SPEC - 3] + '...'})"
            for s, spec in enumerate(header["seats"])]


def final_table(tv: Any, state: dict[str, Any], labels: list[str]) -> dict[str, Any]:
    """The god view of a finished game (every card face up, as the end of a round shows them: R8, L7),
    nobody to move."""
    table = jsonable(tv.god_table(state, labels))
    for seat in table["seats"]:
        seat["to_move"] = False
    table["info"] = "the end: every card is shown"
    return table


def seat_views(core: Any, tv: Any, raw: dict[str, str], labels: list[str]) -> list[dict[str, Any]]:
    """Each seat's table at the state ``raw``, from that seat's observation alone."""
    state = state_from_raw(core, raw)
    out = []
    for s in range(core.num_players):
        view = {k: v[0] for k, v in core.obs_view(core.observe(state, s)).items()}
        out.append(jsonable(tv.seat_table(view, s, labels)))
    return out


def frames(replay: Replay) -> dict[str, Any]:
    """The page's data for one replay: ``header``, ``labels``, ``frames`` (moves, then the end) and ``end``.

    Each frame is counted against the request's budget (``deckgym.viewer.budget``): a replay that
    would take too long or answer too much raises :class:`OutOfBudget` instead."""
    what = f"replay {os.path.basename(replay.path)}"
    spend(len(json.dumps(replay.header)), what)
    core = replay.make_core()
    tv = table_view(replay.game)
    labels = seat_labels(replay.header)
    ends = {r.get("decision"): r for r in replay.rounds}  # a match: the move that ended each round but the last
    out: list[dict[str, Any]] = []
    for d in replay.decisions:
        spend(0, what)  # the time, before each frame's work
        legal_moves = d.get("legal_moves") or [core.action_names[a] for a in d["legal"]]
        policy = None
        if "probs" in d:
            policy = [{"move": m, "p": p, "chosen": a == d["action"]}
                      for a, m, p in zip(d["legal"], legal_moves, d["probs"])]
        out.append({"index": d.get("index", len(out)), "seat": d["seat"], "phase": d["phase"],
                    "phase_text": tv.phase_text(d["phase"]),
                    "move": d.get("move", d["action_name"]), "action_name": d["action_name"],
                    "legal_moves": legal_moves, "policy": policy,
                    "round_end": {k: r[k] for k in ("round_points", "total_points", "reason")}
                    if (r := ends.get(d.get("index"))) else None,
                    "god": jsonable(tv.god_table(d["state"], labels)),
                    "seats": seat_views(core, tv, d["raw"], labels)})
        spend(len(json.dumps(out[-1])), what)
    end = replay.end
    if end is not None:
        final = final_table(tv, end["state"], labels)  # the end shows every hand: each seat's view is the god view
        out.append({"index": len(replay.decisions), "seat": None, "phase": "end", "phase_text": "the end",
                    "move": None, "action_name": None,
                    "legal_moves": [], "policy": None, "god": final, "seats": [final] * core.num_players})
    return {"header": {k: v for k, v in replay.header.items() if k != "action_names"}, "labels": labels,
            "frames": out, "end": {k: v for k, v in (end or {}).items() if k not in ("state", "raw")} or None,
            "rounds": replay.rounds}


class ReplayLibrary:
    """The replays of a folder (``*.jsonl``, sorted by name) or one file, read when first asked for.

    A file that cannot be read, or drawn, is listed with its one-line reason (naming the file)
    and the others are served: one bad replay never stops the viewer."""

    def __init__(self, path: str) -> None:
        if os.path.isdir(path):
            files = sorted(os.path.join(path, f) for f in os.listdir(path) if f.endswith(".jsonl"))
            if not files:
                raise ValueError(f"{path}: no replay files (*.jsonl) in this folder")
        elif os.path.isfile(path):
            files = [path]
        else:
            raise ValueError(f"{path}: no such file or folder")
        self.files = files
        self._cache: dict[int, dict[str, Any] | str] = {}  # a replay's frames, or why it cannot be drawn
        self.items: list[dict[str, Any]] = []
        for i, f in enumerate(files):
            try:
                summary = load(f).summary()
                self.items.append({"id": i, "file": os.path.basename(f), **summary})
            except Exception as exc:  # listed with its problem: one bad file must not hide the others
                self.items.append({"id": i, "file": os.path.basename(f), "error": _reason(f, exc)})

    def page(self, i: int) -> dict[str, Any]:
        """The frames of replay ``i`` (ValueError if there is no such replay or it cannot be read or drawn)."""
        if not 0 <= i < len(self.files):
            raise ValueError(f"no replay {i} (there are {len(self.files)})")
        if i not in self._cache:
            try:
                self._cache[i] = frames(load(self.files[i]))
            except OutOfBudget as exc:
                if not exc.client_gone:  # the same file would run out again: asked again, it costs nothing
                    self._cache[i] = f"replay {self.files[i]}: {exc}"
                raise ReplayError(f"replay {self.files[i]}: {exc}") from None
            except Exception as exc:  # a well-formed file whose content the game cannot draw: named, not a crash
                self._cache[i] = _reason(self.files[i], exc)
        got = self._cache[i]
        if isinstance(got, str):
            raise ReplayError(got)
        return got


def _reason(path: str, exc: Exception) -> str:
    """One line naming the file: a ReplayError's own message, else the exception's."""
    if isinstance(exc, ReplayError):
        return " ".join(str(exc).split())
    return " ".join(f"replay {path}: cannot be drawn ({type(exc).__name__}: {exc})".split())[:500]
