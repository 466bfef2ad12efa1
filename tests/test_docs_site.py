"""The documentation site: `mkdocs build --strict` passes (no broken link, missing page or dead
anchor), and the pages generated from the code hold what the code says."""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MKDOCS = [sys.executable, "-m", "mkdocs"]


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Path:
    """The site, built once per test session into a temporary folder with ``--strict``."""
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "OMP_NUM_THREADS": "1"}
    run = subprocess.run(MKDOCS + ["build", "--strict", "--site-dir", str(out)], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, f"mkdocs build --strict failed:\n{run.stdout[-3000:]}\n{run.stderr[-6000:]}"
    return out


def test_strict_build_passes(built_site):
    for page in ("index.html", "games/racko.html", "games/leastscore.html", "frontends/torchrl.html",
                 "evaluation.html", "benchmarks.html", "notebooks/01_quickstart.html", "reference/cores.html"):
        assert (built_site / page).is_file(), page


def test_notebooks_are_pages_with_their_committed_outputs(built_site):
    """Each notebook is a page: its code cells and the outputs saved in the .ipynb (text and pictures)."""
    import json

    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        nb = json.loads(path.read_text(encoding="utf-8"))
        html = (built_site / "notebooks" / f"{path.stem}.html").read_text(encoding="utf-8")
        pictures = sum("image/png" in o.get("data", {}) for c in nb["cells"] for o in c.get("outputs", []))
        assert html.count("data:image/png;base64,") == pictures, path.name
        code_cells = [c for c in nb["cells"] if c["cell_type"] == "code"]
        assert html.count('class="language-python') + html.count("notebook") >= len(code_cells), path.name


def test_strict_build_fails_on_a_dead_link(tmp_path):
    """The same configuration, one page more with a link to a missing page and a dead anchor."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n\n[gone](missing.md) and [nowhere](#no-such-heading)\n")
    cfg = tmp_path / "mkdocs.yml"
    cfg.write_text(f"INHERIT: {ROOT / 'mkdocs.yml'}\ndocs_dir: {docs}\nhooks: []\nnav:\n  - Home: index.md\n")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    run = subprocess.run(MKDOCS + ["build", "--strict", "-f", str(cfg), "--site-dir", str(tmp_path / "site")],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode != 0
    assert "missing.md" in run.stderr and "no-such-heading" in run.stderr


def hooks_module(name: str):
    """A module of the site's build hooks (docs/hooks), imported as the build imports it."""
    import importlib

    sys.path.insert(0, str(ROOT / "docs" / "hooks"))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(ROOT / "docs" / "hooks"))


def page_text(built_site: Path, page: str) -> str:
    html = (built_site / page).read_text(encoding="utf-8")
    return re.sub(r"<[^>]+>", " ", html)


@pytest.mark.parametrize("name", ["racko", "leastscore"])
def test_game_page_tables_are_the_code(built_site, name):
    """Every layout field with its offset, every action name and every rules field with its
    default, as the code has them now."""
    from deckgym.registration import game

    entry = game(name)
    html = (built_site / "games" / f"{name}.html").read_text(encoding="utf-8")
    for obs in ("default", "infostate"):
        core = entry.make_core(obs=obs)
        for field, sl in core.obs_slices.items():
            # the field's row holds its offset and size at the default table size
            row = re.search(rf"<td><code>{field}</code></td>(.*?)</tr>", html, re.S)
            assert row, (obs, field)
            cells = re.findall(r"<td>(\d+)</td>", row.group(1))
            assert any(cells[i:i + 2] == [str(sl.start), str(sl.stop - sl.start)] for i in range(0, len(cells), 2)), (
                obs, field, sl, cells)
    core = entry.make_core()
    for a, n in enumerate(core.action_names):
        assert re.search(rf"<td>{a}</td>\s*<td><code>{re.escape(n)}</code></td>", html), (a, n)
    import html as html_lib

    html = html_lib.unescape(html)
    for f in dataclasses.fields(entry.descriptor.rules):
        default = re.escape(repr(f.default))
        row = rf"<code>{f.name}</code></td>\s*<td><code>[^<]*</code></td>\s*<td><code>{default}</code>"
        assert re.search(row, html), (f.name, f.default)
    assert f'src="../assets/generated/{name}.gif"' in html
    gif = (built_site / "assets" / "generated" / f"{name}.gif").read_bytes()
    assert gif[:6] == b"GIF89a" and len(gif) > 10_000


def test_rules_are_included_from_docs_rules_md(built_site):
    """The game pages carry RULES.md's own text (one source), with every rule id as a heading."""
    rules = (ROOT / "docs" / "RULES.md").read_text(encoding="utf-8")
    for name, ids in (("racko", [f"R{i}" for i in range(1, 13)]), ("leastscore", [f"L{i}" for i in range(1, 11)])):
        text = page_text(built_site, f"games/{name}.html")
        for rid in ids:
            heading = re.search(rf"^### ({rid} — .*)$", rules, re.M).group(1)
            assert heading.split(" — ")[1].replace('"', "&quot;") in text or heading.split(" — ")[1] in text, heading


def test_pages_as_a_reader_sees_them_in_chromium(built_site, tmp_path):
    """The built game page and a front-end page in headless Chromium: the generated tables are
    there with their rows, and the game's animation is loaded and drawn. Screenshots go to the
    test's folder or ``$DECKGYM_SCREENSHOTS``."""
    from tests.test_browser import browser_driver, shot

    drv, cleanup = browser_driver()
    try:
        drv.set_window_size(1280, 1600)
        drv.get((built_site / "games" / "racko.html").as_uri())
        tables = drv.execute_script("""return Array.from(document.querySelectorAll('article table')).map(
            t => [t.querySelectorAll('tbody tr').length, t.innerText.slice(0, 200)])""")
        assert len(tables) >= 8, tables
        texts = " ".join(t[1] for t in tables)
        for needle in ("from racko_env import env", "rack", "draw", "num_players"):
            assert needle in texts, needle
        assert any(rows == 13 for rows, _ in tables), "the action table has 13 rows"
        img = drv.execute_script("""const i = document.querySelector('figure.game-picture img');
            return i && [i.complete, i.naturalWidth, i.naturalHeight, i.getBoundingClientRect().height]""")
        assert img and img[0] and img[1] > 300 and img[2] > 200 and img[3] > 100, img
        shot(drv, tmp_path, "docs-racko.png")

        drv.get((built_site / "frontends" / "torchrl.html").as_uri())
        rows = drv.execute_script("""return Array.from(document.querySelectorAll('article table tbody tr')).map(
            r => r.cells[0].innerText)""")
        for name in ("num_envs", "self_play", "options.opponents", "options.features", "device"):
            assert name in rows, (name, rows)
        code = drv.execute_script("return document.querySelector('article pre code').innerText")
        assert "RackoEnv(num_envs=256" in code
        shot(drv, tmp_path, "docs-torchrl.png")
    finally:
        cleanup()


FRONT_ENDS = {
    "frontends/pettingzoo.html": ["racko_env.env:raw_env", "leastscore_env.env:raw_env"],
    "frontends/gymnasium.html": ["deckgym.gym_env:DeckGymEnv", "deckgym.vector_env:DeckGymVectorEnv"],
    "frontends/sb3.html": ["deckgym.training.vec_env:CoreVecEnv"],
    "frontends/rllib.html": ["deckgym.training.rllib_env:RLlibVectorEnv"],
    "frontends/torchrl.html": ["deckgym.torchrl:RackOEnv"],
}


@pytest.mark.parametrize("page", list(FRONT_ENDS))
def test_front_end_defaults_are_the_constructors(built_site, page):
    """Every keyword of the front end's constructor is a row of its page with the code's default."""
    import html as html_lib
    import importlib
    import inspect
    import typing

    docgen_api = hooks_module("docgen_api")

    text = html_lib.unescape((built_site / page).read_text(encoding="utf-8"))
    for target in FRONT_ENDS[page]:
        module, _, name = target.partition(":")
        obj = getattr(importlib.import_module(module), name)
        start = text.index(f"<code>{obj.__module__}.{obj.__qualname__}</code>")  # the table under this name
        table = text[start:text.index("</table>", start)]
        for _klass, init in docgen_api._inits(obj):  # the constructor, and the bases it forwards **kwargs to
            hints = typing.get_type_hints(init)
            for p in inspect.signature(init).parameters.values():
                if p.name == "self" or p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
                    continue
                options = docgen_api._options_class(hints.get(p.name), p.default)
                rows = ([(f"{p.name}.{f.name}", f.default if f.default_factory is dataclasses.MISSING
                          else f.default_factory()) for f in dataclasses.fields(options)] if options
                        else [(p.name, p.default)])  # an options dataclass is listed field by field
                for name, value in rows:
                    default = "required" if value in (p.empty, dataclasses.MISSING) else f"<code>{value!r}</code>"
                    row = re.search(rf"<td><code>{re.escape(name)}</code></td>\s*<td>.*?</td>\s*<td>(.*?)</td>"
                                    rf"\s*<td>(.*?)</td>", table, re.S)
                    assert row, (page, target, name)
                    assert default in row.group(1), (page, target, name, default, row.group(1))
                    assert row.group(2).strip(), f"{page}: {target}'s {name} has no meaning in its row"


def test_defaults_generator_reads_an_options_dataclass(monkeypatch):
    """A constructor that takes one options dataclass gets that dataclass's fields as rows."""
    docgen_api = hooks_module("docgen_api")

    @dataclasses.dataclass
    class Options:
        num_envs: int = dataclasses.field(default=8, metadata={"doc": "games at once"})
        seed: int | None = None
        """The first game's seed
        (written after the field, as ``LearnerOptions`` documents its fields)."""

    def make(game: str, options: Options = Options()) -> None:
        """A front end.

        Args:
            game: the game's name.
        """

    monkeypatch.setattr(docgen_api, "resolve", lambda target: make)  # the generator's lookup, pointed here
    table = docgen_api.defaults_table("x:make")
    assert "| `game` | `str` | *required* | the game's name. |" in table
    assert "| `options.num_envs` | `int` | `8` | games at once |" in table
    assert "| `options.seed` | <code>int &#124; None</code> | `None` | The first game's seed (written after the field, " \
           "as `LearnerOptions` documents its fields). |" in table



def test_defaults_generator_follows_kwargs_only_into_the_base_that_takes_them(monkeypatch, tmp_path):
    """A base's parameters are rows only when ``**kwargs`` is handed to the base's ``__init__``
    (not when it goes to the rules: the PettingZoo envs' base takes a core no user passes)."""
    docgen_api = hooks_module("docgen_api")
    (tmp_path / "docgen_probe.py").write_text(
        "class Base:\n"
        "    def __init__(self, core=None, render_mode=None):\n"
        "        \"\"\"A base.\n\n        Args:\n            render_mode: how to draw.\n        \"\"\"\n\n"
        "class Forwards(Base):\n"
        "    def __init__(self, n=2, **kwargs):\n"
        "        super().__init__(**kwargs)\n\n"
        "class Keeps(Base):\n"
        "    def __init__(self, n=2, **rule_kwargs):\n"
        "        super().__init__(core=dict(**rule_kwargs))\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(docgen_api, "OURS", ("docgen_probe",))
    forwards, keeps = docgen_api.defaults_table("docgen_probe:Forwards"), docgen_api.defaults_table("docgen_probe:Keeps")
    assert "| `render_mode` |  | `None` | how to draw. |" in forwards and "`core`" in forwards
    assert "`core`" not in keeps and "`render_mode`" not in keeps and "`**rule_kwargs`" in keeps
