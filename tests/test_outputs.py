"""Output files: checked before any game or training step (format from the extension, a real
write in the folder, one path per output, no stale replays), written atomically, never through
a link planted at the target's name, and the printed path is the written one."""

from __future__ import annotations

import json
import os

import pytest

import deckgym.evaluation.demo
from deckgym.cli import main as cli
from deckgym.outputs import atomic_path, write_json, write_text
from deckgym.replay import load
from tests.test_cli_hardening import _error, _no_work


@pytest.mark.parametrize("args, message", [
    (["--chart", "{d}/out.json"], "--chart {d}/out.json: the format comes from the extension: name it *.png or *.svg"),
    (["--chart", "{d}/name"], "--chart {d}/name: the format comes from the extension"),
    (["--json", "{d}/x.png"], "--json {d}/x.png: the format comes from the extension: name it *.json"),
    (["--json", "{d}/x"], "name it *.json"),
    (["--json", "{d}/r.json", "--replays", "{d}/./r.json"], "--replays {d}/./r.json: the same path as --json {d}/r.json"),
    (["--json", "{d}/x.json", "--replays", "{d}/link"], "--replays {d}/link: the same path as --json {d}/x.json"),
])
def test_eval_outputs_are_checked_before_playing(tmp_path, monkeypatch, capsys, args, message):
    _no_work(monkeypatch)
    os.symlink(tmp_path / "x.json", tmp_path / "link")
    argv = ["eval", "racko", "random", "--games", "2"] + [a.format(d=tmp_path) for a in args]
    assert cli(argv) == 2
    assert message.format(d=tmp_path) in _error(capsys)


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux's /proc, a folder no one can add a file to")
@pytest.mark.parametrize("argv", [
    ["eval", "racko", "random", "--games", "2", "--json", "/proc/deckgym.json"],
    ["eval", "racko", "random", "--games", "2", "--chart", "/proc/deckgym.png"],
    ["eval", "racko", "random", "--games", "2", "--replays", "/proc/deckgym-replays"],
    ["train", "racko", "--total-steps", "64", "--runs", "/proc/deckgym-runs"],
    ["train", "racko", "--total-steps", "64", "--out", "/proc/deckgym-model.safetensors"],
])
def test_a_folder_that_takes_no_file_is_refused_even_for_root(monkeypatch, capsys, argv):
    """``os.access`` says yes to root on /proc; creating a file there fails: that is what is tried."""
    _no_work(monkeypatch)
    assert cli(argv) == 2
    err = _error(capsys)
    assert "/proc" in err and "is not writable" in err


def _plant(link, victim):
    victim.write_text("secret")
    os.symlink(victim, link)


def test_links_planted_at_outputs_are_replaced_not_followed(tmp_path, capsys):
    out, rep = tmp_path / "out", tmp_path / "out" / "replays"
    rep.mkdir(parents=True)
    victims = [tmp_path / f"victim{i}" for i in range(3)]
    targets = [out / "r.json", out / "c.png", rep / "racko-deal00000-rot0.jsonl"]
    for t, v in zip(targets, victims):
        _plant(t, v)
    assert cli(["eval", "racko", "random", "racko:bucket", "--games", "2", "--quiet", "--json", str(targets[0]),
                "--chart", str(targets[1]), "--replays", str(rep), "--replay-games", "1"]) == 0
    assert [v.read_text() for v in victims] == ["secret"] * 3  # nothing written through a link
    assert not any(t.is_symlink() for t in targets)
    assert json.loads(targets[0].read_text())["deals"] == 2
    assert targets[1].read_bytes()[:4] == b"\x89PNG"
    assert load(targets[2]).header["deal"] == 0
    printed = capsys.readouterr().out
    for t in targets[:2]:  # the printed path is the written one
        assert f"wrote {t}\n" in printed
    assert sorted(os.listdir(out)) == ["c.png", "r.json", "replays"]  # no temporary file left


def test_stale_replays_are_refused_before_playing_and_a_rerun_replaces_its_own(tmp_path, monkeypatch, capsys):
    rep = tmp_path / "replays"
    argv = ["eval", "racko", "random", "racko:bucket", "--games", "2", "--quiet", "--replays", str(rep)]
    assert cli(argv + ["--replay-games", "2"]) == 0
    first = sorted(os.listdir(rep))
    assert first == [f"racko-deal0000{d}-rot{r}.jsonl" for d in (0, 1) for r in (0, 1)]
    assert cli(argv + ["--replay-games", "2"]) == 0  # the same run again: it replaces exactly its own files
    assert sorted(os.listdir(rep)) == first
    capsys.readouterr()
    _no_work(monkeypatch)
    assert cli(argv + ["--replay-games", "1"]) == 2  # deal 1's games would stay beside the new ones
    err = _error(capsys)
    assert f"--replays {rep}: already holds 2 replay(s) this run would not replace (e.g. racko-deal00001-rot0.jsonl)" in err
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "racko-play-seed1-20240101-000000.jsonl").write_text("{}")
    assert cli(["eval", "racko", "random", "--games", "2", "--replays", str(tmp_path / "mine")]) == 2
    assert "already holds 1 replay(s)" in _error(capsys)


def test_demo_refuses_another_run_s_replays_before_the_tournaments(tmp_path, monkeypatch, capsys):
    def boom(*a, **k):
        raise AssertionError("the tournament started before the paths were checked")
    monkeypatch.setattr(deckgym.evaluation.demo, "tournament", boom)
    (tmp_path / "replays").mkdir()
    (tmp_path / "replays" / "racko-deal00007-rot0.jsonl").write_text("{}")
    with pytest.raises(SystemExit):
        deckgym.evaluation.demo.main(["--games", "1", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert "--out" in err and "already holds 1 replay(s) this run would not replace (e.g. racko-deal00007-rot0.jsonl)" in err
    (tmp_path / "replays" / "racko-deal00007-rot0.jsonl").unlink()
    (tmp_path / "replays" / "racko-deal00001-rot1.jsonl").write_text("{}")  # one of its own: replaced, so allowed
    with pytest.raises(AssertionError, match="tournament started"):
        deckgym.evaluation.demo.main(["--games", "1", "--out", str(tmp_path)])


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "r.json"
    path.write_text('{"old": 1}')
    with pytest.raises(UnicodeEncodeError):  # fails while writing: the target must not be truncated
        write_text(str(path), '{"new": "' + "x" * 100_000 + '\ud800"}')
    assert path.read_text() == '{"old": 1}' and os.listdir(tmp_path) == ["r.json"]
    with pytest.raises(RuntimeError):
        with atomic_path(str(path)) as tmp:
            with open(tmp, "w") as f:
                f.write("half")
            raise RuntimeError("crash half-way")
    assert path.read_text() == '{"old": 1}' and os.listdir(tmp_path) == ["r.json"]


def test_written_files_get_the_mode_an_ordinary_open_gives(tmp_path):
    with open(tmp_path / "plain", "w") as f:
        f.write("x")
    write_json(str(tmp_path / "atomic.json"), {"x": 1})
    assert os.stat(tmp_path / "atomic.json").st_mode == os.stat(tmp_path / "plain").st_mode
