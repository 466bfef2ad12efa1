"""Every per-game fact lives in the game's descriptor: the shared modules never name a game.

``deckgym/``, ``evaluation/`` and ``training/`` may not import a game package nor hold a game's
name (``"racko"``, ``"leastscore:counting"``, ``"racko_env"``) outside the registration list,
except as a default (``game="racko"``, a dataclass field's ``game: str = "racko"``). The
descriptors themselves are checked for consistency: their agents import, their opponents and
ladders are valid specs for their game.
"""

from __future__ import annotations

import ast
import importlib
import pathlib

import pytest

from deckgym.descriptor import GameSpec
from deckgym.registration import GAMES

ROOT = pathlib.Path(__file__).resolve().parents[1]
SHARED = ("deckgym", "evaluation", "training")
REGISTRATION = ROOT / "deckgym" / "registration.py"
#: OpenSpiel's form of each game, as its descriptor names it (``GameSpec.openspiel``): one plain
#: module per game, the readable one-game statement of its rules that OpenSpiel users load as
#: python_<game>; the adapter's shared modules (common, bots, agent) reach the games only
#: through the registration list
OPENSPIEL_GAMES = tuple(ROOT / (e.spec.openspiel.replace(".", "/") + ".py") for e in GAMES.values()
                        if e.spec.openspiel is not None)
NAMES = tuple(GAMES)
PACKAGES = tuple(e.module for e in GAMES.values())


def _names_a_game(text: str) -> bool:
    return any(text == g or text.startswith((g + ":", g + "_", g + "-")) for g in NAMES)


def _exempt(tree: ast.AST) -> set[int]:
    """Docstrings and defaults: of parameters, and of dataclass fields (a class body's annotated names)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            out.update(id(c) for stmt in node.body if isinstance(stmt, ast.AnnAssign) and stmt.value is not None
                       for c in ast.walk(stmt.value) if isinstance(c, ast.Constant))
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.update(id(d) for d in node.args.defaults + node.args.kw_defaults if d is not None)
    return out


def game_mentions(path: pathlib.Path, root: pathlib.Path = ROOT) -> list[str]:
    """``file:line what`` for every import of a game package and every game name in code."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    exempt = _exempt(tree)
    hits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            mods = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            mods = [node.module or ""]
        else:
            mods = []
        hits += [f"{path.relative_to(root)}:{node.lineno} imports {m}" for m in mods if m.split(".")[0] in PACKAGES]
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in exempt \
                and _names_a_game(node.value):
            hits.append(f"{path.relative_to(root)}:{node.lineno} names {node.value!r}")
    return hits


def test_shared_modules_never_name_a_game() -> None:
    files = [p for d in SHARED for p in sorted((ROOT / d).rglob("*.py")) if p != REGISTRATION and p not in OPENSPIEL_GAMES]
    assert len(files) > 30
    hits = [h for p in files for h in game_mentions(p)]
    assert not hits, "per-game facts belong in the game's descriptor:\n" + "\n".join(hits)


def test_the_check_finds_a_branch(tmp_path) -> None:
    bad = tmp_path / "probe.py"
    bad.write_text('"""racko in a docstring is fine."""\n\ndef f(game="racko"):\n    return game == "leastscore"\n'
                   'from racko_env.core import DRAW\n')
    hits = game_mentions(bad, tmp_path)
    assert sorted(h.split(" ", 1)[1] for h in hits) == ["imports racko_env.core", "names 'leastscore'"]


@pytest.mark.parametrize("name", sorted(GAMES))
def test_descriptor_is_consistent(name: str) -> None:
    from deckgym.agents.registry import agent_specs, make_agent

    entry = GAMES[name]
    spec = entry.descriptor
    assert isinstance(spec, GameSpec) and spec.name == name
    assert spec.core.__module__.startswith(entry.module + ".") and spec.rules.__module__.startswith(entry.module + ".")
    core = entry.make_core()
    valid = agent_specs(name)
    for full in spec.agent_targets():
        assert full in valid
    for s in (*spec.default_opponents, *spec.eval_against):
        assert s in valid, f"{name}: {s!r} is not one of its agents"
        make_agent(s, core, game=name)
    for item in spec.train_opponents.split(","):
        assert item.partition("=")[0] in valid
    if spec.demo_players is not None:
        assert spec.rules(num_players=spec.demo_players).num_players == spec.demo_players
    assert spec.features_module().FEATURES_VERSION >= 1
    checks = spec.invariants_module()
    assert all(callable(getattr(checks, f)) for f in ("cards_ok", "hidden_shuffle", "moves")) and checks.VARIANTS
    assert "Move" not in dir(spec.text) and callable(spec.text(core).own_lines)
    assert importlib.import_module(entry.module + ".descriptor").GAME is spec


def _module_table() -> dict[str, dict[str, bool]]:
    """docs/CONTRACT.md's table of a game package's modules: ``{module: {game column: present}}``."""
    text = (ROOT / "docs" / "CONTRACT.md").read_text(encoding="utf-8")
    section = text[text.index("## Module names in a game package"):]
    rows = [line.split("|")[1:-1] for line in section.splitlines() if line.startswith("|")]
    header = [c.strip() for c in rows[0]]
    table = {}
    for row in rows[2:]:
        name = row[0].strip().strip("`")
        table[name] = {header[i]: row[i].strip() != "—" for i in (2, 3)}
    return table


@pytest.mark.parametrize("package, column", [(e.module, e.spec.title) for e in GAMES.values()])
def test_the_contract_table_lists_every_module_of_each_game(package: str, column: str) -> None:
    table = _module_table()
    assert len(table) > 20
    documented = {m for m, present in table.items() if present[column]}
    actual = {p.relative_to(ROOT / package).as_posix() for p in (ROOT / package).rglob("*.py")}
    assert documented == actual


def test_game_specific_agent_modules_say_their_game() -> None:
    prefixes = {e.module: e.name + "_" for e in GAMES.values()}
    for path in sorted((ROOT / "agents").glob("*.py")):
        games = {g for g in prefixes for m in ast.walk(ast.parse(path.read_text()))
                 if isinstance(m, (ast.Import, ast.ImportFrom))
                 for n in ([a.name for a in m.names] if isinstance(m, ast.Import) else [m.module or ""])
                 if n.split(".")[0] == g}
        assert len(games) <= 1, f"{path.name} imports two games"
        for g in games:
            assert path.name.startswith(prefixes[g]), f"{path.name} imports {g}: its name must say the game"
