"""Ladder runners as real processes, on SQLite and on a real PostgreSQL server: ``kill -9`` in the
middle of a block loses that block only and the rerun plays it again, identically; two runners on
one ladder lose no match and play none twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from deckgym.evaluation import ladder as lad
from deckgym.evaluation.ladder.runner import pair_tallies

ROOT = Path(__file__).resolve().parents[1]
ENTRIES = (("random", "random"), ("bucket", "racko:bucket"), ("seq", "racko:sequence"), ("ranges", "racko:ranges"))


@pytest.fixture(params=["sqlite", "postgres"])
def target(request, tmp_path):
    if request.param == "sqlite":
        return str(tmp_path / "lab.ladder")
    return request.getfixturevalue("pg_cluster").database()


def make(target: str, seed: int = 11) -> None:
    ladder = lad.init(target, "racko", players=2, seed=seed)
    for name, spec in ENTRIES:
        lad.add(ladder, name, spec)
    ladder.close()


def runner(target: str, *args: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    return subprocess.Popen([sys.executable, "-m", "deckgym", "ladder", "run", target, "--quiet", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=str(ROOT))


def count(target: str, sql: str) -> int:
    ladder = lad.open_ladder(target, readonly=True)
    try:
        return int(ladder.db.one(sql)[0])
    finally:
        ladder.close()


def check_consistent(ladder: lad.Ladder) -> list[int]:
    """Every match once, numbered without a gap; no claim left; the pairwise tallies agree with the matches."""
    numbers = [m for (m,) in ladder.db.q("SELECT match FROM matches ORDER BY match")]
    assert numbers == list(range(len(numbers)))
    assert ladder.db.q("SELECT COUNT(*) FROM claims") == [(0,)]
    ids = [e.id for e in lad.entries(ladder)]
    at = {e: k for k, e in enumerate(ids)}
    again = np.zeros((len(ids), len(ids)))
    for (results,) in ladder.db.q("SELECT results FROM matches"):
        for s in json.loads(results)["seatings"]:
            (a, b), (wa, wb) = s["seats"], s["wins"]
            both = 0.5 if wa > 0 and wb > 0 else 0.0  # a shared win: half a point each
            again[at[a], at[b]] += (wa > wb) + both
            again[at[b], at[a]] += (wb > wa) + both
    assert np.array_equal(pair_tallies(ladder, ids), again)
    return numbers


def test_kill_9_mid_block_loses_only_that_block(target):
    make(target)
    proc = runner(target, "--matches", "64", "--block", "32")
    try:
        deadline = time.monotonic() + 240
        while count(target, "SELECT COUNT(*) FROM claims") == 0:  # a block in flight
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the runner never claimed a block"
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    stored = count(target, "SELECT COUNT(*) FROM matches")
    assert stored % 32 == 0  # whole blocks only: nothing half-written
    assert count(target, "SELECT COUNT(*) FROM claims") == 1  # the block it was playing
    again = runner(target, "--matches", "64", "--block", "32")
    out, err = again.communicate(timeout=600)
    assert again.returncode == 0, err
    assert "played again" in out
    ladder = lad.open_ladder(target)
    numbers = check_consistent(ladder)
    assert len(numbers) == stored + 64
    played = {m: r for m, r in ladder.db.q("SELECT match, results FROM matches")}
    ladder.close()
    # the same ladder, never interrupted, stores the very same matches
    ref = lad.init(str(Path(os.environ.get("TMPDIR", "/tmp")) / f"ref-{os.getpid()}-{time.time_ns()}.ladder"),
                   "racko", players=2, seed=11)
    try:
        for name, spec in ENTRIES:
            lad.add(ref, name, spec)
        lad.run(ref, matches=len(numbers), block=32)
        assert {m: r for m, r in ref.db.q("SELECT match, results FROM matches")} == played
    finally:
        ref.close()
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(ref.target + suffix):
                os.unlink(ref.target + suffix)


def test_two_runners_share_a_ladder(target):
    make(target, seed=12)
    procs = [runner(target, "--matches", "48", "--block", "8") for _ in range(2)]
    outs = [p.communicate(timeout=600) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        assert out.startswith("48 matches stored")
    ladder = lad.open_ladder(target)
    numbers = check_consistent(ladder)
    assert len(numbers) == 96
    assert len({r for (r,) in ladder.db.q("SELECT runner FROM matches")}) == 2
    assert lad.verify(ladder, sample=12).differ == []
    ladder.close()


def test_runners_on_a_local_ray_share_a_ladder(tmp_path):
    """``run --ray local --workers 2``: one runner per Ray worker on the same SQLite ladder; every
    match once, no claim left, and the stored matches replay as stored."""
    target = str(tmp_path / "lab.ladder")
    make(target, seed=13)
    proc = runner(target, "--matches", "16", "--block", "4", "--ray", "local", "--workers", "2")
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err[-3000:]
    ladder = lad.open_ladder(target)
    numbers = check_consistent(ladder)
    assert len(numbers) == 16
    assert len({r for (r,) in ladder.db.q("SELECT runner FROM matches")}) == 2  # both workers played
    assert lad.verify(ladder, sample=4).differ == []
    ladder.close()
