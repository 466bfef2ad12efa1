"""The ladder's database: one schema, one code path, on SQLite (a file, WAL mode) or PostgreSQL.

The access layer is the standard library's ``sqlite3`` plus ``psycopg`` (3), not SQLAlchemy
Core, because:

- the default, embedded case needs no dependency at all (``sqlite3`` ships with Python), and a
  lab on PostgreSQL adds one small, binary wheel (``psycopg[binary]``), not an ORM toolkit;
- the schema is seven tables and the queries are plain SQL: the only differences between the
  two servers are the placeholder (``?`` / ``%s``), the blob type and how a writer takes the
  ladder's lock. Those three live in :class:`Db` and nowhere else;
- the guarantees the ladder gives (no half-written match, no match played twice by two runners)
  rest on exactly how a transaction takes its lock: ``BEGIN IMMEDIATE`` on SQLite, ``SELECT
  ... FOR UPDATE`` of the ladder's row on PostgreSQL. Written out here, they can be read and
  tested; an abstraction layer would hide them.

Every write is one transaction (:meth:`Db.write`): it either lands whole or not at all, so a
``kill -9`` at any moment leaves the file as it was before the transaction or after it. The
schema has a version (``meta.schema_version``): a database written by a newer deckgym is
refused in one line, a file that is not a ladder is refused in one line, and nothing is written
to a file before it has been recognised as a ladder (or is new).
"""

from __future__ import annotations

import json
import os
import sqlite3
from contextlib import contextmanager
from typing import Any, Iterator
from urllib.parse import urlsplit

__all__ = ["SCHEMA_VERSION", "LadderError", "Db", "connect", "is_url"]

SCHEMA_VERSION = 1
APP = "deckgym-ladder"
CONNECT_TIMEOUT = 5  # seconds to reach a PostgreSQL server before the one-line error
BUSY_TIMEOUT_MS = 60_000  # a SQLite writer waits this long for another runner's transaction

# {BLOB}: bytes; {BIG}: 64-bit integers. Nothing else differs between the two servers.
SCHEMA = [
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    # one entry: a spec (heuristic, search agent) or a policy file copied into the blob store
    """CREATE TABLE entries (id {BIG} PRIMARY KEY, name TEXT NOT NULL UNIQUE, kind TEXT NOT NULL,
       spec TEXT NOT NULL, ident TEXT NOT NULL UNIQUE, sha256 TEXT, trust_pickle INTEGER NOT NULL,
       note TEXT NOT NULL, deckgym_version TEXT NOT NULL, added_at DOUBLE PRECISION NOT NULL,
       status TEXT NOT NULL, reason TEXT NOT NULL)""",
    # the content-addressed store: a policy file's bytes under their sha256
    "CREATE TABLE blobs (sha256 TEXT PRIMARY KEY, suffix TEXT NOT NULL, data {BLOB} NOT NULL)",
    # work in flight: a block of match numbers a runner has taken (deleted when its matches land)
    """CREATE TABLE claims (batch {BIG} PRIMARY KEY, first_match {BIG} NOT NULL, end_match {BIG} NOT NULL,
       lineup TEXT NOT NULL, runner TEXT NOT NULL, host TEXT NOT NULL, pid {BIG} NOT NULL,
       lease_until DOUBLE PRECISION NOT NULL, replays INTEGER NOT NULL)""",
    # one match: a duplicate deal played in every seating (results: one item per seating)
    """CREATE TABLE matches (match {BIG} PRIMARY KEY, batch {BIG} NOT NULL, first_match {BIG} NOT NULL,
       end_match {BIG} NOT NULL, deal_seed TEXT NOT NULL, lineup TEXT NOT NULL, hashes TEXT NOT NULL,
       results TEXT NOT NULL, deckgym_version TEXT NOT NULL, wall_time DOUBLE PRECISION NOT NULL,
       played_at DOUBLE PRECISION NOT NULL, runner TEXT NOT NULL)""",
    "CREATE TABLE replays (match {BIG} NOT NULL, rotation INTEGER NOT NULL, data TEXT NOT NULL, "
    "PRIMARY KEY (match, rotation))",
    # the pairwise scores of all stored matches (a's score against b), kept with each block: the
    # scheduler reads them instead of every match
    """CREATE TABLE pair_scores (a {BIG} NOT NULL, b {BIG} NOT NULL, score DOUBLE PRECISION NOT NULL,
       PRIMARY KEY (a, b))""",
    "CREATE INDEX matches_played ON matches (played_at)",
]


class LadderError(ValueError):
    """A ladder refuses: one line naming the problem (the CLI prints it, exit 2)."""


def is_url(target: str) -> bool:
    return str(target).startswith(("postgresql://", "postgres://"))


def _where(target: str) -> str:
    """A PostgreSQL URL without its password, for error lines."""
    p = urlsplit(target)
    return f"{p.hostname or 'localhost'}:{p.port or 5432}{p.path or ''}"


class Db:
    """One connection to a ladder database (see the module doc). ``q`` runs a statement,
    ``write()`` is a locked transaction; placeholders are written ``?`` on both servers."""

    def __init__(self, target: str, readonly: bool = False) -> None:
        self.target, self.readonly = str(target), readonly
        self.pg = is_url(target)
        self._in_tx = False
        self.conn = self._open_pg() if self.pg else self._open_sqlite()

    # -- opening -------------------------------------------------------------------------
    def _open_sqlite(self) -> Any:
        path = self.target
        if os.path.islink(path):
            raise LadderError(f"{path} is a symbolic link; give the ladder file itself")
        if os.path.isdir(path):
            raise LadderError(f"{path} is a folder, not a ladder database file")
        if self.readonly:
            if not os.path.exists(path):
                raise LadderError(f"no ladder at {path} (make one: deckgym ladder init {path} --game GAME)")
            uri = f"file:{os.path.abspath(path)}?mode=ro"
            conn = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
        else:
            if os.path.exists(path) and not os.access(path, os.W_OK):
                raise LadderError(f"{path} is read-only (show and export can still read it)")
            conn = sqlite3.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
        try:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            # WAL with synchronous=NORMAL: a commit survives any crash of the process (kill -9) and the
            # file never corrupts; a power cut may drop the last blocks committed, which a rerun plays again
            conn.execute("PRAGMA synchronous = NORMAL")
        except sqlite3.Error as exc:
            conn.close()
            raise LadderError(_sqlite_line(path, exc)) from None
        return conn

    def _open_pg(self) -> Any:
        from deckgym.extras import require_extra

        require_extra("ladder", "a ladder on PostgreSQL", ("psycopg",))
        import psycopg

        try:
            conn = psycopg.connect(self.target, connect_timeout=CONNECT_TIMEOUT, autocommit=True)
        except psycopg.Error as exc:
            raise LadderError(f"cannot reach the PostgreSQL ladder at {_where(self.target)}: "
                              f"{' '.join(str(exc).split())[:200]}") from None
        return conn

    def close(self) -> None:
        self.conn.close()

    # -- statements ----------------------------------------------------------------------
    def _sql(self, sql: str) -> str:
        return sql.replace("?", "%s") if self.pg else sql

    def q(self, sql: str, params: tuple | list = ()) -> list[tuple]:
        """Run one statement; its rows (empty for statements without any)."""
        with self._errors():
            cur = self.conn.execute(self._sql(sql), tuple(params))
            rows = cur.fetchall() if cur.description else []
        return [tuple(bytes(v) if isinstance(v, memoryview) else v for v in r) for r in rows]

    def many(self, sql: str, rows: list[tuple]) -> None:
        with self._errors():
            if self.pg:
                with self.conn.cursor() as cur:
                    cur.executemany(self._sql(sql), rows)
            else:
                self.conn.executemany(sql, rows)

    def one(self, sql: str, params: tuple | list = ()) -> tuple | None:
        rows = self.q(sql, params)
        return rows[0] if rows else None

    def row(self, sql: str, params: tuple | list = ()) -> tuple:
        """The first row of a query that always has one (a count, a stored match); a missing one
        is a damaged ladder, said in one line."""
        found = self.one(sql, params)
        if found is None:
            raise LadderError(f"{self.target}: the ladder is damaged: no row for {sql.split(' FROM ')[-1]} {params}")
        return found

    @contextmanager
    def write(self) -> Iterator["Db"]:
        """One transaction that holds the ladder's write lock from its first statement: it lands
        whole or not at all, and two runners' transactions never interleave."""
        if self.readonly:
            raise LadderError(f"{self.target} is opened read-only")
        if self._in_tx:
            raise RuntimeError("nested ladder transaction")
        self._in_tx = True
        try:
            with self._errors():
                if self.pg:
                    self.conn.execute("BEGIN")
                    # every writer locks the ladder's row first: claims and results are serialised
                    self.conn.execute("SELECT value FROM meta WHERE key = 'app' FOR UPDATE")
                else:
                    self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self
            except BaseException:
                try:
                    self.conn.execute("ROLLBACK")
                except Exception:
                    pass
                raise
            with self._errors():
                self.conn.execute("COMMIT")
        finally:
            self._in_tx = False

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """A database error as one line naming the ladder and what went wrong."""
        try:
            yield
        except LadderError:
            raise
        except sqlite3.Error as exc:
            raise LadderError(_sqlite_line(self.target, exc)) from None
        except Exception as exc:
            if type(exc).__module__.startswith("psycopg"):
                raise LadderError(f"the PostgreSQL ladder at {_where(self.target)}: "
                                  f"{' '.join(str(exc).split())[:200]}") from None
            raise

    # -- schema --------------------------------------------------------------------------
    def tables(self) -> set[str]:
        if self.pg:
            rows = self.q("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")
        else:
            rows = self.q("SELECT name FROM sqlite_master WHERE type = 'table'")
        return {r[0] for r in rows}

    def create(self, meta: dict[str, Any]) -> None:
        """Make the schema and write the ladder's settings, in one transaction."""
        if self.tables():
            raise LadderError(f"{self._name()} already holds tables: a ladder is made in a new, empty database")
        blob, big = ("BYTEA", "BIGINT") if self.pg else ("BLOB", "INTEGER")
        with self._errors():
            if not self.pg:
                self.conn.execute("PRAGMA journal_mode = WAL")
            self.conn.execute("BEGIN")
            try:
                for stmt in SCHEMA:
                    self.conn.execute(stmt.replace("{BLOB}", blob).replace("{BIG}", big))
                rows = {"app": APP, "schema_version": str(SCHEMA_VERSION), "next_match": "0", "next_batch": "0",
                        **{k: json.dumps(v) for k, v in meta.items()}}
                for k, v in rows.items():
                    self.conn.execute(self._sql("INSERT INTO meta (key, value) VALUES (?, ?)"), (k, v))
                self.conn.execute("COMMIT")
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise

    def check(self) -> dict[str, Any]:
        """The ladder's settings, after checking this is a ladder of a schema this deckgym reads."""
        name = self._name()
        try:
            tables = self.tables()
        except LadderError as exc:
            raise LadderError(f"{name} is not a ladder database ({str(exc).split(': ', 1)[-1]})") from None
        if not tables:
            raise LadderError(f"{name} is not a ladder (it is empty: make one with deckgym ladder init)")
        if "meta" not in tables:
            raise LadderError(f"{name} is not a deckgym ladder (a database of something else)")
        meta = dict(self.q("SELECT key, value FROM meta"))
        if meta.get("app") != APP:
            raise LadderError(f"{name} is not a deckgym ladder (a database of something else)")
        version = int(meta.get("schema_version", "0"))
        if version > SCHEMA_VERSION:
            raise LadderError(f"{name} was written by a newer deckgym (ladder schema {version}, this deckgym reads "
                              f"up to {SCHEMA_VERSION}): upgrade deckgym")
        out: dict[str, Any] = {}
        for k, v in meta.items():
            out[k] = v if k in ("app",) else json.loads(v)
        return out

    def _name(self) -> str:
        return f"the PostgreSQL database at {_where(self.target)}" if self.pg else str(self.target)

    def set_meta(self, key: str, value: Any) -> None:
        self.q("UPDATE meta SET value = ? WHERE key = ?", (json.dumps(value), key))


def _sqlite_line(target: str, exc: sqlite3.Error) -> str:
    text = str(exc)
    if "not a database" in text or "malformed" in text:
        return f"{target} is not a ladder database (the file is corrupt or of another kind)"
    if "readonly" in text or "read-only" in text:
        return f"{target} is read-only (show and export can still read it)"
    if "disk is full" in text or "database or disk is full" in text:
        return f"{target}: the disk is full; nothing of this step was written (free space and run it again)"
    if "locked" in text or "busy" in text:
        return f"{target} is locked by another process for too long ({text})"
    if "unable to open" in text:
        return f"cannot open {target} (its folder does not exist or is not writable)"
    return f"{target}: {' '.join(text.split())}"


def connect(target: str, readonly: bool = False) -> Db:
    """Open a ladder database (a file path or a ``postgresql://`` URL)."""
    return Db(target, readonly=readonly)
