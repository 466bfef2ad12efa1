"""Every argument of ``deckgym train`` checked before anything is built or written.

:func:`validate` turns the parsed arguments into a :class:`TrainPlan` (rules, opponent pool,
run folder, model path, the steps that will really be trained) or raises ``ValueError``
naming the flag: a zero or negative size, a weight that is not a positive number, an
unknown agent, a missing ``--init`` model, an output folder that is missing or read-only,
a ``--run-name`` that is already taken. Nothing is created on disk here.
"""

from __future__ import annotations

import argparse
import math
import os
import time
from dataclasses import dataclass
from typing import Any

from training.checks import check_output_dir, check_output_file, check_range

DEFAULT_OPPONENTS = {
    "racko": "racko:sequence=0.5,racko:ranges=0.2,racko:bucket=0.1,random=0.05",
    "leastscore": "leastscore:counting=0.5,leastscore:greedy=0.3,random=0.05",
}
EVAL_AGAINST = {"racko": "racko:sequence,racko:ranges", "leastscore": "leastscore:counting,leastscore:greedy"}


@dataclass
class TrainPlan:
    """What a training run will do, derived from its arguments."""

    rules: Any
    rules_kwargs: dict[str, Any]
    pool: list[tuple[str, float]]
    eval_against: list[str]
    hidden: list[int]
    run_name: str
    run_dir: str
    out_path: str
    chunk: int  # learner steps per rollout (num_envs × n_steps)
    planned_steps: int  # --total-steps rounded up to whole rollouts


def parse_pool(text: str) -> list[tuple[str, float]]:
    """``SPEC=WEIGHT,...`` → [(spec, weight)]; every weight a finite number > 0."""
    pool = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        spec, _, w = item.partition("=")
        try:
            weight = float(w) if w else 1.0
        except ValueError:
            raise ValueError(f"--opponents {item!r}: the weight {w!r} is not a number") from None
        if not math.isfinite(weight) or weight <= 0:
            raise ValueError(f"--opponents {item!r}: a weight must be a number > 0 (drop an opponent to leave it "
                             f"out), got {w}")
        pool.append((spec.strip(), weight))
    if not pool:
        raise ValueError("--opponents: empty opponent pool")
    return pool


def _hidden_layers(text: str) -> list[int]:
    try:
        hidden = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"--net must be comma-separated layer widths like 256,256, got {text!r}") from None
    if any(h < 1 for h in hidden):
        raise ValueError(f"--net layer widths must be >= 1, got {text!r}")
    return hidden


def _zip_path(path: str) -> str:
    """The file a model is saved to (``save_model`` adds ``.zip``)."""
    return path if path.endswith(".zip") else path + ".zip"


def validate(args: argparse.Namespace) -> TrainPlan:
    """Check every argument (see the module doc); nothing is created."""
    from agents.registry import make_agent
    from deckgym.registration import game as game_entry, parse_rule_overrides

    entry = game_entry(args.game)
    for flag, low in (("--total-steps", 1), ("--num-envs", 1), ("--n-steps", 1), ("--batch-size", 1),
                      ("--epochs", 1), ("--league-window", 1), ("--max-snapshots", 0), ("--eval-every", 1),
                      ("--eval-deals", 1), ("--final-deals", 0), ("--bc-samples", 1), ("--bc-epochs", 1),
                      ("--threads", 1)):
        check_range(flag, getattr(args, flag[2:].replace("-", "_")), low)
    check_range("--lr", args.lr, 0, low_open=True)
    check_range("--gamma", args.gamma, 0, 1, low_open=True)
    check_range("--gae-lambda", args.gae_lambda, 0, 1)
    check_range("--clip", args.clip, 0, low_open=True)
    check_range("--ent-coef", args.ent_coef, 0)
    check_range("--vf-coef", args.vf_coef, 0)
    check_range("--shaping", args.shaping)
    check_range("--league-threshold", args.league_threshold, 0, 1)
    check_range("--snapshot-weight", args.snapshot_weight, 0, 1, high_open=True)
    check_range("--max-minutes", args.max_minutes, 0, low_open=True)
    hidden = _hidden_layers(args.net)

    rules_kwargs = parse_rule_overrides(args.rule, entry.rules_class())
    if args.players is not None:
        rules_kwargs["num_players"] = args.players
    rules = entry.make_rules(**rules_kwargs)
    pool = parse_pool(args.opponents or DEFAULT_OPPONENTS[args.game])
    eval_against = [s.strip() for s in (args.eval_against or EVAL_AGAINST[args.game]).split(",") if s.strip()]
    if not eval_against:
        raise ValueError("--eval-against: no agent given")
    core = entry.make_core(rules)
    for flag, specs in (("--opponents", [s for s, _ in pool]), ("--eval-against", eval_against),
                        ("--bc-teacher", [args.bc_teacher] if args.bc_teacher else [])):
        for spec in specs:
            try:
                make_agent(spec, core, game=args.game)
            except (ValueError, FileNotFoundError) as exc:
                raise ValueError(f"{flag}: {exc}") from None
    if args.init:
        from agents.ppo import check_metadata, read_metadata

        check_metadata(read_metadata(args.init), core, args.game, where=f"--init model {args.init}")

    check_output_dir(args.runs, "--runs")
    if args.run_name is not None:
        if not args.run_name.strip() or os.sep in args.run_name or args.run_name in (".", ".."):
            raise ValueError(f"--run-name must be a plain folder name, got {args.run_name!r}")
        run_name = args.run_name
        if os.path.exists(os.path.join(args.runs, run_name)):
            raise ValueError(f"--run-name {run_name}: {os.path.join(args.runs, run_name)} already exists "
                             "(one folder per run: pick another name or remove it)")
    else:  # a fresh name; two runs started in the same second get a suffix
        run_name = base = f"{args.game}__ppo__{args.seed}__{int(time.time())}"
        k = 2
        while os.path.exists(os.path.join(args.runs, run_name)):
            run_name, k = f"{base}-{k}", k + 1
    run_dir = os.path.join(args.runs, run_name)
    out_path = _zip_path(args.out) if args.out else os.path.join(run_dir, "best.zip")
    if args.out:
        check_output_file(out_path, "--out")
    chunk = args.num_envs * args.n_steps
    planned = -(-args.total_steps // chunk) * chunk
    return TrainPlan(rules=rules, rules_kwargs=rules_kwargs, pool=pool, eval_against=eval_against, hidden=hidden,
                     run_name=run_name, run_dir=run_dir, out_path=out_path, chunk=chunk, planned_steps=planned)
