"""Speed benchmark of a game: the core at several batch sizes, the AEC env, and the
environments users compare us with, measured side by side in one run.

    python -m deckgym.evaluation.bench racko [--players 2] [--seconds 2] [--batches 1 256 4096] [--features] [--json PATH]

Figures (agent-steps per second; one agent-step = one decision of one player):
- ``core B=…``: ``legal_action_mask`` + sampling a uniformly random legal action + ``step``,
  on one batched state of B games with auto-reset of finished games (sampling by the
  core's exact ``sample_legal`` if it has one, else ``deckgym.core.sample_legal``);
- ``core+obs B=…``: the same plus ``observe`` of the player to move;
- ``aec``: the PettingZoo AEC env (``env()``, standard wrappers) under random legal play,
  reading ``last()`` (observation + mask) every step, as an agent loop would;
- ``connect_four_v3``: PettingZoo's classic env under the same random-play loop;
- ``rlcard gin-rummy``: RLCard's draw-and-discard card game, random legal play (if installed);
- with ``--features``, ``features vN B=128``: rows per second of the game's derived
  features (``<game>_env.planning.features.derived_features``, each supported version) on
  observations from random play: what a learner or a ``ppo:`` agent pays per decision.
"""

from __future__ import annotations

import argparse
import platform
import time
from typing import Any, Callable

import numpy as np

from deckgym.checks import check_output_file
from deckgym.core import sample_legal
from deckgym.registration import game as game_entry


def _timed(fn: Callable[[], int], seconds: float) -> float:
    """Calls ``fn`` (which returns how many steps it made) until ``seconds`` pass; steps/s."""
    fn()  # warm-up (tables, caches, first allocations)
    steps, t0 = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - t0) < seconds:
        steps += fn()
    return steps / elapsed


def bench_core(core: Any, batch: int, seconds: float, observe: bool, seed: int = 0) -> float:
    """Agent-steps/s of mask + random legal action + step (+ observe) at batch size ``batch``."""
    state = core.init(batch, seed)
    rng = np.random.default_rng(seed)
    chunk = max(1, 20_000 // batch)
    # A core may offer an exactly uniform sampler that knows its mask's structure.
    sample = getattr(core, "sample_legal", sample_legal)

    def run() -> int:
        for _ in range(chunk):
            mask = core.legal_action_mask(state)
            if observe:
                core.observe(state, core.current_player(state))
            actions = sample(mask, rng)
            res = core.step(state, actions)
            done = res.terminated | res.truncated
            if done.any():
                core.reset_where(state, done)
        return chunk * batch

    return _timed(run, seconds)


def bench_features(core: Any, feat: Any, version: int, seconds: float, batch: int = 128, seed: int = 0) -> float:
    """Rows/s of ``feat.derived_features`` (one version) on observations of the player to move."""
    state = core.init(batch, seed)
    rng = np.random.default_rng(seed)
    batches = []
    for _ in range(32):  # a spread of phases and turns, collected before timing
        batches.append(core.observe(state, core.current_player(state)).copy())
        res = core.step(state, core.sample_legal(core.legal_action_mask(state), rng))
        core.reset_where(state, res.terminated | res.truncated)
    for obs in batches:  # warm-up on every batch: compiled planners load on their first use
        feat.derived_features(core, obs, version=version)
    turn = [0]

    def run() -> int:
        feat.derived_features(core, batches[turn[0] % len(batches)], version=version)
        turn[0] += 1
        return batch

    return _timed(run, seconds)


def aec_random_play(make_env: Callable[[], Any], seed: int = 0) -> Callable[[], int]:
    """A callable that plays 2,000 random legal turns of a fresh AEC env per call and returns 2,000."""
    env = make_env()
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)

    def run() -> int:
        n = 0
        for _ in range(2000):
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                if not env.agents or all(env.terminations.get(a) or env.truncations.get(a) for a in env.agents):
                    env.reset()
                    continue
                env.step(None)
            else:
                legal = np.flatnonzero(obs["action_mask"])
                env.step(int(legal[rng.integers(len(legal))]))
            n += 1
        return n

    return run


def _aec_random_play(make_env: Callable[[], Any], seconds: float, seed: int = 0) -> float:
    return _timed(aec_random_play(make_env, seed), seconds)


def bench_rlcard_gin(seconds: float, seed: int = 0) -> float | None:
    try:
        import rlcard
    except ImportError:
        return None
    env = rlcard.make("gin-rummy", config={"seed": seed})
    rng = np.random.default_rng(seed)

    def run() -> int:
        n = 0
        state, pid = env.reset()
        while not env.is_over() and n < 5000:
            legal = list(state["legal_actions"].keys())
            state, pid = env.step(legal[rng.integers(len(legal))])
            n += 1
        return n

    return _timed(run, seconds)


def run_bench(game: str, players: int | None, seconds: float, batches: list[int], baselines: bool,
              features: bool = False) -> dict[str, Any]:
    entry = game_entry(game)
    rules = entry.make_rules(**({"num_players": players} if players else {}))
    core = entry.make_core(rules)
    figures: dict[str, float | None] = {}
    for b in batches:
        figures[f"core B={b}"] = bench_core(core, b, seconds, observe=False)
        figures[f"core+obs B={b}"] = bench_core(core, b, seconds, observe=True)
    figures["aec"] = _aec_random_play(lambda: entry.make_env(num_players=rules.num_players), seconds)
    if features:
        feat = entry.features()
        for v in feat.SUPPORTED_VERSIONS:
            figures[f"features v{v} B=128"] = bench_features(core, feat, v, seconds)
    if baselines:
        from pettingzoo.classic import connect_four_v3

        figures["connect_four_v3"] = _aec_random_play(connect_four_v3.env, seconds)
        figures["rlcard gin-rummy"] = bench_rlcard_gin(seconds)
    return {
        "game": game,
        "rules": repr(rules),
        "state_bytes_per_game": core.init(256, 0).nbytes_per_game(),
        "agent_steps_per_second": figures,
        "seconds_per_figure": seconds,
        "machine": {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "processor": platform.processor() or platform.machine(),
            "cpus": __import__("os").cpu_count(),
        },
    }


def format_report(report: dict[str, Any]) -> str:
    lines = [f"{report['game']}: {report['rules']}", f"state: {report['state_bytes_per_game']} bytes per game"]
    for name, value in report["agent_steps_per_second"].items():
        unit = "rows/s" if name.startswith("features") else "agent-steps/s"
        shown = "not installed" if value is None else f"{value:>14,.0f} {unit}"
        lines.append(f"  {name:<20} {shown}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="deckgym bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("game", help="racko or leastscore")
    parser.add_argument("--players", type=int, default=None, help="number of players (default: the rules' default)")
    parser.add_argument("--seconds", type=float, default=2.0, help="seconds per figure (default 2)")
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 256, 4096], help="core batch sizes")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    parser.add_argument("--no-baselines", action="store_true", help="skip connect_four_v3 and RLCard")
    parser.add_argument("--features", action="store_true", help="also time the derived features, every version")
    args = parser.parse_args(argv)
    if args.seconds <= 0:
        parser.error("--seconds must be positive")
    if any(b < 1 for b in args.batches):
        parser.error("--batches must be positive integers")
    try:  # before the run: a bad path must not cost the minutes of measuring
        game_entry(args.game)
        check_output_file(args.json, "--json", (".json",))
    except ValueError as exc:
        parser.error(str(exc))
    report = run_bench(args.game, args.players, args.seconds, args.batches, not args.no_baselines, args.features)
    print(format_report(report))
    if args.json:
        from deckgym.outputs import write_json

        write_json(args.json, report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
