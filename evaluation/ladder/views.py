"""A ladder's standings as a terminal table, JSON, CSV, and a self-contained page to publish.

``export`` writes ``ladder.html`` (the viewer's ladder page with the data inlined: no server, no
network, opens from a file) and ``ladder.json`` (the same data) into a folder, each atomically.
"""

from __future__ import annotations

import csv
import io
import json
import os
from importlib import resources
from typing import Any

from deckgym.outputs import write_json, write_text
from deckgym.evaluation.arena import rules_text
from deckgym.evaluation.ladder.db import LadderError
from deckgym.evaluation.ladder.entries import Ladder
from deckgym.evaluation.ladder.standings import Standings, standings

__all__ = ["table", "csv_text", "ladder_json", "export", "page_html"]

CSV_FIELDS = ("rank", "name", "status", "matches", "games", "elo", "elo_low", "elo_high", "mu", "sigma",
              "conservative", "share", "share_low", "share_high", "fair_share", "points_per_game", "alpharank",
              "spec", "sha256", "reason")


def _num(x: Any, fmt: str) -> str:
    return "-" if x is None else format(x, fmt)


def table(s: Standings) -> str:
    """The standings for the terminal, best first."""
    head = (f"{s.game} ladder ({s.players} players; {rules_text(s.rules) or 'default rules'}), "
            f"{s.matches} matches, seed {s.seed}")
    w = max([12] + [len(r["name"]) + 2 for r in s.rows])
    many = s.players > 2
    cols = f"{'#':>3} {'entry':<{w}}{'status':<9}{'matches':>8}{'Elo':>7}{'95% CI':>14}"
    cols += f"{'mu':>7}{'sigma':>7}{'mu-3σ':>7}" if many else ""
    cols += f"{'share':>7}{'95% CI':>15}{'α-Rank':>8}"
    lines = [head, cols]
    for i, r in enumerate(s.rows, 1):
        ci = f"[{_num(r['elo_low'], '.0f')}, {_num(r['elo_high'], '.0f')}]" if r["games"] else "-"
        line = f"{i:>3} {r['name']:<{w}}{r['status']:<9}{r['matches']:>8}{_num(r['elo'] if r['games'] else None, '.0f'):>7}{ci:>14}"
        if many:
            line += f"{_num(r.get('mu'), '.1f'):>7}{_num(r.get('sigma'), '.2f'):>7}{_num(r.get('conservative'), '.1f'):>7}"
        sci = f"[{_num(r['share_low'], '.3f')}, {_num(r['share_high'], '.3f')}]" if r["games"] else "-"
        line += f"{_num(r['share'], '.3f'):>7}{sci:>15}{_num(r['alpharank'], '.3f'):>8}"
        lines.append(line)
    lines.append(f"share: rounds won (ties shared); fair share {1 / s.players:.3f}. "
                 "Intervals: 95%, bootstrap over deals.")
    for r in s.rows:
        if r["status"] == "broken":
            lines.append(f"broken: {r['name']}: {r['reason']}")
    lines += s.notes
    return "\n".join(lines)


def csv_text(s: Standings) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_FIELDS, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for i, r in enumerate(s.rows, 1):
        w.writerow({"rank": i, **{k: ("" if v is None else v) for k, v in r.items()}})
    return buf.getvalue()


def ladder_json(ladder: Ladder, s: Standings | None = None, match_limit: int = 2000) -> dict[str, Any]:
    """Everything the ladder page shows: the standings, the matrices, the history and the
    latest ``match_limit`` matches (number, seats by name, wins, whether a replay is stored)."""
    s = s or standings(ladder)
    names = {int(i): n for i, n in ladder.db.q("SELECT id, name FROM entries")}
    replayed = {int(m) for (m,) in ladder.db.q("SELECT DISTINCT match FROM replays")}
    matches = []
    for m, lineup, results, wall, played in ladder.db.q(
            "SELECT match, lineup, results, wall_time, played_at FROM matches ORDER BY match DESC LIMIT ?",
            (match_limit,)):
        seatings = json.loads(results)["seatings"]
        wins: dict[str, float] = {}
        for st in seatings:
            for e, w in zip(st["seats"], st["wins"]):
                wins[names[e]] = wins.get(names[e], 0.0) + w
        matches.append({"match": int(m), "entries": [names[e] for e in json.loads(lineup)], "wins": wins,
                        "seatings": [{"rotation": st["rotation"], "seats": [names[e] for e in st["seats"]],
                                      "wins": st["wins"], "points": st["points"], "turns": st["turns"]}
                                     for st in seatings],
                        "replay": int(m) in replayed, "wall_time": wall, "played_at": played})
    return {"ladder": s.to_json(), "matches": matches}


def page_html(data: dict[str, Any] | None = None) -> str:
    """The ladder page; with ``data`` inlined (a static export), else it asks its server."""
    html = resources.files("deckgym.viewer").joinpath("static", "ladder.html").read_text(encoding="utf-8")
    if data is None:
        return html
    # inlined as JSON inside a script element: "</" cannot end the element early
    blob = json.dumps(data, allow_nan=False).replace("</", "<\\/")
    return html.replace("<script id=\"ladder-data\" type=\"application/json\">null</script>",
                        f"<script id=\"ladder-data\" type=\"application/json\">{blob}</script>")


def export(ladder: Ladder, folder: str, s: Standings | None = None) -> list[str]:
    """Write ``ladder.html`` and ``ladder.json`` into ``folder`` (made if absent); their paths."""
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise LadderError(f"{folder} is a file; export writes into a folder")
    os.makedirs(folder, exist_ok=True)
    data = ladder_json(ladder, s)
    paths = [write_text(os.path.join(folder, "ladder.html"), page_html(data)),
             write_json(os.path.join(folder, "ladder.json"), data, allow_nan=False)]
    return paths
