"""The import direction of the layers, checked on the source (AST) of every module.

Games (``racko_env``, ``leastscore_env``) -> the shared adapter (``deckgym``) -> ``agents`` ->
``evaluation`` -> ``training``. A layer imports only the layers before it: games never import
``agents``, ``evaluation`` or ``training``; ``deckgym`` reaches ``agents`` only through
``agents.registry`` (to resolve agent spec strings) and never imports ``evaluation`` or
``training`` (its entry points, the CLI and ``__main__``, are the exception); ``agents`` never
imports ``evaluation`` or ``training``; ``evaluation`` never imports ``training``. Nothing imports
the CLI but ``python -m deckgym`` (``deckgym/__main__.py``). The speed tools in ``benchmarks`` and
the analyses in ``experiments`` sit on top of everything and are imported by no package (what the
CLI's ``deckgym bench`` / ``soak`` run lives in ``deckgym.evaluation``). Lazy imports inside functions count as imports.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("racko_env", "leastscore_env", "deckgym", "agents", "evaluation", "training", "benchmarks", "experiments")
GAMES = ("racko_env", "leastscore_env")
#: what each library layer may not import (the games and deckgym have their own rules below)
FORBIDDEN = {"agents": ("evaluation", "training"), "evaluation": ("training",)}
TOOLS = ("benchmarks", "experiments")
ENTRY_POINTS = {"deckgym.cli", "deckgym.__main__"}
#: the OpenSpiel adapter turns agent specs into pyspiel bots and resamples through the agents'
#: belief samplers: it may import deckgym.agents (never evaluation or training)
OPENSPIEL_ADAPTER = "deckgym.openspiel."


#: repository folders installed under ``deckgym.`` (pyproject's package-dir)
MAPPED = {"agents": "deckgym.agents", "evaluation": "deckgym.evaluation", "training": "deckgym.training"}


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[0] in MAPPED:
        parts[0] = MAPPED[parts[0]]
    return ".".join(parts)


def imported_modules(path: Path, root: Path = ROOT) -> set[str]:
    """Every module named by an ``import``/``from ... import`` anywhere in ``path``.

    ``from pkg import name`` yields both ``pkg`` and ``pkg.name`` (``name`` may be a
    submodule); relative imports are resolved against the module's package.
    """
    tree = ast.parse(path.read_text(), filename=str(path))
    name = module_name(path, root)
    package = name[: -len(".__init__")] if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.add(mod)
            out.update(f"{mod}.{alias.name}" for alias in node.names)
    return out


def all_modules() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


def top(mod: str) -> str:
    """The layer of a module: ``deckgym.agents.x`` is in ``agents``, ``deckgym.rng`` in ``deckgym``."""
    head, _, rest = mod.partition(".")
    if head == "deckgym" and rest.split(".", 1)[0] in MAPPED:
        return rest.split(".", 1)[0]
    return head


def violations(path: Path, root: Path = ROOT) -> list[str]:
    """The layer rules ``path`` breaks, one line each (empty when it keeps them)."""
    name = module_name(path, root)
    layer = top(name)
    bad = []
    for mod in sorted(imported_modules(path, root)):
        if (mod == "deckgym.cli" or mod.startswith("deckgym.cli.")) and name not in ENTRY_POINTS:
            bad.append(f"{name} imports the CLI ({mod})")
        elif top(mod) in TOOLS and layer != top(mod):
            bad.append(f"{name} imports {mod}")
        elif layer in GAMES and top(mod) in ("agents", "evaluation", "training"):
            bad.append(f"game module {name} imports {mod}")
        elif top(mod) in FORBIDDEN.get(layer, ()):
            bad.append(f"{name} imports {mod}")
        elif layer == "deckgym" and name not in ENTRY_POINTS:
            if top(mod) in ("evaluation", "training"):
                bad.append(f"{name} imports {mod}")
            elif (top(mod) == "agents" and mod != "deckgym.agents" and not (mod + ".").startswith("deckgym.agents.registry.")
                  and not name.startswith(OPENSPIEL_ADAPTER)):
                bad.append(f"{name} imports {mod} (only deckgym.agents.registry is allowed)")
    return bad


def test_modules_are_found():
    names = {module_name(p) for p in all_modules()}
    assert {"deckgym.openspiel.racko", "racko_env.core", "leastscore_env.core", "deckgym.cli", "deckgym.agents.registry",
            "deckgym.evaluation.arena", "deckgym.training.train", "deckgym.evaluation.bench",
            "experiments.fit_dp_stats"} <= names


def test_import_direction():
    bad = [v for p in all_modules() for v in violations(p)]
    assert not bad, "layer violations:\n" + "\n".join(bad)


@pytest.mark.parametrize(
    "where, source, expected",
    [
        ("racko_env/x.py", "from deckgym.agents.registry import make_agent", "game module racko_env.x imports deckgym.agents"),
        ("leastscore_env/x.py", "def f():\n    import deckgym.training.train", "game module leastscore_env.x imports deckgym.training"),
        ("racko_env/x.py", "from deckgym.evaluation.arena import evaluate", "game module racko_env.x imports deckgym.evaluation"),
        ("agents/x.py", "from deckgym.evaluation.arena import evaluate", "deckgym.agents.x imports deckgym.evaluation"),
        ("agents/x.py", "import deckgym.training.train", "deckgym.agents.x imports deckgym.training"),
        ("evaluation/x.py", "from deckgym.training.train import main", "deckgym.evaluation.x imports deckgym.training"),
        ("evaluation/x.py", "from benchmarks.speed import main", "deckgym.evaluation.x imports benchmarks"),
        ("deckgym/x.py", "from deckgym.evaluation.arena import evaluate", "deckgym.x imports deckgym.evaluation"),
        ("training/x.py", "from deckgym.cli import main", "deckgym.training.x imports the CLI"),
        ("agents/x.py", "from deckgym import cli", "deckgym.agents.x imports the CLI"),
        ("deckgym/x.py", "from deckgym.training.train import main", "deckgym.x imports deckgym.training"),
        ("deckgym/x.py", "from deckgym.agents.ppo import PPOAgent", "deckgym.x imports deckgym.agents.ppo"),
        ("deckgym/x.py", "from deckgym.agents import ppo", "deckgym.x imports deckgym.agents.ppo"),
        ("deckgym/openspiel/x.py", "from deckgym.evaluation.arena import evaluate",
         "deckgym.openspiel.x imports deckgym.evaluation"),
        ("racko_env/sub/x.py", "from deckgym import training", "game module racko_env.sub.x imports deckgym.training"),
        ("training/x.py", "from experiments.fit_dp_stats import tally", "deckgym.training.x imports experiments"),
        ("experiments/x.py", "from deckgym.cli import main", "experiments.x imports the CLI"),
    ],
)
def test_checker_catches(tmp_path, where, source, expected):
    path = tmp_path / where
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source + "\n")
    found = violations(path, tmp_path)
    assert any(v.startswith(expected) for v in found), found


@pytest.mark.parametrize(
    "where, source",
    [
        ("deckgym/x.py", "def f():\n    from deckgym.agents.registry import make_agent"),
        ("deckgym/cli.py", "from deckgym.evaluation.arena import evaluate\nfrom deckgym.evaluation import bench"),
        ("training/x.py", "from deckgym.evaluation.arena import evaluate"),
        ("benchmarks/x.py", "from deckgym.training.train import main\nfrom benchmarks.speed import main"),
        ("deckgym/__main__.py", "from deckgym.cli import main"),
        ("training/x.py", "from deckgym.agents.ppo import PPOAgent\nimport deckgym.registration"),
        ("experiments/x.py", "from deckgym.evaluation.arena import evaluate\nfrom deckgym.agents.registry import make_agent"),
    ],
)
def test_checker_allows(tmp_path, where, source):
    path = tmp_path / where
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source + "\n")
    assert violations(path, tmp_path) == []


def _kernel_cycles(game: str) -> list[list[str]]:
    """Import circles among a game's planner and kernel modules (``plan*``, ``*kernel*``), lazy imports included."""
    names = {module_name(p): p for p in (ROOT / game).glob("*.py") if "plan" in p.stem or "kernel" in p.stem}
    graph = {n: {m for m in imported_modules(p) if m in names and m != n} for n, p in names.items()}
    cycles = []

    def walk(node: str, path: list[str]) -> None:
        for nxt in sorted(graph[node]):
            if nxt == path[0]:
                cycles.append(path + [nxt])
            elif nxt not in path and nxt > path[0]:
                walk(nxt, path + [nxt])

    for start in sorted(graph):
        walk(start, [start])
    return cycles


@pytest.mark.parametrize("game", GAMES)
def test_planner_and_kernels_import_no_circle(game):
    # the numpy planner loads its kernels on first use; a kernel never imports the planner back
    # (what they share lives in ``plan_constants``, which imports nothing)
    assert not _kernel_cycles(game), _kernel_cycles(game)


@pytest.mark.parametrize("game", GAMES)
def test_the_planners_shared_constants_import_nothing(game):
    # nothing of the repository, numpy or numba: the planner and every kernel can import them
    assert imported_modules(ROOT / game / "plan_constants.py") <= {"collections", "collections.namedtuple"}
