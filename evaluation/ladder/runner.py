"""Playing a ladder's matches: claim a block, play it on the arena, store it in one transaction.

A **match** is one duplicate deal played in every seating (:func:`deckgym.evaluation.arena.play_chunk`).
Match ``m``'s deal is the arena's deal ``m`` of the ladder's seed: its cards depend only on the
ladder's seed and the match number (``deal_seed``, stored, is the key the core derives from them).
A runner claims a **block** of consecutive match numbers for one table (``claims``: its runner,
host, process id and a lease), plays the block as one arena chunk (chunk number = the block's
number, so agents that break ties at random are seeded from the ladder's seed, the block and their
identity: the block replays bit for bit), and stores its matches with their results in one
transaction that also deletes the claim.

Crash safety and concurrency come from that order:

- ``kill -9`` while a block is played loses that block only; nothing of it was written. The next
  runner (or the rerun) takes the claim over at once when its process is gone from this host, or
  when its lease has passed (a runner on another machine), and plays the same matches again:
  the same numbers, the same deals, the same seeds.
- the store transaction checks that the claim is still this runner's: if another runner took it
  over meanwhile, the results are dropped (the match numbers are the primary key as well, so a
  match is never stored twice).
- an agent that cannot be built or raises marks its entry ``broken`` with the reason; the block is
  given up and the ladder goes on with the others.
"""

from __future__ import annotations

import json
import os
import socket
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from deckgym import __version__
from deckgym.agents.registry import make_agent
from deckgym.rng import make_keys
from deckgym.evaluation.arena import agent_order, play_chunk
from deckgym.evaluation.ladder.db import LadderError
from deckgym.evaluation.ladder.entries import Entry, Ladder, built_specs, entries, mark_broken
from deckgym.evaluation.ladder.scheduler import SCHEDULES, pick

__all__ = ["Claim", "RunSummary", "run", "pair_tallies", "play_block"]

DEFAULT_BLOCK = 16
DEFAULT_LEASE = 600.0  # seconds before a claim of a runner on another machine may be taken over


@dataclass
class Claim:
    batch: int
    first: int
    end: int
    lineup: list[int]  # entry ids, in the order seated (sorted ids)
    replays: bool
    taken_over: bool = False


@dataclass
class RunSummary:
    matches: int = 0  # matches this runner stored
    blocks: int = 0
    taken_over: int = 0  # claims of a runner that was gone, played again here
    dropped: int = 0  # blocks whose claim another runner took over meanwhile
    broken: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def line(self) -> str:
        out = f"{self.matches} matches stored in {self.blocks} blocks, {self.seconds:.1f} s"
        if self.taken_over:
            out += f"; {self.taken_over} unfinished block(s) of a stopped runner played again"
        if self.broken:
            out += f"; broken: {', '.join(self.broken)}"
        return out


def runner_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def pair_tallies(ladder: Ladder, ids: list[int]) -> np.ndarray:
    """``pair[a, b]``: entry ``ids[a]``'s pairwise score against ``ids[b]`` over all stored matches."""
    at = {e: i for i, e in enumerate(ids)}
    pair = np.zeros((len(ids), len(ids)))
    for a, b, score in ladder.db.q("SELECT a, b, score FROM pair_scores"):
        if a in at and b in at:
            pair[at[a], at[b]] = score
    return pair


def _stale(row: tuple, now: float, host: str) -> bool:
    lease_until, claim_host, pid = row[7], row[5], row[6]
    return lease_until < now or (claim_host == host and not _alive(int(pid)))


def claim(ladder: Ladder, me: str, block: int, schedule: str, replays: bool, lease: float,
          limit: int | None = None) -> Claim | None:
    """Take the next block (one transaction): a stopped runner's claim first, else a new table."""
    host, now = socket.gethostname(), time.time()
    with ladder.db.write() as db:
        active = {e.id for e in entries(ladder, "active")}
        for row in db.q("SELECT batch, first_match, end_match, lineup, runner, host, pid, lease_until, replays "
                        "FROM claims ORDER BY batch"):
            if not _stale(row, now, host):
                continue
            lineup = json.loads(row[3])
            if not set(lineup) <= active:  # an entry retired or broken since: give the block up
                db.q("DELETE FROM claims WHERE batch = ?", (row[0],))
                continue
            db.q("UPDATE claims SET runner = ?, host = ?, pid = ?, lease_until = ? WHERE batch = ?",
                 (me, host, os.getpid(), now + lease, row[0]))
            return Claim(int(row[0]), int(row[1]), int(row[2]), lineup, bool(row[8]), taken_over=True)
        ids = sorted(active)
        if len(ids) < ladder.players:
            return None
        lineup = pick(ids, pair_tallies(ladder, ids), ladder.players, schedule, block=block)
        meta = dict(db.q("SELECT key, value FROM meta WHERE key IN ('next_match', 'next_batch')"))
        first, batch = int(meta["next_match"]), int(meta["next_batch"])
        end = first + (block if limit is None else max(1, min(block, limit)))
        db.q("UPDATE meta SET value = ? WHERE key = 'next_match'", (str(end),))
        db.q("UPDATE meta SET value = ? WHERE key = 'next_batch'", (str(batch + 1),))
        db.q("INSERT INTO claims (batch, first_match, end_match, lineup, runner, host, pid, lease_until, replays) "
             "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
             (batch, first, end, json.dumps(lineup), me, host, os.getpid(), now + lease, int(replays)))
    return Claim(batch, first, end, lineup, replays)


def play_block(ladder: Ladder, lineup: list[Entry], batch: int, first: int, end: int,
               replays: bool = False) -> dict[str, Any]:
    """Play matches ``first..end-1`` of block ``batch`` among ``lineup`` (the arena's tallies, per game).
    The entries are seated in the order of their ids, whatever order ``lineup`` lists them in."""
    lineup = sorted(lineup, key=lambda e: e.id)
    idents = [e.ident for e in lineup]
    names = agent_order(idents)
    by_ident = {e.ident: e for e in lineup}
    with built_specs(ladder, [by_ident[n] for n in names]) as build:
        return play_chunk(ladder.game, ladder.rules_kwargs(), False, idents, build, ladder.seed, batch, first, end,
                          replay_games=end if replays else 0, per_game=True)


def match_rows(ladder: Ladder, c: Claim, lineup: list[Entry], t: dict[str, Any], wall: float,
               me: str) -> tuple[list[tuple], list[tuple], dict[tuple[int, int], float]]:
    """The rows of the block's matches, of their replays, and the pairwise scores to add."""
    names = agent_order([e.ident for e in lineup])
    by_ident = {e.ident: e for e in lineup}
    owner_id = np.array([by_ident[n].id for n in names])
    g = t["per_game"]
    seats = owner_id[g["owners"]]
    keys = make_keys(ladder.seed, np.arange(c.first, c.end))
    hashes = json.dumps({str(e.id): e.sha256 or e.spec for e in lineup})
    per_match = wall / max(1, c.end - c.first)
    rows: list[Any] = []
    pairs: dict[Any, Any] = {}
    now = time.time()
    for m in range(c.first, c.end):
        games = np.flatnonzero(g["deal"] == m)
        seatings = []
        for i in games:
            won = g["wins"][i] > 0
            seatings.append({"rotation": int(g["rotation"][i]), "seats": [int(s) for s in seats[i]],
                             "points": [float(p) for p in g["points"][i]], "wins": [float(w) for w in g["wins"][i]],
                             "turns": int(g["turns"][i])})
            for a in range(ladder.players):
                for b in range(ladder.players):
                    if a != b and (won[a] > won[b] or (won[a] and won[b])):
                        key = (int(seats[i][a]), int(seats[i][b]))
                        pairs[key] = pairs.get(key, 0.0) + (1.0 if won[a] > won[b] else 0.5)
        rows.append((m, c.batch, c.first, c.end, f"{int(keys[m - c.first]):016x}", json.dumps(c.lineup), hashes,
                     json.dumps({"seatings": seatings}), __version__, per_match, now, me))
    reps = []
    for fname, lines in t.get("replays", []):
        deal = int(fname.split("deal")[1].split("-")[0])
        rot = int(fname.split("-rot")[1].split(".")[0])
        reps.append((deal, rot, "".join(json.dumps(x, separators=(",", ":")) + "\n" for x in lines)))
    return rows, reps, pairs


def store(ladder: Ladder, me: str, c: Claim, rows: list[tuple], reps: list[tuple],
          pairs: dict[tuple[int, int], float]) -> bool:
    """Store a played block in one transaction, if its claim is still this runner's."""
    with ladder.db.write() as db:
        held = db.one("SELECT runner FROM claims WHERE batch = ?", (c.batch,))
        if held is None or held[0] != me or db.one("SELECT 1 FROM matches WHERE match = ?", (c.first,)):
            return False
        db.many("INSERT INTO matches (match, batch, first_match, end_match, deal_seed, lineup, hashes, results, "
                "deckgym_version, wall_time, played_at, runner) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        if reps:
            db.many("INSERT INTO replays (match, rotation, data) VALUES (?, ?, ?)", reps)
        if pairs:
            db.many("INSERT INTO pair_scores (a, b, score) VALUES (?, ?, ?) ON CONFLICT (a, b) "
                    "DO UPDATE SET score = pair_scores.score + excluded.score",
                    [(a, b, s) for (a, b), s in sorted(pairs.items())])
        db.q("DELETE FROM claims WHERE batch = ?", (c.batch,))
    return True


def _culprits(ladder: Ladder, lineup: list[Entry], c: Claim) -> list[tuple[Entry, str]]:
    """Which entries of a failed block fail on their own (each alone at the table, one deal)."""
    out = []
    core = ladder.core()
    for e in lineup:
        try:
            with built_specs(ladder, [e]) as spec:
                make_agent(spec[0], core, game=ladder.game)
                play_chunk(ladder.game, ladder.rules_kwargs(), False, [e.ident] * ladder.players, spec,
                           ladder.seed, c.batch, c.first, c.first + 1)
        except Exception as exc:  # noqa: BLE001 - any failure of the agent marks it, with its reason
            out.append((e, f"{type(exc).__name__}: {exc}"))
    return out


def run(ladder: Ladder, matches: int | None = None, minutes: float | None = None, block: int = DEFAULT_BLOCK,
        schedule: str = "uncertainty", replays: bool = False, lease: float = DEFAULT_LEASE,
        progress: Callable[[RunSummary], None] | None = None, me: str | None = None) -> RunSummary:
    """Play matches until this runner has stored ``matches`` or ``minutes`` have passed (the
    block in hand is finished first). Other runners may work on the same ladder at once."""
    if schedule not in SCHEDULES:
        raise LadderError(f"unknown schedule {schedule!r}; one of: {', '.join(SCHEDULES)}")
    if matches is None and minutes is None:
        matches = 64
    if (matches is not None and matches < 1) or (minutes is not None and minutes <= 0) or block < 1:
        raise LadderError("--matches, --minutes and --block must be positive")
    me = me or runner_id()
    summary, start = RunSummary(), time.monotonic()
    while True:
        if matches is not None and summary.matches >= matches:
            break
        if minutes is not None and time.monotonic() - start > 60 * minutes:
            break
        left = None if matches is None else matches - summary.matches
        c = claim(ladder, me, block, schedule, replays, lease, left)
        if c is None:
            if summary.blocks == 0 and not summary.broken:
                raise LadderError(f"a {ladder.players}-player ladder needs at least {ladder.players} active entries "
                                  "(deckgym ladder add)")
            break
        summary.taken_over += int(c.taken_over)
        by_id = {e.id: e for e in entries(ladder)}
        lineup = [by_id[i] for i in c.lineup]
        t0 = time.perf_counter()
        try:
            t = play_block(ladder, lineup, c.batch, c.first, c.end, c.replays)
        except Exception as exc:  # noqa: BLE001 - an agent's failure is the entry's, not the ladder's
            bad = _culprits(ladder, lineup, c) or [(e, f"a match with {', '.join(x.name for x in lineup)} failed: "
                                                       f"{type(exc).__name__}: {exc}") for e in lineup]
            for e, reason in bad:
                mark_broken(ladder, e.id, reason)
                summary.broken.append(e.name)
            with ladder.db.write() as db:
                db.q("DELETE FROM claims WHERE batch = ? AND runner = ?", (c.batch, me))
            continue
        rows, reps, pairs = match_rows(ladder, c, lineup, t, time.perf_counter() - t0, me)
        if store(ladder, me, c, rows, reps, pairs):
            summary.matches += len(rows)
            summary.blocks += 1
        else:
            summary.dropped += 1
        summary.seconds = time.monotonic() - start
        if progress:
            progress(summary)
    summary.seconds = time.monotonic() - start
    return summary
