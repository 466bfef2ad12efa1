"""Learning curves: win rate against each heuristic over training time, as a chart.

    python -m deckgym.training.curves models/racko_2p.curve.json [more.json ...] --out docs/learning_curves.png

Each input is a training run's ``evals.json`` (``runs/<run>/evals.json``, written by
``deckgym train`` at every arena evaluation) or a shipped ``models/<name>.curve.json``
(the same list under ``"evals"``, with the run's name). The x axis is wall-clock minutes
of training, behaviour cloning included (``minutes_total``; older runs only have the
minutes since PPO started, shifted by ``bc_minutes`` when known); one panel per input,
one line per heuristic with its 95% interval as a band, and the fair share dashed.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from deckgym.extras import require_extra
from deckgym.outputs import atomic_file
from deckgym.strict_json import load_json


def load_curve(path: str) -> dict[str, Any]:
    """``{"name", "players", "evals": [...]}`` from an ``evals.json`` or a ``.curve.json``."""
    try:
        data = load_json(path)
    except ValueError as exc:
        raise ValueError(f"{path}: not a readable learning-curve file ({str(exc).removeprefix(path + ': ')})") from None
    if isinstance(data, list):
        data = {"name": os.path.basename(os.path.dirname(os.path.abspath(path))), "evals": data}
    if not isinstance(data, dict) or not isinstance(data.get("evals"), list) or not data["evals"]:
        raise ValueError(f"{path}: expected a non-empty list of evaluations (runs/<run>/evals.json)")
    for e in data["evals"]:
        if "arena" not in e or ("minutes" not in e and "minutes_total" not in e):
            raise ValueError(f"{path}: an evaluation lacks 'arena' or 'minutes'")
    return data


def _minutes(e: dict[str, Any], bc_minutes: float) -> float:
    return float(e["minutes_total"]) if "minutes_total" in e else float(e["minutes"]) + bc_minutes


def save_curves(curves: list[dict[str, Any]], path: str) -> None:
    """One panel per curve: win rate (95% CI band) by opponent against training minutes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(curves), figsize=(5.2 * len(curves), 3.8), squeeze=False)
    for ax, c in zip(axes[0], curves):
        bc = float(c.get("bc_minutes", 0.0))
        evals = sorted(c["evals"], key=lambda e: _minutes(e, bc))
        x = [_minutes(e, bc) for e in evals]
        opps = list(dict.fromkeys(o for e in evals for o in e["arena"]))
        for opp in opps:
            pts = [(m, e["arena"][opp]) for m, e in zip(x, evals) if opp in e["arena"]]
            ax.plot([m for m, _ in pts], [r["win_rate"] for _, r in pts], marker="o", label=f"vs {opp}")
            ax.fill_between([m for m, _ in pts], [r["ci_low"] for _, r in pts], [r["ci_high"] for _, r in pts], alpha=0.2)
        players = int(c.get("players", 2))
        ax.axhline(1 / players, color="grey", linestyle="--", linewidth=1, label="fair share")
        if bc:
            ax.axvline(bc, color="grey", linestyle=":", linewidth=1, label="end of cloning")
        ax.set_xlim(0, max(x) * 1.05)
        ax.set_ylim(0, 1)
        ax.set_xlabel("training minutes (2-core machine)")
        ax.set_ylabel("win rate (95% CI)")
        ax.set_title(c.get("name", ""), fontsize=10)
        ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    try:
        with atomic_file(path) as f:
            fig.savefig(f, dpi=110, format=os.path.splitext(path)[1].lstrip(".").lower() or "png")
    finally:
        plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m deckgym.training.curves", description=__doc__.split("\n")[0])
    p.add_argument("inputs", nargs="+", help="runs/<run>/evals.json or models/<name>.curve.json files")
    p.add_argument("--out", required=True, help="PNG to write")
    args = p.parse_args(argv)
    try:
        require_extra("charts", "the learning-curve chart", ("matplotlib",))
        curves = [load_curve(path) for path in args.inputs]
    except (ValueError, ImportError) as exc:
        p.error(str(exc))
    save_curves(curves, args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
