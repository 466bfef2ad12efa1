"""A ladder's settings and entries: ``init``, ``add``, ``list``, ``remove``, and the agents a runner builds.

An entry cannot change under the ladder. A policy file (``ppo:PATH``) is copied into the
ladder's content-addressed store (the ``blobs`` table, keyed by the file's sha256, inside the
database: a ladder on PostgreSQL is shared by machines that do not share a disk), and the entry
records the hash; a runner checks the stored bytes against the hash and copies them into a
private folder to build the agent from, removed once the agent has played its block. Heuristics
and search agents are stored as their spec strings, with the deckgym version that added them.

An entry is built once when it is added, on the ladder's own table (game, rules, player count):
a policy for another game, table size or rules is refused then, in one line. A pickled model is
refused unless that one ``add`` says ``allow_pickle`` (the entry then records the user's word).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import time
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any, Iterator

from deckgym import __version__
from deckgym.outputs import write_bytes
from deckgym.agents.policy_file import SUFFIX, pickled_kind, refuse_pickle
from deckgym.agents.registry import make_agent
from deckgym.registration import GAMES, game as game_entry
from deckgym.rng import check_seed
from deckgym.evaluation.arena import rules_fields
from deckgym.evaluation.ladder.db import Db, LadderError, connect

__all__ = ["Entry", "Ladder", "init", "open_ladder", "add", "entries", "remove"]

MODEL_PREFIXES = ("ppo:", "rllib:")
MAX_NAME = 64


@dataclass
class Entry:
    id: int
    name: str
    kind: str  # "spec" or "file"
    spec: str  # as given (a file's spec keeps the path it was added from, for the record)
    ident: str  # what seeds and names the agent in a match: the spec, or the file's hash
    sha256: str | None
    trust_pickle: bool
    note: str
    deckgym_version: str
    added_at: float
    status: str  # active, retired, broken
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


_COLUMNS = "id, name, kind, spec, ident, sha256, trust_pickle, note, deckgym_version, added_at, status, reason"


@dataclass
class Ladder:
    """An open ladder: its database and settings (``game``, ``players``, ``rules``, ``seed``)."""

    db: Db
    game: str
    players: int
    rules: dict[str, Any]
    seed: int

    @property
    def target(self) -> str:
        return self.db.target

    def rules_kwargs(self) -> dict[str, Any]:
        return {**self.rules, "num_players": self.players}

    def core(self) -> Any:
        entry = game_entry(self.game)
        return entry.make_core(entry.make_rules(**self.rules_kwargs()), episode="round", reward="win")

    def close(self) -> None:
        self.db.close()


def init(target: str, game: str, players: int | None = None, rules_kwargs: dict[str, Any] | None = None,
         seed: int = 0) -> Ladder:
    """Make a new ladder: one game, one set of rules and one player count."""
    if game not in GAMES:
        raise LadderError(f"unknown game {game!r}; one of: {', '.join(GAMES)}")
    check_seed(seed)
    entry = game_entry(game)
    kwargs = dict(rules_kwargs or {})
    if players is not None:
        kwargs["num_players"] = players
    rules = entry.make_rules(**kwargs)  # a bad rule is refused here, before any file is made
    fields = rules_fields(rules)
    players = int(fields.pop("num_players"))
    if not 2 <= players <= 4:
        raise LadderError(f"a ladder seats 2 to 4 players, got {players}")
    if not str(target).startswith(("postgresql://", "postgres://")) and os.path.exists(target):
        raise LadderError(f"{target} already exists: a ladder is made in a new file (add entries with deckgym ladder add)")
    db = connect(target)
    try:
        db.create({"game": game, "players": players, "rules": fields, "seed": int(seed),
                   "created_at": time.time(), "created_by": __version__})
    except BaseException:
        db.close()
        if not db.pg and os.path.exists(target) and os.path.getsize(target) == 0:
            os.unlink(target)
        raise
    return Ladder(db, game, players, fields, int(seed))


def open_ladder(target: str, readonly: bool = False) -> Ladder:
    """Open an existing ladder (refused in one line when it is not one, or from a newer deckgym)."""
    if not str(target).startswith(("postgresql://", "postgres://")) and not os.path.exists(target):
        raise LadderError(f"no ladder at {target} (make one: deckgym ladder init {target} --game GAME)")
    db = connect(target, readonly=readonly)
    try:
        meta = db.check()
        if meta["game"] not in GAMES:
            raise LadderError(f"{target} is a ladder of game {meta['game']!r}, which this deckgym does not know")
    except BaseException:
        db.close()
        raise
    return Ladder(db, meta["game"], int(meta["players"]), dict(meta["rules"]), int(meta["seed"]))


def _split_model(spec: str) -> tuple[str, str, dict[str, str]]:
    """``ppo:PATH?k=v&k=v`` → (``ppo:``, PATH, options); a ``?`` that is part of an existing path stays."""
    prefix, _, path = spec.partition(":")
    options = ""
    if "?" in path and not os.path.exists(path):
        path, _, options = path.rpartition("?")
    opts = dict(item.partition("=")[::2] for item in options.split("&") if item)
    return prefix + ":", path, opts


def _with_options(head: str, opts: dict[str, str]) -> str:
    return head + ("?" + "&".join(f"{k}={v}" for k, v in sorted(opts.items())) if opts else "")


def add(ladder: Ladder, name: str, spec: str, note: str = "", allow_pickle: bool = False) -> Entry:
    """Add an entry (see the module doc); refused in one line if the name is taken, the same agent
    is already on the ladder, or the agent does not fit the ladder's table."""
    if not name or len(name) > MAX_NAME or not name.isprintable() or name != name.strip():
        raise LadderError(f"entry name {name!r}: give 1 to {MAX_NAME} printable characters without outer spaces")
    taken = ladder.db.one("SELECT status FROM entries WHERE name = ?", (name,))
    if taken:
        raise LadderError(f"the ladder already has an entry named {name!r} ({taken[0]}); choose another name")
    core = ladder.core()
    blob = None
    if spec.startswith(MODEL_PREFIXES):
        prefix, path, opts = _split_model(spec)
        if not path:
            raise LadderError(f"agent {spec!r}: no model path after {prefix!r}")
        if not os.path.isfile(path):
            raise LadderError(f"agent {spec!r}: {path} is not a file" + (" (a folder: convert it to a policy "
                              "file with deckgym convert)" if os.path.isdir(path) else ""))
        if opts.get("allow_pickle", "").lower() in ("true", "1"):
            allow_pickle = True
        opts.pop("allow_pickle", None)
        kind = None if path.endswith(SUFFIX) else pickled_kind(path)
        if kind is not None and not allow_pickle:
            raise refuse_pickle(path, kind, "add it with --allow-pickle (your word for this one entry; see SECURITY.md)")
        with open(path, "rb") as f:
            data = f.read()
        sha = hashlib.sha256(data).hexdigest()
        suffix = SUFFIX if path.endswith(SUFFIX) else os.path.splitext(path)[1] or ".bin"
        if kind is not None:
            opts["allow_pickle"] = "true"
        ident = _with_options(f"{prefix}sha256:{sha}", {k: v for k, v in opts.items() if k != "allow_pickle"})
        blob = (sha, suffix, data)
        entry_kind = "file"
    else:
        ident, sha, entry_kind = spec, None, "spec"
    with _copies() as folder:
        build = _with_options(prefix + _copy(folder, *blob), opts) if blob else spec
        try:
            make_agent(build, core, game=ladder.game)  # another game, table size or rules: refused now
        except Exception as exc:
            text = " ".join(str(exc).split())
            if blob:  # name the user's file, not this process's copy of it
                text = text.replace(_split_model(build)[1], path)
            raise LadderError(f"entry {name!r} ({spec}) cannot play this ladder ({ladder.game}, {ladder.players} "
                              f"players): {text}") from None
    with ladder.db.write() as db:
        same = db.one("SELECT name FROM entries WHERE ident = ?", (ident,))
        if same:
            raise LadderError(f"{spec} is already on the ladder as {same[0]!r} (an agent is entered once)")
        if db.one("SELECT 1 FROM entries WHERE name = ?", (name,)):
            raise LadderError(f"the ladder already has an entry named {name!r}; choose another name")
        if blob and not db.one("SELECT 1 FROM blobs WHERE sha256 = ?", (blob[0],)):
            db.q("INSERT INTO blobs (sha256, suffix, data) VALUES (?, ?, ?)", blob)
        new_id = int((db.one("SELECT COALESCE(MAX(id), 0) FROM entries") or (0,))[0]) + 1
        db.q(f"INSERT INTO entries ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
             (new_id, name, entry_kind, spec, ident, sha, int(bool(blob and allow_pickle)), note, __version__,
              time.time(), "active", ""))
    return entry_by_name(ladder, name)


def entries(ladder: Ladder, status: str | None = None) -> list[Entry]:
    """The ladder's entries in the order they were added (only those of ``status`` if given)."""
    rows = ladder.db.q(f"SELECT {_COLUMNS} FROM entries ORDER BY id")
    out = [Entry(int(r[0]), r[1], r[2], r[3], r[4], r[5], bool(r[6]), r[7], r[8], float(r[9]), r[10], r[11])
           for r in rows]
    return [e for e in out if status is None or e.status == status]


def entry_by_name(ladder: Ladder, name: str) -> Entry:
    for e in entries(ladder):
        if e.name == name:
            return e
    raise LadderError(f"no entry named {name!r} on the ladder (deckgym ladder list shows them)")


def remove(ladder: Ladder, name: str) -> Entry:
    """Retire an entry: it plays no more matches, and its matches stay in the ratings' history."""
    entry_by_name(ladder, name)
    with ladder.db.write() as db:
        db.q("UPDATE entries SET status = 'retired' WHERE name = ?", (name,))
    return entry_by_name(ladder, name)


def mark_broken(ladder: Ladder, entry_id: int, reason: str) -> None:
    """An entry whose agent failed at match time: it plays no more, with the reason recorded."""
    with ladder.db.write() as db:
        db.q("UPDATE entries SET status = 'broken', reason = ? WHERE id = ? AND status = 'active'",
             (" ".join(reason.split())[:500], entry_id))


# -- a runner's copies of the store ----------------------------------------------------------------
_CHECKED: dict[str, tuple[str, bytes]] = {}  # sha256 -> (suffix, bytes): fetched and checked once per process


@contextmanager
def _copies() -> Iterator[str]:
    """A private folder for copies of stored files, removed when the agents are built and done.

    Agents read their whole file when built; a folder left for the end of the process would
    stay behind in pool and Ray workers, which leave by ``os._exit`` and run no exit hooks.
    """
    with tempfile.TemporaryDirectory(prefix="deckgym-ladder-") as folder:
        yield folder


def _copy(folder: str, sha: str, suffix: str, data: bytes) -> str:
    """``data`` as a file of ``folder``, named by its hash."""
    path = os.path.join(folder, sha + suffix)
    if not os.path.exists(path):
        write_bytes(path, data)
    return path


def _stored(ladder: Ladder, entry: Entry, sha: str) -> tuple[str, bytes]:
    """A stored file's suffix and bytes, fetched and checked against its hash once per process."""
    if sha not in _CHECKED:
        row = ladder.db.one("SELECT suffix, data FROM blobs WHERE sha256 = ?", (sha,))
        if row is None:
            raise LadderError(f"entry {entry.name!r}: its file {sha[:12]}... is missing from the ladder's store")
        data = bytes(row[1])
        if hashlib.sha256(data).hexdigest() != sha:
            raise LadderError(f"the ladder's stored file {sha[:12]}... does not match its hash (the store is damaged)")
        _CHECKED[sha] = (row[0], data)
    return _CHECKED[sha]


@contextmanager
def built_specs(ladder: Ladder, chosen: list[Entry]) -> Iterator[list[str]]:
    """The specs a runner builds ``chosen`` from, for the ``with`` block: a spec as it is, a stored
    file as a checked copy in a private folder that is removed when the block ends."""
    with _copies() if any(e.kind == "file" for e in chosen) else nullcontext("") as folder:
        out = []
        for entry in chosen:
            if entry.kind == "spec":
                out.append(entry.spec)
                continue
            prefix, _, opts_text = entry.ident.partition("sha256:")
            sha, _, options = opts_text.partition("?")
            opts = dict(item.partition("=")[::2] for item in options.split("&") if item)
            if entry.trust_pickle:
                opts["allow_pickle"] = "true"
            out.append(_with_options(prefix + _copy(folder, sha, *_stored(ladder, entry, sha)), opts))
        yield out
