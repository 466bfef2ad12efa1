"""Static tools see the whole package: a type checker, run on a user's script against an editable
install made as the Makefile makes it, resolves ``deckgym.agents``, ``deckgym.training`` and
``deckgym.evaluation`` and reads their annotations (the PEP 561 ``py.typed`` markers), so their
names come out typed rather than ``Any``.

The install is made from a copy of the sources (its tree of links lands in the copy's ``build/``,
not the checkout's) into a fresh venv that sees this environment's dependencies through a
directory of links, as in tests/test_wheel.py, with ``--no-deps`` to keep it quick.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_wheel import venv_with_our_dependencies

ROOT = Path(__file__).resolve().parents[1]
OURS = {"deckgym", "racko_env", "leastscore_env"}
USER_SCRIPT = """\
from deckgym.agents.registry import make_agent
from deckgym.evaluation import arena
from deckgym.training import config

reveal_type(make_agent)
reveal_type(arena.evaluate)
reveal_type(config.TrainArgs)
"""
# what each revealed type must name: the function's or class's own annotations
EXPECTED = ("-> deckgym.agents.base.Agent", "-> deckgym.evaluation.arena.ArenaReport",
            "-> deckgym.training.config.TrainArgs")


def _run(cmd: list, **kw) -> subprocess.CompletedProcess:
    run = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=600, **kw)
    assert run.returncode == 0, f"{' '.join(map(str, cmd))} failed:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    return run


def makefile_editable_flags() -> list[str]:
    """The flags of the Makefile's editable install (`pip install ... -e '.[dev]'`)."""
    line = next(x for x in (ROOT / "Makefile").read_text().splitlines() if "install" in x and "-e " in x)
    return [w for w in line.split() if w.startswith("--config-settings") or w.startswith("editable_mode")]


def test_the_makefile_and_the_readme_make_a_strict_editable_install():
    """The import hook of a default editable install is invisible to mypy and pyright."""
    assert makefile_editable_flags() == ["--config-settings", "editable_mode=strict"]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = [x for x in readme.splitlines() if re.match(r"\s*pip install .*-e ", x)]
    assert lines and all("editable_mode=strict" in x or "$S -e" in x for x in lines), lines
    # one word, so that zsh (which does not split a variable) passes it as bash does
    assert "S=--config-settings=editable_mode=strict " in readme or not any("$S" in x for x in lines)


def test_each_installed_package_ships_py_typed():
    for top in sorted(OURS):
        assert (ROOT / top / "py.typed").is_file(), f"{top}/py.typed is missing"
    assert "py.typed" in (ROOT / "pyproject.toml").read_text()


@pytest.fixture(scope="module")
def editable(tmp_path_factory) -> tuple[Path, Path]:
    """(a fresh venv's python with deckgym installed as the Makefile does, a user's project folder)."""
    src = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    for name in (*sorted(OURS), "agents", "training", "evaluation"):
        shutil.copytree(ROOT / name, src / name, symlinks=True, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    root = tmp_path_factory.mktemp("fresh")
    python = venv_with_our_dependencies(root)
    _run([sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index",
          "--no-build-isolation", "-q", *makefile_editable_flags(), "-e", src])
    project = root / "project"
    project.mkdir()
    (project / "user.py").write_text(USER_SCRIPT)
    return python, project


def test_mypy_resolves_and_types_the_mapped_packages(editable):
    pytest.importorskip("mypy", reason="mypy comes with the dev extra")
    python, project = editable
    run = subprocess.run([sys.executable, "-m", "mypy", "--python-executable", str(python), "--no-incremental",
                          "--config-file", os.devnull, "user.py"],
                         cwd=project, capture_output=True, text=True, timeout=600)
    out = run.stdout + run.stderr
    assert run.returncode == 0 and "error:" not in out, out
    revealed = re.findall(r'Revealed type is "(.*)"', out)
    assert len(revealed) == 3, out
    for text, expected in zip(revealed, EXPECTED):
        assert text != "Any" and expected in text, out


def test_pyright_resolves_and_types_the_mapped_packages(editable):
    pytest.importorskip("pyright", reason="pyright comes with the dev extra")
    if not shutil.which("node"):
        # pyright's PyPI package holds pyright itself but not node: without one on PATH it would
        # download a node runtime when run, which a test must not do
        pytest.skip("pyright needs a node runtime on PATH")
    python, project = editable
    run = subprocess.run([sys.executable, "-m", "pyright", "--pythonpath", str(python), "--outputjson", "user.py"],
                         cwd=project, capture_output=True, text=True, timeout=600,
                         env={**os.environ, "PYRIGHT_PYTHON_IGNORE_WARNINGS": "1"})
    report = json.loads(run.stdout)
    errors = [d for d in report["generalDiagnostics"] if d["severity"] == "error"]
    assert not errors, errors
    revealed = [d["message"] for d in report["generalDiagnostics"] if d["message"].startswith("Type of")]
    assert len(revealed) == 3, report
    for text, name in zip(revealed, ("-> Agent", "-> ArenaReport", "type[TrainArgs]")):
        shown = text.split(" is ", 1)[1].strip('"')  # pyright says Unknown where it cannot resolve a name
        assert shown not in ("Any", "Unknown") and "Unknown" not in shown and shown.endswith(name), text


@pytest.mark.parametrize("name", ["agents", "training", "evaluation"])
def test_the_checkout_links_the_mapped_packages_under_deckgym(name):
    """Run from the repository root (make test, python -m ..., the notebooks), ``deckgym`` is the
    checkout's folder: its links make ``deckgym.agents`` etc. resolve there too, for Python and
    for type checkers opened on the checkout."""
    link = ROOT / "deckgym" / name
    assert link.is_symlink() and os.readlink(link) == f"../{name}" and link.resolve() == ROOT / name


# -- the linter and the type checker on every change (make lint, run by make test) ----------------
def _make_target(name: str) -> tuple[str, list[str]]:
    """(a Makefile target's prerequisites, its recipe lines)."""
    lines = (ROOT / "Makefile").read_text().splitlines()
    i = next(k for k, x in enumerate(lines) if x.startswith(f"{name}:"))
    recipe = []
    for x in lines[i + 1:]:
        if not x.startswith("\t"):
            break
        recipe.append(x.strip())
    return lines[i].split(":", 1)[1], recipe


def test_make_test_runs_ruff_and_mypy_over_the_package_first():
    assert "lint" in _make_target("test")[0].split()
    recipe = _make_target("lint")[1]
    assert "$(BIN)/ruff check ." in recipe
    assert "$(BIN)/mypy -p deckgym -p racko_env -p leastscore_env" in recipe
    hooks = (ROOT / ".pre-commit-config.yaml").read_text()
    assert "entry: ruff check" in hooks and "entry: mypy -p deckgym -p racko_env -p leastscore_env" in hooks


def test_ruff_with_the_projects_rules_fails_on_a_new_finding(tmp_path):
    pytest.importorskip("ruff", reason="ruff comes with the dev extra")
    bad = tmp_path / "module.py"
    bad.write_text("import os\n\n\ndef f(x=[]):\n    return x\n")
    run = subprocess.run([sys.executable, "-m", "ruff", "check", "--config", str(ROOT / "pyproject.toml"),
                          "--output-format", "concise", str(bad)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 1 and "F401" in run.stdout and "B006" in run.stdout, run.stdout + run.stderr


def test_mypy_with_the_projects_config_fails_on_a_new_error(tmp_path):
    pytest.importorskip("mypy", reason="mypy comes with the dev extra")
    bad = tmp_path / "module.py"
    bad.write_text("def f(x: int) -> str:\n    return x\n")
    run = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
                          "--no-incremental", str(bad)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert run.returncode == 1 and "[return-value]" in run.stdout, run.stdout + run.stderr
