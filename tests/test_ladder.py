"""The standing ladder (``deckgym ladder``, ``deckgym.evaluation.ladder``) on SQLite and on a real
PostgreSQL server (tests/pg_cluster.py): entries, runs, stored matches, standings, bad input."""

from __future__ import annotations

import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

from deckgym.agents.registry import AGENTS, register_agent
from deckgym.agents.random_agent import RandomAgent
from deckgym.cli import main
from deckgym.evaluation import ladder as lad
from deckgym.evaluation.ladder.db import SCHEMA_VERSION
from deckgym.evaluation.ladder.runner import match_rows, Claim, play_block

ROOT = Path(__file__).resolve().parents[1]
MODEL_2P = str(ROOT / "models" / "racko_2p.safetensors")
MODEL_4P = str(ROOT / "models" / "racko_4p.safetensors")


@pytest.fixture(params=["sqlite", "postgres"])
def target(request, tmp_path):
    """A place for a new ladder: a SQLite file, or an empty database on the test server."""
    if request.param == "sqlite":
        return str(tmp_path / "lab.ladder")
    return request.getfixturevalue("pg_cluster").database()


def small_ladder(target: str, seed: int = 5, players: int = 2, game: str = "racko") -> lad.Ladder:
    ladder = lad.init(target, game, players=players, seed=seed)
    lad.add(ladder, "random", "random")
    lad.add(ladder, "bucket", f"{game}:bucket" if game == "racko" else "leastscore:counting")
    return ladder


def test_init_add_run_show_verify(target):
    ladder = small_ladder(target)
    lad.add(ladder, "ppo", f"ppo:{MODEL_2P}", note="shipped")
    assert [e.name for e in lad.entries(ladder)] == ["random", "bucket", "ppo"]
    s = lad.run(ladder, matches=40, block=8)
    assert s.matches == 40 and s.blocks == 5
    rows = ladder.db.q("SELECT match, deal_seed, lineup, hashes, results, deckgym_version, wall_time FROM matches "
                       "ORDER BY match")
    assert [r[0] for r in rows] == list(range(40))
    for m, deal_seed, lineup, hashes, results, version, wall in rows:
        seatings = json.loads(results)["seatings"]
        assert len(seatings) == 2 and sorted(x["rotation"] for x in seatings) == [0, 1]  # every seating
        for x in seatings:
            assert sorted(x["seats"]) == sorted(json.loads(lineup)) and len(x["points"]) == 2 and x["turns"] > 0
            assert sum(x["wins"]) == pytest.approx(1.0)
        assert len(deal_seed) == 16 and version and wall > 0 and set(json.loads(hashes)) == {str(i) for i in json.loads(lineup)}
    assert ladder.db.q("SELECT COUNT(*) FROM claims") == [(0,)]
    st = lad.standings(ladder)
    assert {r["name"] for r in st.rows} == {"random", "bucket", "ppo"}
    for r in st.rows:
        if r["games"]:
            assert r["elo_low"] <= r["elo"] <= r["elo_high"]
    assert st.rows[-1]["name"] == "random"  # the weakest, on any deals
    assert "95% CI" in lad.table(st) and lad.csv_text(st).startswith("rank,name")
    assert lad.verify(ladder, sample=6).differ == []
    ladder.close()


def test_a_second_run_continues(target):
    ladder = small_ladder(target)
    lad.run(ladder, matches=16, block=8)
    ladder.close()
    again = lad.open_ladder(target)
    lad.run(again, matches=16, block=8)
    assert [m for (m,) in again.db.q("SELECT match FROM matches ORDER BY match")] == list(range(32))
    again.close()


def test_verify_reports_a_changed_result(tmp_path):
    ladder = small_ladder(str(tmp_path / "l.db"))
    lad.run(ladder, matches=8, block=8)
    results = json.loads(ladder.db.one("SELECT results FROM matches WHERE match = 3")[0])
    results["seatings"][0]["turns"] += 1
    with ladder.db.write() as db:
        db.q("UPDATE matches SET results = ? WHERE match = 3", (json.dumps(results),))
    rep = lad.verify(ladder, sample=8)
    assert len(rep.differ) == 1 and rep.differ[0].startswith("match 3 ")


def test_the_policy_file_is_copied_into_the_store(tmp_path):
    model = tmp_path / "mine.safetensors"
    shutil.copy(MODEL_2P, model)
    ladder = small_ladder(str(tmp_path / "l.db"))
    e = lad.add(ladder, "mine", f"ppo:{model}")
    assert e.kind == "file" and len(e.sha256) == 64 and e.ident == f"ppo:sha256:{e.sha256}"
    lad.run(ladder, matches=24, block=8)
    model.write_bytes(b"not a model any more")  # replacing the file on disk changes nothing
    assert lad.verify(ladder, sample=24).differ == []
    assert lad.run(ladder, matches=8, block=8).broken == []


def test_refusals_at_add(tmp_path):
    ladder = small_ladder(str(tmp_path / "l.db"))
    with pytest.raises(lad.LadderError, match="already has an entry named 'random'"):
        lad.add(ladder, "random", "racko:sequence")
    with pytest.raises(lad.LadderError, match="already on the ladder as 'bucket'"):
        lad.add(ladder, "bucket2", "racko:bucket")
    with pytest.raises(lad.LadderError, match="unknown agent 'racko:nope'"):
        lad.add(ladder, "x", "racko:nope")
    with pytest.raises(lad.LadderError, match="num_players: policy 4 vs game 2"):
        lad.add(ladder, "p4", f"ppo:{MODEL_4P}")
    with pytest.raises(lad.LadderError, match="unknown agent 'leastscore:counting'"):
        lad.add(ladder, "other-game", "leastscore:counting")
    pickle = tmp_path / "model.pt"
    pickle.write_bytes(b"\x80\x04K\x01.")
    with pytest.raises(ValueError, match="--allow-pickle"):
        lad.add(ladder, "pickled", f"ppo:{pickle}")
    assert [e.name for e in lad.entries(ladder)] == ["random", "bucket"]  # nothing was added


def test_remove_keeps_the_matches(tmp_path):
    ladder = small_ladder(str(tmp_path / "l.db"))
    lad.add(ladder, "seq", "racko:sequence")
    lad.run(ladder, matches=32, block=8)
    lad.remove(ladder, "random")
    n = ladder.db.one("SELECT COUNT(*) FROM matches")[0]
    lad.run(ladder, matches=16, block=8)
    new = ladder.db.q("SELECT lineup FROM matches WHERE match >= ?", (n,))
    rid = lad.entries(ladder)[0].id
    assert all(rid not in json.loads(x) for (x,) in new)
    row = [r for r in lad.standings(ladder).rows if r["name"] == "random"][0]
    assert row["status"] == "retired" and row["games"] > 0


class Boom(RandomAgent):
    """An agent that builds fine and raises at its 5th decision."""

    def act(self, observations, action_masks):
        self.calls = getattr(self, "calls", 0) + 1
        if self.calls > 4:
            raise RuntimeError("boom at move 5")
        return super().act(observations, action_masks)


def test_an_agent_that_raises_is_marked_broken_and_the_ladder_goes_on(tmp_path):
    register_agent("test-boom", f"{__name__}:Boom")
    try:
        ladder = small_ladder(str(tmp_path / "l.db"))
        lad.add(ladder, "seq", "racko:sequence")
        lad.add(ladder, "boom", "test-boom")
        s = lad.run(ladder, matches=48, block=8)
        assert s.broken == ["boom"] and s.matches == 48
        boom = [e for e in lad.entries(ladder) if e.name == "boom"][0]
        assert boom.status == "broken" and "boom at move 5" in boom.reason
        assert "broken: boom" in lad.table(lad.standings(ladder))
    finally:
        AGENTS.pop("test-boom", None)


def test_three_players_openskill_and_shares(tmp_path):
    ladder = lad.init(str(tmp_path / "l.db"), "racko", players=3, seed=2)
    for name, spec in (("random", "random"), ("bucket", "racko:bucket"), ("seq", "racko:sequence"),
                       ("look", "racko:lookahead")):
        lad.add(ladder, name, spec)
    lad.run(ladder, matches=24, block=6)
    st = lad.standings(ladder)
    for r in st.rows:
        assert r["sigma"] > 0 and r["conservative"] == pytest.approx(r["mu"] - 3 * r["sigma"], abs=1e-5)
        assert r["fair_share"] == pytest.approx(1 / 3)
        if r["games"]:
            assert r["share_low"] <= r["share"] <= r["share_high"]
    assert st.rows[-1]["name"] == "random"
    games = ladder.db.q("SELECT results FROM matches")
    assert all(len(json.loads(g)["seatings"]) == 3 for (g,) in games)  # three seatings per deal
    assert "mu-3σ" in lad.table(st)


def test_alpharank_sees_through_a_cycle():
    from deckgym.evaluation.ladder.standings import _alpharank

    # rock-paper-scissors among three, each crushing a fourth: the cycle shares the mass equally
    win = np.array([[np.nan, 0.9, 0.1, 0.9], [0.1, np.nan, 0.9, 0.9], [0.9, 0.1, np.nan, 0.9],
                    [0.1, 0.1, 0.1, np.nan]])
    pi = _alpharank(win, np.full(4, 1500.0))
    assert pi[:3] == pytest.approx([pi[0]] * 3, abs=1e-6) and pi[3] < 0.05


# -- bad input: one line, nothing lost -------------------------------------------------------------
def _cli(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_round_trip(tmp_path, capsys):
    db = str(tmp_path / "l.db")
    assert _cli(capsys, "ladder", "init", db, "--game", "racko", "--seed", "4")[0] == 0
    assert _cli(capsys, "ladder", "add", db, "random", "random")[0] == 0
    assert _cli(capsys, "ladder", "add", db, "bucket", "racko:bucket", "--note", "a heuristic")[0] == 0
    code, out, err = _cli(capsys, "ladder", "add", db, "bucket", "racko:sequence")
    assert code == 2 and err.count("\n") == 1 and "already has an entry named 'bucket'" in err
    assert _cli(capsys, "ladder", "run", db, "--matches", "16", "--block", "8", "--quiet")[1].startswith("16 matches")
    code, out, _ = _cli(capsys, "ladder", "show", db, "--json")
    data = json.loads(out)
    assert data["matches"] == 16 and {r["name"] for r in data["rows"]} == {"random", "bucket"}
    code, out, _ = _cli(capsys, "ladder", "show", db, "--csv")
    assert out.splitlines()[0].startswith("rank,name") and len(out.splitlines()) == 3
    code, out, _ = _cli(capsys, "ladder", "verify", db, "--sample", "4")
    assert code == 0 and "all identical" in out
    code, out, _ = _cli(capsys, "ladder", "export", db, "--out", str(tmp_path / "pub"))
    page = (tmp_path / "pub" / "ladder.html").read_text()
    assert code == 0 and '"matches": 16' in page.replace('"matches":16', '"matches": 16')
    assert json.loads((tmp_path / "pub" / "ladder.json").read_text())["ladder"]["matches"] == 16
    code, out, err = _cli(capsys, "ladder", "list", db)
    assert "bucket" in out and "a heuristic" in out
    with pytest.raises(SystemExit):
        main(["ladder", "nope", db])
    assert "invalid choice: 'nope'" in capsys.readouterr().err


def _one_line_error(capsys, *argv):
    code, out, err = _cli(capsys, *argv)
    assert code == 2 and err.count("\n") == 1, err
    return err


def test_corrupt_foreign_and_newer_files(tmp_path, capsys):
    junk = tmp_path / "junk.db"
    junk.write_bytes(os.urandom(4096))
    before = junk.read_bytes()
    assert "not a ladder database" in _one_line_error(capsys, "ladder", "show", str(junk))
    assert "not a ladder database" in _one_line_error(capsys, "ladder", "add", str(junk), "r", "random")
    assert junk.read_bytes() == before
    foreign = tmp_path / "foreign.db"
    con = sqlite3.connect(foreign)
    con.execute("CREATE TABLE people (name TEXT)")
    con.commit()
    con.close()
    assert "not a deckgym ladder" in _one_line_error(capsys, "ladder", "run", str(foreign))
    newer = tmp_path / "newer.db"
    small_ladder(str(newer)).close()
    con = sqlite3.connect(newer)
    con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),))
    con.commit()
    con.close()
    assert "newer deckgym" in _one_line_error(capsys, "ladder", "show", str(newer))
    assert "already exists" in _one_line_error(capsys, "ladder", "init", str(newer), "--game", "racko")


def test_read_only_file(capsys):
    # a real read-only file: as root (who may write anything) the run drops the right to ignore file modes
    folder = tempfile.mkdtemp(prefix="deckgym-ro-")
    try:
        os.chmod(folder, 0o755)
        db = os.path.join(folder, "l.db")
        ladder = small_ladder(db)
        lad.run(ladder, matches=8, block=8)
        ladder.close()
        os.chmod(db, 0o444)
        before = Path(db).read_bytes()
        cmd = [sys.executable, "-m", "deckgym", "ladder", "run", db, "--matches", "8"]
        if os.geteuid() == 0:  # root without the capability to override file modes
            caps = "-dac_override,-dac_read_search"
            cmd = ["setpriv", f"--inh-caps={caps}", f"--bounding-set={caps}", "--"] + cmd
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=folder,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert done.returncode == 2 and done.stderr.count("\n") == 1 and "read-only" in done.stderr, done.stderr
        assert Path(db).read_bytes() == before
        assert _cli(capsys, "ladder", "show", db)[0] == 0  # reading still works
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_full_disk_loses_nothing(tmp_path):
    ladder = small_ladder(str(tmp_path / "l.db"))
    lad.run(ladder, matches=8, block=8)
    pages = ladder.db.one("PRAGMA page_count")[0]
    ladder.db.q(f"PRAGMA max_page_count = {pages + 2}")  # SQLite's own "disk full" (SQLITE_FULL)
    with pytest.raises(lad.LadderError, match="disk is full"):
        lad.add(ladder, "ppo", f"ppo:{MODEL_2P}")  # 1.7 MB into the store: does not fit
    with pytest.raises(lad.LadderError, match="disk is full"):
        lad.run(ladder, matches=24, block=24, replays=True)
    assert [e.name for e in lad.entries(ladder)] == ["random", "bucket"]
    assert ladder.db.q("SELECT COUNT(*) FROM matches") == [(8,)] and ladder.db.q("SELECT COUNT(*) FROM blobs") == [(0,)]
    ladder.db.q("PRAGMA max_page_count = 1073741823")
    assert lad.verify(ladder, sample=8).differ == []


def test_unreachable_postgres_fails_fast_naming_it(capsys):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nobody listens once it is closed
    start = time.monotonic()
    err = _one_line_error(capsys, "ladder", "show", f"postgresql://nobody@127.0.0.1:{port}/ladder")
    assert time.monotonic() - start < 30  # a bound against a hang, not a speed target
    assert f"127.0.0.1:{port}" in err and "cannot reach" in err


def test_block_replays_bit_for_bit(tmp_path):
    # the same block, played again in another process's order of entries, stores the same results
    ladder = small_ladder(str(tmp_path / "l.db"))
    lad.add(ladder, "seq", "racko:sequence")
    lad.run(ladder, matches=8, block=8)
    batch, first, end, lineup = ladder.db.one("SELECT batch, first_match, end_match, lineup FROM matches WHERE match = 0")
    by_id = {e.id: e for e in lad.entries(ladder)}
    entries = [by_id[i] for i in json.loads(lineup)]
    c = Claim(batch, first, end, json.loads(lineup), False)
    a = match_rows(ladder, c, entries, play_block(ladder, entries, batch, first, end), 0.0, "x")[0]
    b = match_rows(ladder, c, entries[::-1], play_block(ladder, entries[::-1], batch, first, end), 0.0, "x")[0]
    assert [r[7] for r in a] == [r[7] for r in b]
    stored = [r[0] for r in ladder.db.q("SELECT results FROM matches ORDER BY match")]
    assert [r[7] for r in a] == stored


def test_the_demo_ladder_resumes(tmp_path, capsys):
    from deckgym.evaluation.ladder.demo import ladder_demo

    games = [("racko", 2, ["random", "racko:bucket", "racko:sequence"])]
    assert ladder_demo(games, str(tmp_path), matches=16) == 0
    assert ladder_demo(games + [], str(tmp_path), matches=16) == 0  # a second make demo adds matches
    ladder = lad.open_ladder(str(tmp_path / "racko.ladder"))
    assert [m for (m,) in ladder.db.q("SELECT match FROM matches ORDER BY match")] == list(range(32))
    assert [e.name for e in lad.entries(ladder)] == ["random", "racko:bucket", "racko:sequence"]
    assert ladder.db.one("SELECT COUNT(*) FROM replays")[0] == 64  # every seating of every match
    ladder.close()
    out = capsys.readouterr()
    assert "resuming the ladder (16 matches)" in out.err and (tmp_path / "racko-ladder" / "ladder.html").exists()


def test_the_scheduler_places_a_new_entry_then_splits_the_closest_neighbours():
    from deckgym.evaluation.ladder.scheduler import pick, ratings_with_se

    # entries 1 < 2 < 3 well separated, 3 and 4 level after many matches; 5 is new
    pair = np.zeros((5, 5))
    for a, b, wa, wb in ((0, 1, 10, 90), (1, 2, 10, 90), (2, 3, 150, 150), (0, 2, 2, 98)):
        pair[a, b], pair[b, a] = wa, wb
    ids = [1, 2, 3, 4, 5]
    first = pick(ids, pair, 2)
    assert 5 in first  # the new entry plays first, against the middle of the ladder
    r, _ = ratings_with_se(pair)
    assert first == [ids[int(np.argmin(np.abs(r[:4] - r[4])))], 5]  # the established entry rated nearest it
    placed = pair.copy()
    placed[4, 2], placed[2, 4] = 40, 40
    # now established: the pair whose order is least certain, 3 vs 4? they met 300 times; 5 vs its neighbour has met less
    nxt = pick(ids, placed, 2)
    assert len(nxt) == 2 and nxt[0] != nxt[1]
    assert pick(ids, placed, 2) == nxt  # deterministic
    assert pick(ids[::-1], placed[::-1, ::-1], 2) == nxt  # whatever order the entries come in
    # the round robin takes the pair that met least (1 and 4 never met; 1 and 5 neither: the smaller ids)
    assert pick(ids, placed, 2, schedule="uniform") == [1, 4]
    assert len(pick(ids, placed, 3)) == 3 and len(set(pick(ids, placed, 4))) == 4
    with pytest.raises(ValueError, match="at least 3 active entries"):
        pick([1, 2], np.zeros((2, 2)), 3)
