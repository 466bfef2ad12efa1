"""Every code block of the documentation site runs.

The site's pages (``docs/**/*.md`` but the lab notes) are read block by block: each ```python
block is pasted alone into a fresh interpreter, each ```bash block runs in ``bash -e``, in
page order, in one scratch folder per page (with ``models/`` linked in), so a page's commands
can use what its earlier commands made. A block that needs an extra is marked
``<!-- requires: EXTRA -->`` and runs (the extras are in ``dev``; a missing one fails, naming it).
A block that cannot run here (a server that runs until Ctrl-C, a command for several machines)
is marked ``<!-- not-run: REASON -->`` and must say why; nothing else is left out.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from deckgym.extras import EXTRAS

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
#: lab notes keep the commands of their time (hours-long runs, older flags): history, not instructions
NOT_SITE_PAGES = ("notes/", "hooks/")
BLOCK = re.compile(r"^(?:<!-- (requires|not-run): ?([^>]*?) ?-->\n)?```(\w+)[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)
RUNNABLE = {"python", "bash"}
#: an extra -> a module it installs
#: a block marked ``requires: EXTRA`` needs every module of that extra (deckgym.extras, the one list)
EXTRA_MODULES = EXTRAS


def pages() -> list[str]:
    return sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")
                  if not p.relative_to(DOCS).as_posix().startswith(NOT_SITE_PAGES))


def blocks(page: str) -> list[tuple[str, str | None, str | None, str]]:
    """``(language, marker, marker argument, code)`` of each fenced block of ``page``."""
    text = (DOCS / page).read_text(encoding="utf-8")
    return [(lang, marker, arg, code) for marker, arg, lang, code in BLOCK.findall(text)]


def test_the_collector_sees_the_pages_and_their_blocks():
    assert {"games/racko.md", "frontends/torchrl.md", "guides/train.md", "guides/third-game.md"} <= set(pages())
    langs = [b[0] for p in pages() for b in blocks(p)]
    assert langs.count("python") >= 12 and langs.count("bash") >= 8
    # an unlabelled fence would be neither run nor refused: every block names its language
    for page in pages():
        text = (DOCS / page).read_text(encoding="utf-8")
        fences = re.findall(r"^```(\S*)", text, re.M)
        opened = fences[0::2]
        assert all(opened), f"{page}: a code block without a language"
        assert len(opened) == len(blocks(page)), f"{page}: a fence the collector does not read"


def test_markers_are_known_and_say_why():
    for page in pages():
        for lang, marker, arg, _ in blocks(page):
            if marker == "requires":
                assert arg in EXTRA_MODULES, f"{page}: unknown extra {arg!r}"
            if marker == "not-run":
                assert len(arg.split()) >= 3, f"{page}: a not-run block must say why"
            assert lang in RUNNABLE or lang in ("text", "json", "yaml", "toml"), f"{page}: block language {lang!r}"


def run_env(bin_dir: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "RAY_USAGE_STATS_ENABLED": "0",
            "MPLBACKEND": "Agg", "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")}


@pytest.mark.parametrize("page", [p for p in pages() if any(b[0] in RUNNABLE and b[1] != "not-run" for b in blocks(p))])
def test_every_code_block_of_the_page_runs(page, tmp_path, tmp_path_factory):
    (tmp_path / "models").symlink_to(ROOT / "models")
    # a reader's scratch folders (tempfile.mkdtemp) and SB3's log folders go to a temp dir of the page's own
    env = {**run_env(str(Path(sys.executable).parent)), "TMPDIR": str(tmp_path_factory.mktemp("tmpdir"))}
    ran = 0
    for number, (lang, marker, arg, code) in enumerate(blocks(page), 1):
        if lang not in RUNNABLE or marker == "not-run":
            continue
        if marker == "requires":
            missing = [m for m in EXTRA_MODULES[arg] if importlib.util.find_spec(m) is None]
            assert not missing, f"{page} block {number} needs deckgym[{arg}] ({missing}): pip install -e '.[dev]'"
        cmd = [sys.executable, "-c", code] if lang == "python" else ["bash", "-e", "-o", "pipefail", "-c", code]
        run = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
        assert run.returncode == 0, f"{page} block {number} ({lang}) fails:\n{code}\n--- stderr:\n{run.stderr[-3000:]}"
        ran += 1
    assert ran
