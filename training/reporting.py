"""What a training run tells its user, every engine alike: arena results, the time left, the last words.

- :func:`arena_results`: an agent against each ``--eval-against`` heuristic on duplicate deals
  (the periodic and the final evaluations of ``deckgym train``, all three kinds of run);
- :func:`time_left`: the progress bar's estimate, whichever budget ends first (``--total-steps``
  at the current pace, or ``--max-minutes``);
- :func:`closing_lines`: the few lines a run ends with: what was trained, where the model is,
  how it did, and the commands to go on with (evaluate, play, TensorBoard, the curves tool,
  continue with ``--init``). The whole record stays in ``runs/<run>/summary.json``.
"""

from __future__ import annotations

import os
import shlex
from typing import Any


__all__ = ["arena_line", "arena_results", "closing_lines", "game_flags", "next_commands", "time_left"]


def arena_results(game: str, agent_spec: str, eval_against: list[str], deals: int, players: int,
                  rules_kwargs: dict[str, Any], matches: bool) -> dict[str, Any]:
    """The agent ``agent_spec`` (``ppo:PATH``, ``rllib:PATH``) against each of ``eval_against`` on ``deals``
    duplicate deals (seed 12345): win rate, 95% CI, games and points by opponent."""
    from deckgym.evaluation.arena import evaluate

    arena_rules = {k: v for k, v in rules_kwargs.items() if k != "num_players"}
    results = {}
    for opp in eval_against:
        rep = evaluate(game, [agent_spec, opp], deals=deals, seed=12345, players=players, rules_kwargs=arena_rules,
                       matches=matches)
        a = next(x for x in rep.agents if x.name == agent_spec)
        results[opp] = {"win_rate": a.win_rate, "ci_low": a.ci_low, "ci_high": a.ci_high, "games": a.games,
                        "mean_points": a.mean_points, "deals": deals, "unit": "matches" if matches else "rounds"}
    return results


def arena_line(results: dict[str, Any]) -> str:
    """``racko:sequence 0.512 [0.490, 0.534], racko:ranges ...``"""
    return ", ".join(f"{o} {r['win_rate']:.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}]" for o, r in results.items())


def time_left(done: int, total: int, seconds: float, max_minutes: float | None,
              budget_seconds: float | None = None) -> tuple[float | None, str]:
    """Seconds until the run stops and why: ``"steps"`` (``total`` at the pace of ``done`` steps
    in ``seconds``) or ``"time"`` (the ``--max-minutes`` budget, of which ``budget_seconds`` are
    spent, default ``seconds``, ends first). ``None`` seconds before any step."""
    spent = seconds if budget_seconds is None else budget_seconds
    by_time = None if max_minutes is None else max(60 * max_minutes - spent, 0.0)
    by_steps = None if done <= 0 else max(total - done, 0) * seconds / done
    if by_time is not None and (by_steps is None or by_time < by_steps):
        return by_time, "time"
    return by_steps, "steps"


def game_flags(game: str, players: int, rules: list[str]) -> str:
    """The table options every follow-up command needs: ``--players`` when not the game's default
    and the ``--rule`` overrides."""
    from deckgym.registration import game as game_entry

    words = []
    if players != game_entry(game).make_rules().num_players:
        words += ["--players", str(players)]
    for r in rules:
        words += ["--rule", r]
    return " ".join(shlex.quote(w) for w in words)


def next_commands(game: str, agent: str, run_dir: str, flags: str, opponent: str, matches: bool = False,
                  init: str | None = None, curves: bool = True, tensorboard: bool = True) -> list[tuple[str, str]]:
    """``[(command, what it does)]`` after a run: evaluate the model, play it, watch the curves,
    continue it (``init``: the model file ``--init`` takes; None: the engine cannot)."""
    q = shlex.quote
    extra = (f" {flags}" if flags else "") + (" --matches" if matches else "")
    out = [(f"deckgym eval {game} {q(agent)} {q(opponent)} --games 1000{extra}", "evaluate it"),
           (f"deckgym play {game} --vs {q(agent)}{extra}", "play against it")]
    if tensorboard:
        out.append((f"tensorboard --logdir {q(run_dir)}", "TensorBoard scalars"))
    if curves:
        out.append((f"python -m deckgym.training.curves {q(os.path.join(run_dir, 'evals.json'))} "
                    f"--out {q(os.path.join(run_dir, 'curves.png'))}", "win-rate chart"))
    if init:
        more = (f" {flags}" if flags else "") + (" --episode match" if matches else "")
        out.append((f"deckgym train {game} --init {q(init)}{more} --total-steps 2000000", "continue training it"))
    return out


def closing_lines(headline: str, model: str, arena: dict[str, Any] | None, run_dir: str,
                  commands: list[tuple[str, str]], holds: str = "summary.json, config.json, evals.json, "
                                                             "checkpoints/") -> list[str]:
    """The end of a run: one line of what was done, the model, its arena results, the run folder
    and the next commands (aligned, each with what it does)."""
    lines = [headline, f"model: {model}"]
    if arena:
        first = next(iter(arena.values()))
        lines.append(f"arena ({first['deals']:,} duplicate deals): {arena_line(arena)}")
    lines.append(f"run folder: {run_dir} ({holds})")
    lines.append("next:")
    width = max(len(what) for _, what in commands) + 1
    lines += [f"  {what + ':':<{width}}  {c}" for c, what in commands]
    return lines
