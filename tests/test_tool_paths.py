"""``python -m deckgym.evaluation.demo`` and ``python -m deckgym.evaluation.bench`` check their output paths
before any work, as the ``deckgym`` command line does: a missing, unwritable or misnamed
path is one error naming the flag (exit 2), and existing results are overwritten."""

from __future__ import annotations

import json
import os
import tempfile

import pytest

import deckgym.evaluation.bench
import deckgym.checks
import deckgym.evaluation.demo


def _boom(*a, **k):
    raise AssertionError("work started before the output paths were checked")


def _refused(capsys, run, argv) -> str:
    with pytest.raises(SystemExit) as exit_info:
        run(argv)
    assert exit_info.value.code == 2
    return capsys.readouterr().err.strip().splitlines()[-1]


def _unwritable(monkeypatch, path) -> None:
    """``path`` takes no new file and reads as not writable, whoever runs the tests (root ignores chmod)."""
    real_access, real_mkstemp = os.access, tempfile.mkstemp

    def mkstemp(*a, dir=None, **k):
        if dir is not None and os.path.abspath(dir) == str(path):
            raise PermissionError(13, "Permission denied")
        return real_mkstemp(*a, dir=dir, **k)
    monkeypatch.setattr(deckgym.checks.os, "access",
                        lambda p, mode: False if os.path.abspath(p) == str(path) else real_access(p, mode))
    monkeypatch.setattr(deckgym.checks.tempfile, "mkstemp", mkstemp)


# -- deckgym.evaluation.demo --out / --models --------------------------------------------------------------
def test_demo_out_below_a_file_is_refused_before_the_tournaments(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(deckgym.evaluation.demo, "tournament", _boom)
    (tmp_path / "f").write_text("x")
    err = _refused(capsys, deckgym.evaluation.demo.main, ["--games", "1", "--out", str(tmp_path / "f" / "results")])
    assert "--out" in err and "is a file, not a folder" in err
    assert not (tmp_path / "f" / "results").exists()


def test_demo_out_in_an_unwritable_folder_is_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(deckgym.evaluation.demo, "tournament", _boom)
    _unwritable(monkeypatch, tmp_path)
    err = _refused(capsys, deckgym.evaluation.demo.main, ["--games", "1", "--out", str(tmp_path / "results")])
    assert "--out" in err and "not writable" in err
    assert not (tmp_path / "results").exists()  # nothing created


@pytest.mark.parametrize("problem", ["a folder", "not writable"])
def test_demo_result_file_that_cannot_be_overwritten_is_refused(tmp_path, monkeypatch, capsys, problem):
    monkeypatch.setattr(deckgym.evaluation.demo, "tournament", _boom)
    target = tmp_path / "leastscore.png"
    if problem == "a folder":
        target.mkdir()
    else:
        target.write_bytes(b"old")
        _unwritable(monkeypatch, target)
    err = _refused(capsys, deckgym.evaluation.demo.main, ["--games", "1", "--out", str(tmp_path)])
    assert "--out" in err and "leastscore.png" in err and problem in err


def test_demo_missing_models_folder_is_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(deckgym.evaluation.demo, "tournament", _boom)
    err = _refused(capsys, deckgym.evaluation.demo.main, ["--out", str(tmp_path), "--models", str(tmp_path / "nope")])
    assert "--models" in err and "no such folder" in err


def test_demo_overwrites_existing_results(tmp_path, monkeypatch, capsys):
    """The policy of the CLI's outputs: a writable existing file is replaced."""
    monkeypatch.setattr(deckgym.evaluation.demo, "lineup", lambda game, players, models: ["random", "racko:bucket"])
    for name in ("racko.json", "racko.png"):
        (tmp_path / name).write_text("old")
    assert deckgym.evaluation.demo.main(["--games", "1", "--game", "racko", "--out", str(tmp_path), "--models", str(tmp_path)]) == 0
    assert json.loads((tmp_path / "racko.json").read_text())["lineup"] == ["random", "racko:bucket"]
    assert (tmp_path / "racko.png").read_bytes()[:4] == b"\x89PNG"


# -- deckgym.evaluation.bench --json --------------------------------------------------------------------------
@pytest.mark.parametrize("where, message", [("missing/b.json", "does not exist"), (".", "is a folder")])
def test_bench_json_path_is_checked_before_measuring(tmp_path, monkeypatch, capsys, where, message):
    monkeypatch.setattr(deckgym.evaluation.bench, "run_bench", _boom)
    err = _refused(capsys, deckgym.evaluation.bench.main, ["racko", "--json", str(tmp_path / where)])
    assert "--json" in err and message in err


def test_bench_json_in_an_unwritable_folder_is_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(deckgym.evaluation.bench, "run_bench", _boom)
    _unwritable(monkeypatch, tmp_path)
    err = _refused(capsys, deckgym.evaluation.bench.main, ["racko", "--json", str(tmp_path / "b.json")])
    assert "--json" in err and "not writable" in err


def test_bench_unknown_game_is_refused_before_measuring(monkeypatch, capsys):
    monkeypatch.setattr(deckgym.evaluation.bench, "run_bench", _boom)
    err = _refused(capsys, deckgym.evaluation.bench.main, ["rummy"])
    assert "unknown game 'rummy'" in err
