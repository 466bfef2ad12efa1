"""Tables of a game's page, read from the code: the header, the observation layouts, the action
ids, the rules fields and the versions. A change of layout or of a rules field changes the page;
a layout field that the env's docstring does not describe stops the build."""

from __future__ import annotations

import dataclasses
import html
import importlib
import re
from typing import Any

import numpy as np

from deckgym.registration import GAMES, game as game_entry


def md_table(header: list[str], rows: list[list[Any]]) -> str:
    """A Markdown table (pipes in cells escaped)."""
    def code(m: re.Match) -> str:  # a pipe inside a code span: HTML, since Markdown tables split on it
        return "<code>" + html.escape(m.group(1)).replace("|", "&#124;") + "</code>"

    def cell(x: Any) -> str:
        text = re.sub(r"`([^`]*\|[^`]*)`", code, str(x))
        return text.replace("|", "\\|").replace("\n", " ")
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    out += ["| " + " | ".join(cell(x) for x in row) + " |" for row in rows]
    return "\n".join(out)


def player_counts(name: str) -> list[int]:
    """The table sizes the rules accept (each one built and checked by the rules class)."""
    ok = []
    for p in range(1, 13):
        try:
            game_entry(name).make_rules(num_players=p)
        except ValueError:
            continue
        ok.append(p)
    if not ok:
        raise ValueError(f"game {name!r}: no table size from 1 to 12 is accepted by its rules")
    return ok


def core_of(name: str, players: int | None = None, obs: str = "default") -> Any:
    entry = game_entry(name)
    rules = entry.make_rules() if players is None else entry.make_rules(num_players=players)
    return entry.make_core(rules, obs=obs)


def env_module(name: str) -> Any:
    return importlib.import_module(GAMES[name].module + ".env")


def docstring_section(module: Any, title: str) -> str:
    """The body of the Markdown section ``title`` of a module docstring (any heading level)."""
    doc = module.__doc__ or ""
    m = re.search(rf"^(#+) {re.escape(title)}.*$", doc, flags=re.M)
    if not m:
        raise ValueError(f"{module.__name__}'s docstring has no section {title!r}")
    end = re.compile(rf"^#{{1,{len(m.group(1))}}} ", flags=re.M).search(doc, m.end())
    return doc[m.end(): end.start() if end else len(doc)].strip("\n")


def field_docs(module: Any) -> dict[str, str]:
    """``layout field -> meaning`` from the tables of the env module's docstring: a row whose
    third cell names the field; a row with empty first cells continues the one above."""
    docs: dict[str, str] = {}
    last = None
    for line in (module.__doc__ or "").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else []
        if len(cells) < 4 or (cells[0] and set(cells[0]) <= set("-: ")):
            last = None if not cells else last
            continue
        key = cells[2].strip("`")
        if not cells[0] and not cells[2] and last:
            docs[last] += " " + cells[-1]
        elif re.fullmatch(r"\w+", key):
            docs[key], last = cells[-1], key
    return docs


def _range(core: Any, sl: slice) -> str:
    low = np.broadcast_to(np.asarray(core.obs_low, dtype=np.float64), (core.obs_size,))[sl]
    high = np.broadcast_to(np.asarray(core.obs_high, dtype=np.float64), (core.obs_size,))[sl]
    return f"[{low.min():g}, {high.max():g}]"


def header(name: str) -> str:
    """PettingZoo's header table: import, actions, agents, shapes and values, from the code."""
    entry, spec = GAMES[name], game_entry(name).descriptor
    counts = player_counts(name)
    default = spec.rules().num_players
    core = core_of(name)
    shapes = ", ".join(f"{p} players: ({core_of(name, p).obs_size},)" for p in counts)
    info = ", ".join(f"{p}: ({core_of(name, p, 'infostate').obs_size},)" for p in counts)
    rows = [
        ["Import", f"`from {entry.module} import env`"],
        ["PettingZoo id", f"`pettingzoo.make(\"aec\", \"{entry.pettingzoo_id}\")` (after `import deckgym`)"],
        ["Gymnasium id", f"`gymnasium.make(\"{entry.gymnasium_id}\")`, `gymnasium.make_vec(...)`"],
        ["Actions", "Discrete"],
        ["Parallel API", "No (turn-based)"],
        ["Agents", "`player_0` … `player_{P-1}`"],
        ["Number of agents", f"{counts[0]}–{counts[-1]} (`num_players`, default {default})"],
        ["Action shape", "(1,)"],
        ["Action values", f"Discrete({core.num_actions})"],
        ["Observation shape", f"`observation`: {shapes}; `action_mask`: ({core.num_actions},)"],
        ["Information state shape", f"`obs=\"infostate\"`: {info}"],
        ["Observation values", f"`observation` in {_range(core, slice(None))} (default table), `action_mask` 0 or 1"],
    ]
    return md_table(["", spec.title], rows)


def obs_table(name: str, obs: str) -> str:
    """The observation layout ``obs`` ("default" or "infostate") at every table size: offsets,
    sizes, ranges (from ``core.obs_slices``, ``obs_low``/``obs_high``) and the env's meaning."""
    docs = field_docs(env_module(name))
    counts = player_counts(name)
    shown = sorted({game_entry(name).descriptor.rules().num_players, counts[-1]})  # the default table and the largest
    cores = {p: core_of(name, p, obs) for p in shown}
    first = cores[shown[0]]
    base = set(core_of(name, shown[0]).obs_slices) if obs == "infostate" else set()
    missing = [f for f in first.obs_slices if f not in docs]
    if missing:
        raise ValueError(f"{GAMES[name].module}.env's docstring does not describe the observation fields {missing}")
    rows = []
    for f in first.obs_slices:
        if f in base:
            continue
        row = [f"`{f}`"]
        for p in shown:
            sl = cores[p].obs_slices[f]
            row += [sl.start, sl.stop - sl.start]
        row += [_range(first, first.obs_slices[f]), docs[f]]
        rows.append(row)
    head = ["field (`obs_view` key)"]
    for p in shown:
        head += [f"offset ({p}p)", f"size ({p}p)"]
    sizes = ", ".join(f"{p} players: {cores[p].obs_size}" for p in shown)
    return md_table(head + ["range", "meaning"], rows) + f"\n\nTotal size: {sizes}."


def action_table(name: str) -> str:
    """Every action id with its name (``core.action_names``) and the phases it is legal in."""
    core = core_of(name)
    rows = [[a, f"`{n}`"] for a, n in enumerate(core.action_names)]
    return md_table(["id", "name"], rows) + "\n\nPhases (`core.phase_names`): " + ", ".join(
        f"{i} `{p}`" for i, p in enumerate(core.phase_names)) + "."


def rules_fields(name: str) -> str:
    """Every rules field, its type, default and the doc written beside it in the rules class."""
    cls = game_entry(name).descriptor.rules
    rows = []
    for f in dataclasses.fields(cls):
        doc = f.metadata.get("doc")
        if not doc:
            raise ValueError(f"{cls.__name__}.{f.name} has no doc (write it with deckgym.rules.rule)")
        rows.append([f"`{f.name}`", f"`{f.type}`", f"`{f.default!r}`", doc])
    return f"`{cls.__module__}.{cls.__name__}`\n\n" + md_table(["field", "type", "default", "meaning"], rows)


def versions(name: str) -> str:
    """Env ids and the layout versions the code carries now."""
    entry = GAMES[name]
    core, info = core_of(name), core_of(name, obs="infostate")
    rows = [["PettingZoo env id", f"`{entry.pettingzoo_id}`"], ["Gymnasium env id", f"`{entry.gymnasium_id}`"],
            ["observation layout (`core.obs_version`)", core.obs_version],
            ["information state layout (`infostate_version`)", getattr(info, "infostate_version", "—")]]
    spec = game_entry(name).descriptor
    if spec.features:
        feats = spec.features_module()
        rows.append(["derived features (`FEATURES_VERSION`)", getattr(feats, "FEATURES_VERSION", "—")])
    return md_table(["", "now"], rows)
