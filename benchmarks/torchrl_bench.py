"""TorchRL speed: the native batched env (``deckgym.torchrl``) against TorchRL's PettingZoo path,
in one process, rounds interleaved and timed in CPU seconds (the ratios hold on a loaded machine).

    python -m benchmarks.torchrl_bench [--game racko] [--players 2] [--batch 1024] [--rounds 3] [--seconds 2]

Per round, each path plays under a masked random policy for about ``--seconds`` of CPU time:

- ``pettingzoo``: ``torchrl.envs.PettingZooWrapper(<game>_env.env(), use_mask=True).rollout``
  (one game; every step is one agent's move; its ``rand_action`` follows the mask);
- ``native self-play``: ``RackoEnv(B, self_play=True).rollout(..., break_when_any_done=False)``
  (``B`` games; agent-steps = B × steps), the env's ``rand_action`` (TorchRL's, from the action spec's kept-current mask);
- ``native learner``: ``RackoEnv(B, opponents=["random"])``: learner decisions (the opponent's
  moves are played inside the env and not counted);
- ``collector``: TorchRL's ``Collector`` over the self-play env with the same masked random
  policy, ``frames_per_batch = 32 B``: frames (agent-steps) per CPU second.

Prints agent-steps per CPU second per round, the medians, and each native path's ratio to the
PettingZoo path. ``--json PATH`` writes them.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any, Callable

import torch

import racko_env  # noqa: F401  (registers nothing; the PettingZoo path's env)
from deckgym.registration import game as game_entry
from deckgym.torchrl import DeckGymTorchEnv
from deckgym.outputs import write_json  # noqa: E402


def cpu_rate(fn: Callable[[], int], seconds: float) -> float:
    """Calls ``fn`` (returns the agent-steps it made) for about ``seconds`` of CPU time; per CPU second."""
    n, c0 = 0, time.process_time()
    while True:
        n += fn()
        dt = time.process_time() - c0
        if dt >= seconds:
            return n / dt


def pettingzoo_path(game: str, players: int) -> Callable[[], int]:
    from torchrl.envs import PettingZooWrapper

    env = PettingZooWrapper(game_entry(game).make_env(num_players=players), use_mask=True)
    env.set_seed(0)
    steps = 100

    def run() -> int:
        return int(env.rollout(steps, break_when_any_done=False).shape[0])

    return run


def native_path(game: str, players: int, batch: int, self_play: bool) -> Callable[[], int]:
    kwargs: dict[str, Any] = {"self_play": True} if self_play else {"opponents": ["random"]}
    env = DeckGymTorchEnv(batch, game=game, num_players=players, seed=0, **kwargs)
    steps = 50

    def run() -> int:
        td = env.rollout(steps, break_when_any_done=False)
        return int(td.numel())

    return run


def collector_path(game: str, players: int, batch: int) -> Callable[[], int]:
    from torchrl.collectors import Collector

    env = DeckGymTorchEnv(batch, game=game, num_players=players, seed=0, self_play=True)
    collector = Collector(env, env.rand_action, frames_per_batch=32 * batch, total_frames=-1)
    it = iter(collector)

    def run() -> int:
        return int(next(it).numel())

    return run


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--game", default="racko", choices=["racko", "leastscore"])
    p.add_argument("--players", type=int, default=2)
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seconds", type=float, default=2.0)
    p.add_argument("--threads", type=int, default=1, help="torch threads")
    p.add_argument("--json", default=None)
    a = p.parse_args(argv)
    torch.set_num_threads(a.threads)
    paths = {
        "pettingzoo": pettingzoo_path(a.game, a.players),
        "native self-play": native_path(a.game, a.players, a.batch, True),
        "native learner": native_path(a.game, a.players, a.batch, False),
        "collector": collector_path(a.game, a.players, a.batch),
    }
    rates: dict[str, list[float]] = {k: [] for k in paths}
    for r in range(a.rounds):
        for name, fn in paths.items():
            rates[name].append(cpu_rate(fn, a.seconds))
        print(f"round {r + 1}: " + ", ".join(f"{k} {v[-1]:,.0f}" for k, v in rates.items()), flush=True)
    med = {k: statistics.median(v) for k, v in rates.items()}
    out = {"game": a.game, "players": a.players, "batch": a.batch, "threads": a.threads, "rounds": rates,
           "median_steps_per_cpu_s": med,
           "ratio_to_pettingzoo": {k: med[k] / med["pettingzoo"] for k in med if k != "pettingzoo"}}
    print("median agent-steps per CPU second: " + ", ".join(f"{k} {v:,.0f}" for k, v in med.items()))
    print("ratio to the PettingZooWrapper path: " + ", ".join(f"{k} {v:,.0f}x" for k, v in out["ratio_to_pettingzoo"].items()))
    if a.json:
        write_json(a.json, out)
    return out


if __name__ == "__main__":
    main()
