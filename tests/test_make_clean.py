"""``make clean`` removes only what the Makefile's targets made: an ``OUT`` exported to a folder of
the user's own keeps everything that is not the demo's or the bench's output."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(shutil.which("make") is None, reason="needs GNU make")
def test_make_clean_keeps_the_users_files_in_an_exported_out(tmp_path):
    work = tmp_path / "checkout"  # a copy: clean removes the checkout's .venv
    work.mkdir()
    shutil.copy(ROOT / "Makefile", work / "Makefile")
    (work / ".venv").mkdir()
    (work / ".pytest_cache").mkdir()
    out = tmp_path / "my-results"
    (out / "replays").mkdir(parents=True)
    mine = [out / "thesis.tex", out / "racko-notes.json", out / "replays" / "my-game.jsonl"]
    made = [out / "racko.json", out / "racko.png", out / "leastscore.json", out / "bench_racko.json",
            out / "replays" / "racko-deal00000-rot1.jsonl", out / "replays" / "leastscore-deal00012-rot3.jsonl"]
    for p in mine + made:
        p.write_text("x")
    env = {**os.environ, "OUT": str(out)}
    subprocess.run(["make", "-s", "clean"], cwd=work, env=env, check=True, capture_output=True, timeout=60)
    assert all(p.exists() for p in mine), [p for p in mine if not p.exists()]
    assert not any(p.exists() for p in made) and not (work / ".venv").exists()
    # once only the Makefile's own outputs were there, the emptied folders go too
    for p in mine:
        p.unlink()
    (out / "racko.json").write_text("x")
    subprocess.run(["make", "-s", "clean"], cwd=work, env=env, check=True, capture_output=True, timeout=60)
    assert not out.exists()
