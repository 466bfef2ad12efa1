"""One name for each thing (docs/CONTRACT.md, "Names"): Rack-O's spellings, and "spec" kept for
agent strings while a game's descriptor is called a descriptor."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = [p for d in ("deckgym", "agents", "evaluation", "training", "racko_env", "leastscore_env", "benchmarks",
                       "experiments", "tools") for p in (ROOT / d).rglob("*.py")]
DOCS = [ROOT / "README.md", ROOT / "EVALUATION.md", ROOT / "BENCHMARKS.md", *(ROOT / "docs").rglob("*.md")]
# the public Gymnasium id stays (CONTRACT.md); the TorchRL class is renamed with its module
RACKO_KEPT = re.compile(r"RackO-v0|RackOEnv")


def _hits(paths, pattern, prose=False):
    """Lines matching ``pattern`` (in prose, outside `code spans`, which name identifiers)."""
    return [f"{p.relative_to(ROOT)}:{i}: {line.strip()}" for p in paths if p.is_file()
            for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
            if pattern.search(RACKO_KEPT.sub("", re.sub(r"`[^`]*`", "", line) if prose else line))]


def test_rack_o_is_spelled_one_way_per_kind_of_identifier():
    assert not _hits(SOURCES, re.compile(r"RackO|Rack-o|RACK-O|RackO_")), "class names say Racko, prose Rack-O"
    assert not _hits(DOCS, re.compile(r"\bRacko\b|RackO\b|Rack-o\b"), prose=True), "prose says Rack-O"


def test_shared_code_calls_a_games_descriptor_a_descriptor():
    # every shared module (a ladder entry's ``.spec`` is its agent spec, so bare ``entry.spec`` is
    # not searched; GameEntry.spec itself warns that it is deprecated)
    shared = [p for d in ("evaluation", "training", "agents", "deckgym") for p in (ROOT / d).rglob("*.py")
              if not p.is_symlink() and not any(q.is_symlink() for q in p.parents)]
    assert not _hits(shared, re.compile(r"(\)|GAMES\[[^\]]*\])\.spec\b")), "game(name).descriptor, not .spec"
