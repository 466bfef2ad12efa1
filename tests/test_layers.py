"""The import direction of the layers, checked on the source (AST) of every module.

The ground (``deckgym.core``, ``rng``, ``rules``, ``checks``, ``kernels``, ``descriptor``,
``terminal``, ``plugins``: the core contract and what every game builds on) imports nothing of the
repository above it -> games (``racko_env``, ``leastscore_env``) and the shared adapter
(``deckgym``: the AEC adapter, play-out loop, replays, registration) -> ``agents`` -> the front
ends that build agents from specs (``deckgym.vector_env``, ``deckgym.gym_env``, ``deckgym.torchrl``, the viewer) ->
``evaluation`` -> ``training`` -> the CLI. A layer imports only the layers before it: games never
import ``agents``, the front ends, ``evaluation`` or ``training``; the adapter never imports
``agents`` or a front end; the front ends never import ``evaluation`` or ``training``; ``agents``
never imports a front end, ``evaluation`` or ``training``; ``evaluation`` never imports
``training``. Nothing imports the CLI but ``python -m deckgym`` (``deckgym/__main__.py``); the
conformance kit ``deckgym.testing`` sits beside the CLI on top (no package imports it). The
speed tools in ``benchmarks`` and the analyses in ``experiments`` sit on top of everything and are
imported by no package (what the CLI's ``deckgym bench`` / ``soak`` run lives in
``deckgym.evaluation``). Lazy imports inside functions count as imports.

Two more rules over every module: no import circle (lazy imports counted), and no re-export:
``from M import name`` takes ``name`` from the module that defines it (a package's
``__init__`` is the one exception: it is the package's public face).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Callable

import pytest

from deckgym.registration import GAMES as REGISTERED

ROOT = Path(__file__).resolve().parent.parent
#: the game packages, as registered (a new game joins the layer rules by its registration line)
GAMES = tuple(e.module for e in REGISTERED.values())
PACKAGES = (*GAMES, "deckgym", "agents", "evaluation", "training", "benchmarks", "experiments")
#: the games whose planners live in a ``planning`` subpackage (its kernels and shared constants)
PLANNED = tuple(g for g in GAMES if (ROOT / g / "planning").is_dir())
#: what each library layer may not import (the games and deckgym have their own rules below)
FORBIDDEN = {"agents": ("evaluation", "training"), "evaluation": ("training",)}
TOOLS = ("benchmarks", "experiments")
ENTRY_POINTS = {"deckgym.cli", "deckgym.__main__"}
#: the conformance kit (``deckgym.testing.check_game``) and the ladder's public face
#: (``deckgym.ladder``) drive the front ends, the arena and training, like the CLI: they sit on top
#: (they may import all but the CLI) and no package imports them
TOP = ("deckgym.testing", "deckgym.ladder")
#: the core contract and what every game builds on: imports no other repository module
GROUND = ("deckgym.core", "deckgym.rng", "deckgym.rules", "deckgym.checks", "deckgym.kernels", "deckgym.descriptor",
          "deckgym.terminal", "deckgym.plugins")
#: the OpenSpiel adapter turns agent specs into pyspiel bots and resamples through the agents'
#: belief samplers: a front end too (never evaluation or training)
OPENSPIEL_ADAPTER = "deckgym.openspiel"
#: the parts of deckgym that build agents from specs (and the CLI's and viewer's servers)
FRONT_ENDS = ("deckgym.vector_env", "deckgym.gym_env", "deckgym.viewer", OPENSPIEL_ADAPTER, "deckgym.torchrl")


def _within(mod: str, roots: tuple[str, ...]) -> bool:
    return any(mod == r or mod.startswith(r + ".") for r in roots)


#: repository folders installed under ``deckgym.`` (pyproject's package-dir)
MAPPED = {"agents": "deckgym.agents", "evaluation": "deckgym.evaluation", "training": "deckgym.training"}


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[0] in MAPPED:
        parts[0] = MAPPED[parts[0]]
    return ".".join(parts)


def package_of(path: Path, root: Path = ROOT) -> str:
    """The package a module's relative imports are resolved against."""
    name = module_name(path, root)
    return name[: -len(".__init__")] if path.name == "__init__.py" else name.rsplit(".", 1)[0]


def from_module(node: ast.ImportFrom, package: str) -> str:
    """The module a ``from ... import`` names, a relative one resolved against ``package``."""
    if not node.level:
        return node.module or ""
    base = package.split(".")
    return ".".join(base[: len(base) - (node.level - 1)] + ([node.module] if node.module else []))


def imported_modules(path: Path, root: Path = ROOT) -> set[str]:
    """Every module named by an ``import``/``from ... import`` anywhere in ``path``.

    ``from pkg import name`` yields both ``pkg`` and ``pkg.name`` (``name`` may be a
    submodule); relative imports are resolved against the module's package.
    """
    tree = ast.parse(path.read_text(), filename=str(path))
    package = package_of(path, root)
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            mod = from_module(node, package)
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
        if _within(name, GROUND):
            if (top(mod) in PACKAGES or mod == "deckgym") and not _within(mod, GROUND):
                bad.append(f"ground module {name} imports {mod}")
        elif (mod == "deckgym.cli" or mod.startswith("deckgym.cli.")) and name not in ENTRY_POINTS:
            bad.append(f"{name} imports the CLI ({mod})")
        elif _within(mod, TOP) and top(name) not in TOOLS:
            bad.append(f"{name} imports the conformance kit ({mod})")
        elif _within(name, TOP):
            continue
        elif top(mod) in TOOLS and layer != top(mod):
            bad.append(f"{name} imports {mod}")
        elif layer in GAMES and (top(mod) in ("agents", "evaluation", "training") or _within(mod, FRONT_ENDS)):
            bad.append(f"game module {name} imports {mod}")
        elif top(mod) in FORBIDDEN.get(layer, ()):
            bad.append(f"{name} imports {mod}")
        elif layer == "agents" and _within(mod, FRONT_ENDS):
            bad.append(f"{name} imports {mod} (a front end, above the agents)")
        elif layer == "deckgym" and name not in ENTRY_POINTS:
            if top(mod) in ("evaluation", "training"):
                bad.append(f"{name} imports {mod}")
            elif not _within(name, FRONT_ENDS) and (top(mod) == "agents" or _within(mod, FRONT_ENDS)) \
                    and _within(mod, ("deckgym",)) and mod != "deckgym":
                bad.append(f"{name} imports {mod} (only the front ends {', '.join(FRONT_ENDS)} build agents)")
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
        ("deckgym/x.py", "def f():\n    from deckgym.agents.registry import make_agent", "deckgym.x imports deckgym.agents"),
        # the learner engine sits below the agents: opponents come as agents or through a factory
        ("deckgym/learner.py", "def f():\n    from deckgym.agents.registry import make_agent",
         "deckgym.learner imports deckgym.agents"),
        ("deckgym/replay.py", "from deckgym.vector_env import DeckGymVectorEnv", "deckgym.replay imports deckgym.vector_env"),
        ("deckgym/core.py", "from deckgym.registration import game", "ground module deckgym.core imports deckgym.registration"),
        ("deckgym/rng.py", "def f():\n    import racko_env.core", "ground module deckgym.rng imports racko_env"),
        ("deckgym/rules.py", "from deckgym import aec", "ground module deckgym.rules imports deckgym"),
        ("agents/x.py", "from deckgym.gym_env import DeckGymEnv", "deckgym.agents.x imports deckgym.gym_env"),
        ("racko_env/x.py", "from deckgym.viewer.frames import frames", "game module racko_env.x imports deckgym.viewer"),
        ("deckgym/viewer/x.py", "from deckgym.evaluation.arena import evaluate", "deckgym.viewer.x imports deckgym.evaluation"),
        ("deckgym/openspiel/x.py", "from deckgym.evaluation.arena import evaluate",
         "deckgym.openspiel.x imports deckgym.evaluation"),
        ("racko_env/sub/x.py", "from deckgym import training", "game module racko_env.sub.x imports deckgym.training"),
        ("training/x.py", "from experiments.fit_dp_stats import tally", "deckgym.training.x imports experiments"),
        ("experiments/x.py", "from deckgym.cli import main", "experiments.x imports the CLI"),
        ("deckgym/testing.py", "from deckgym.cli import main", "deckgym.testing imports the CLI"),
        ("evaluation/x.py", "def f():\n    from deckgym.testing import check_game", "deckgym.evaluation.x imports the conformance kit"),
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
        ("deckgym/vector_env.py", "def f():\n    from deckgym.agents.registry import make_agent"),
        ("deckgym/viewer/x.py", "from deckgym.agents.base import Agent\nfrom deckgym.replay import load"),
        ("deckgym/core.py", "import numpy as np\nfrom deckgym.rng import make_keys"),
        ("racko_env/x.py", "from deckgym.aec import CoreAECEnv\nfrom deckgym.descriptor import GameSpec"),
        ("deckgym/cli.py", "from deckgym.evaluation.arena import evaluate\nfrom deckgym.evaluation import bench"),
        ("training/x.py", "from deckgym.evaluation.arena import evaluate"),
        ("benchmarks/x.py", "from deckgym.training.train import main\nfrom benchmarks.speed import main"),
        ("deckgym/__main__.py", "from deckgym.cli import main"),
        ("training/x.py", "from deckgym.agents.ppo import PPOAgent\nimport deckgym.registration"),
        ("experiments/x.py", "from deckgym.evaluation.arena import evaluate\nfrom deckgym.agents.registry import make_agent"),
        ("deckgym/testing.py", "from deckgym.training import train\nfrom deckgym.evaluation.arena import evaluate"),
    ],
)
def test_checker_allows(tmp_path, where, source):
    path = tmp_path / where
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source + "\n")
    assert violations(path, tmp_path) == []


def _kernel_cycles(game: str) -> list[list[str]]:
    """Import circles among a game's planner and kernel modules (its ``planning`` package), lazy imports included."""
    def planner_or_kernel(mod: str) -> bool:
        return mod.startswith(f"{game}.planning.")
    return import_circles(only=planner_or_kernel)


@pytest.mark.parametrize("game", PLANNED)
def test_planner_and_kernels_import_no_circle(game):
    # the numpy planner loads its kernels on first use; a kernel never imports the planner back
    # (what they share lives in ``plan_constants``, which imports nothing)
    assert not _kernel_cycles(game), _kernel_cycles(game)


@pytest.mark.parametrize("game", PLANNED)
def test_the_planners_shared_constants_import_nothing(game):
    # nothing of the repository, numpy or numba: the planner and every kernel can import them
    assert imported_modules(ROOT / game / "planning" / "plan_constants.py") <= {"collections", "collections.namedtuple"}


# -- no import circle, no re-export (every module of the installed packages and the tools) --------
def _modules(root: Path = ROOT) -> dict[str, Path]:
    """Module name → path (a package by its own name, not ``.__init__``)."""
    out = {}
    for p in sorted(q for pkg in PACKAGES for q in (root / pkg).rglob("*.py")):
        name = module_name(p, root)
        out[name[: -len(".__init__")] if name.endswith(".__init__") else name] = p
    return out


def import_edges(path: Path, known: dict[str, Path], root: Path = ROOT) -> set[str]:
    """The repository modules ``path`` imports, lazy imports included. ``from pkg import sub``
    is an edge to ``pkg.sub`` when that is a module (its package is imported before it either
    way, so that is no circle), else to ``pkg``."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = package_of(path, root)
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                hits = [".".join(parts[:k]) for k in range(len(parts), 0, -1) if ".".join(parts[:k]) in known]
                out.update(hits[:1])
        elif isinstance(node, ast.ImportFrom):
            mod = from_module(node, package)
            for alias in node.names:
                if f"{mod}.{alias.name}" in known:
                    out.add(f"{mod}.{alias.name}")
                elif mod in known:
                    out.add(mod)
    out.discard(module_name(path, root).removesuffix(".__init__"))
    return out


def import_circles(root: Path = ROOT, only: Callable[[str], bool] | None = None) -> list[list[str]]:
    """Every strongly connected group of two or more modules (Tarjan), sorted; with ``only``,
    among the modules it accepts (a circle of theirs that passes through no other module)."""
    known = _modules(root)
    graph = {n: import_edges(p, known, root) for n, p in known.items()}
    if only is not None:
        graph = {n: {m for m in edges if only(m)} for n, edges in graph.items() if only(n)}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(groups)


def test_no_import_circle() -> None:
    assert import_circles() == []


def test_circle_check_finds_a_lazy_circle(tmp_path) -> None:
    for where, source in (("deckgym/a.py", "from deckgym.b import f"), ("deckgym/b.py", "def f():\n    import deckgym.c"),
                          ("deckgym/c.py", "from deckgym import a"), ("deckgym/__init__.py", "from deckgym.d import x"),
                          ("deckgym/d.py", "from deckgym import c\nx = 1")):
        (tmp_path / where).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / where).write_text(source + "\n")
    assert import_circles(tmp_path) == [["deckgym.a", "deckgym.b", "deckgym.c"]]
    # among some modules only (a game's planners, the training package): circles of theirs alone
    assert import_circles(tmp_path, only=lambda m: m in ("deckgym.a", "deckgym.b", "deckgym.c")) == [
        ["deckgym.a", "deckgym.b", "deckgym.c"]]
    assert import_circles(tmp_path, only=lambda m: m != "deckgym.b") == []


def _defined(path: Path) -> set[str]:
    """The names a module defines at its top level (not the names it imports)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
    return out


def reexported_imports(root: Path = ROOT) -> list[str]:
    """``from M import name`` lines whose ``name`` is not defined in module ``M`` but imported there
    (a package's ``__init__`` may gather its public names; ``M.name`` may be a submodule)."""
    known = _modules(root)
    defined: dict[str, set[str]] = {}
    bad = []
    for name, path in known.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in known):
                continue
            src = known[node.module]
            if src.name == "__init__.py":
                continue
            own = defined.setdefault(node.module, _defined(src))
            bad += [f"{name}:{node.lineno} takes {a.name} from {node.module}, which only imports it"
                    for a in node.names if a.name not in own and f"{node.module}.{a.name}" not in known]
    return bad


def test_no_reexport() -> None:
    assert reexported_imports() == [], "\n".join(reexported_imports())


def test_reexport_check_finds_one(tmp_path) -> None:
    for where, source in (("deckgym/a.py", "X = 1"), ("deckgym/b.py", "from deckgym.a import X\nY = X"),
                          ("deckgym/c.py", "from deckgym.b import X, Y\nfrom deckgym.a import X as Z")):
        (tmp_path / where).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / where).write_text(source + "\n")
    assert reexported_imports(tmp_path) == ["deckgym.c:1 takes X from deckgym.b, which only imports it"]
