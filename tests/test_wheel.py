"""The installed names, tested for real: the wheel, installed into a fresh venv, used from a
research project that has its own ``agents/``, ``training/``, ``evaluation/`` and ``benchmarks/``.

The wheel is built without its dependencies (``pip wheel --no-deps --no-build-isolation``) and
installed with ``--no-deps`` into a venv made without pip; the venv sees this environment's
dependencies through a directory of links to them that leaves out deckgym's own (editable)
install, so ``deckgym``, ``racko_env`` and ``leastscore_env`` can only come from the wheel.
numba's kernels run uncompiled there (``NUMBA_DISABLE_JIT=1``): a fresh install would compile
them for a minute, and what is under test is the names, not the machine code.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OURS = {"deckgym", "racko_env", "leastscore_env"}
THEIRS = ("agents", "training", "evaluation", "benchmarks")
PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", re.M | re.S)

# Imports every module of the installed packages (a missing optional extra is skipped and named),
# then checks that no file was imported under two names and that the project's packages are its own.
CHECK_NAMES = r"""
import importlib, pkgutil, sys
names = []
for top in ("deckgym", "racko_env", "leastscore_env"):
    pkg = importlib.import_module(top)
    names.append(top)
    names += [m.name for m in pkgutil.walk_packages(pkg.__path__, top + ".")]
missing = {}
for name in names:
    try:
        importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name.split(".")[0] in ("deckgym", "racko_env", "leastscore_env"):
            raise
        missing[name] = exc.name
files = {}
for name, mod in list(sys.modules.items()):
    f = getattr(mod, "__file__", None)
    if f and name.split(".")[0] in ("deckgym", "racko_env", "leastscore_env", "agents", "training", "evaluation",
                                      "benchmarks", "experiments", "tests"):
        files.setdefault(f, []).append(name)
twice = {f: n for f, n in files.items() if len(n) > 1}
assert not twice, f"modules imported under two names: {twice}"
import agents, training, evaluation, benchmarks
for p in (agents, training, evaluation, benchmarks):
    assert p.WHOSE == "the project's own " + p.__name__, p.__file__
import deckgym.agents.registry, deckgym.evaluation.arena
assert "site-packages" in deckgym.agents.registry.__file__, deckgym.agents.registry.__file__
print(len(names), "modules;", "without optional extras:", sorted(set(missing.values())))
"""


def _run(cmd: list, **kw) -> subprocess.CompletedProcess:
    run = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=300, **kw)
    assert run.returncode == 0, f"{' '.join(map(str, cmd))} failed:\n{run.stdout[-2000:]}\n{run.stderr[-3000:]}"
    return run


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    # built from a copy of what the wheel is made of, so that setuptools' build/ folder stays out of the checkout
    src = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    for name in ("deckgym", "racko_env", "leastscore_env", "agents", "training", "evaluation"):
        # symlinks=True: deckgym/agents, /training and /evaluation stay links to the root folders
        shutil.copytree(ROOT / name, src / name, symlinks=True, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    out = tmp_path_factory.mktemp("wheel")
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", out, src])
    (whl,) = out.glob("deckgym-*.whl")
    return whl


def venv_with_our_dependencies(root: Path) -> Path:
    """A fresh venv under ``root`` that sees every dependency this interpreter has, but none of
    deckgym itself (no checkout, no editable install); its python."""
    deps = root / "deps"
    deps.mkdir()
    # every site-packages this interpreter sees (a .pth may chain another venv's), the first one's name wins
    sites = dict.fromkeys([sysconfig.get_paths()["purelib"], *(p for p in sys.path if p.endswith("site-packages"))])
    for entry in (e for site in sites if os.path.isdir(site) for e in sorted(Path(site).iterdir())):
        own = entry.name.startswith(("__editable__", "deckgym")) or entry.name in OURS or entry.suffix == ".pth"
        if not own and not (deps / entry.name).exists():
            (deps / entry.name).symlink_to(entry)
    venv.create(root / "venv", with_pip=False)
    python = root / "venv" / "bin" / "python"
    purelib = _run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip()
    Path(purelib, "dependencies.pth").write_text(f"{deps}\n")
    return python


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> tuple[Path, Path, dict]:
    """(the fresh venv's python, a project folder with its own packages, the environment to run in)."""
    root = tmp_path_factory.mktemp("fresh")
    python = venv_with_our_dependencies(root)
    _run([sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index", "-q", wheel])
    project = root / "project"
    for name in THEIRS:
        (project / name).mkdir(parents=True)
        (project / name / "__init__.py").write_text(f"WHOSE = \"the project's own {name}\"\n")
    (project / "models").symlink_to(ROOT / "models")  # the README's snippets load the shipped models from models/
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(NUMBA_DISABLE_JIT="1", OMP_NUM_THREADS="1", RAY_USAGE_STATS_ENABLED="0")
    return python, project, env


def test_the_wheel_holds_three_top_level_names_and_each_module_once(wheel) -> None:
    files = zipfile.ZipFile(wheel).namelist()
    tops = {f.split("/")[0] for f in files if not f.split("/")[0].endswith(".dist-info")}
    assert tops == OURS
    modules = [f for f in files if f.endswith(".py")]
    assert len(modules) == len(set(modules))
    for expected in ("deckgym/agents/registry.py", "deckgym/evaluation/arena.py", "deckgym/training/train.py",
                     "racko_env/descriptor.py", "leastscore_env/descriptor.py"):
        assert expected in modules
    assert not [f for f in files if f.startswith(("deckgym/benchmarks", "deckgym/tests", "deckgym/experiments"))]
    # PEP 561: the markers that make type checkers read our annotations (each covers its subpackages)
    assert {f"{top}/py.typed" for top in OURS} <= set(files)


def test_installed_names_from_a_project_with_its_own_packages(installed) -> None:
    python, project, env = installed
    out = _run([python, "-c", CHECK_NAMES], cwd=project, env=env).stdout
    assert "modules;" in out, out


@pytest.mark.parametrize("number", range(len(PYTHON_BLOCK.findall((ROOT / "README.md").read_text(encoding="utf-8")))))
def test_readme_snippet_runs_on_the_wheel(installed, number: int) -> None:
    python, project, env = installed
    code = PYTHON_BLOCK.findall((ROOT / "README.md").read_text(encoding="utf-8"))[number]
    _run([python, "-c", code], cwd=project, env=env)


def test_three_cli_commands_on_the_wheel(installed, tmp_path) -> None:
    python, project, env = installed
    deckgym = python.parent / "deckgym"
    assert "RackoRules" in _run([deckgym, "rules", "racko"], cwd=project, env=env).stdout
    report = tmp_path / "eval.json"
    _run([deckgym, "eval", "racko", "racko:bucket", "random", "--games", "20", "--json", report], cwd=project, env=env)
    assert '"racko:bucket"' in report.read_text()
    play = subprocess.run([str(deckgym), "play", "leastscore", "--vs", "leastscore:greedy", "--seed", "3"],
                          cwd=project, env=env, input="q\n", capture_output=True, text=True, timeout=300)
    assert play.returncode == 0 and "Least Score, 4 players" in play.stdout, play.stderr[-2000:]


def test_from_the_checkout_only_the_three_names(tmp_path) -> None:
    """The editable install (the repository's own) gives the same names: from another folder the
    repository's ``agents/`` is not importable as ``agents``, only as ``deckgym.agents``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    # a name found in site-packages (a dependency's own top-level folder, such as a namespace
    # package called benchmarks) is not ours: what counts is whether it resolves into our folders
    probe = ("import importlib.util as u, deckgym.agents.registry as r; "
             "s = [u.find_spec(n) for n in ('agents', 'training', 'evaluation', 'benchmarks')]; "
             "print([str(p) for x in s if x for p in [x.origin, *(x.submodule_search_locations or [])] if p "
             f"and str(p).startswith({str(ROOT)!r}) and 'site-packages' not in str(p)], os.path.realpath(r.__file__))")
    out = _run([sys.executable, "-c", "import os; " + probe], cwd=tmp_path, env=env).stdout
    # the strict editable install imports it through its tree of links (build/__editable__.*): the file is ours
    assert out.startswith("[]") and str(ROOT / "agents" / "registry.py") in out, out
