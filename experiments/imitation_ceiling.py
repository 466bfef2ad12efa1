"""How closely a network can imitate a search teacher, against how closely the teacher
imitates itself, with and without the public history in the network's input.

    python -m experiments.imitation_ceiling --model models/racko_2p.zip --steps 400 --seed 11

A network (``--model``, sampling from its policy) plays the learner's seat of ``--envs`` Rack-O
games against lookahead and sequence; on every state it reaches the teacher (``--teacher``)
labels the move and ``racko:lookahead`` gives the planner's. The last ``--test-envs`` games'
rows are held out (whole games). Reported on them:

- how often the teacher leaves the planner's move (a *departure*), and how often
  ``--reruns`` runs of the teacher with other seeds choose the label again: the ceiling of
  any imitation, since the labels carry the search's noise;
- a network (``--net``) fitted on the other rows with the derived features (the input of
  ``deckgym train --expert``), then with the information state's history block added: how
  often it plays the label, on all rows and on the departures, how often it plays the
  planner's move there, and how often it departs where the teacher did not.

``--data`` caches the labelled states (written after collecting, read if it exists).
"""

from __future__ import annotations

import argparse
import os

import numpy as np

from agents.registry import make_agent
from racko_env.rules import RackoRules

COLUMNS = ("obs", "info", "masks", "teacher", "planner", "env")


def collect(args: argparse.Namespace) -> dict[str, np.ndarray]:
    """Labelled states of the network's own play (``COLUMNS``, one row per decision)."""
    from training.vec_env import CoreVecEnv

    env = CoreVecEnv("racko", num_envs=args.envs, opponents=["racko:lookahead", "racko:sequence"],
                     rules=RackoRules(num_players=2), features=True, seed=args.seed, history=True)
    venv = env.venv
    teacher = make_agent(args.teacher, env.core, seed=args.seed, game="racko")
    planner = make_agent("racko:lookahead", env.core, seed=args.seed, game="racko")
    player = make_agent(f"ppo:{args.model}?deterministic=false", env.core, seed=args.seed, game="racko")
    n_raw = env.core.obs_size
    rows: dict[str, list[np.ndarray]] = {k: [] for k in COLUMNS}
    obs, _ = venv.reset(seed=args.seed)
    for _ in range(args.steps):
        masks = venv.action_masks()
        info = venv.observe_for(teacher)
        for k, v in zip(COLUMNS, (obs, info, masks, teacher.act(info, masks), planner.act(obs[:, :n_raw], masks),
                                  np.arange(args.envs))):
            rows[k].append(np.array(v))
        obs, *_ = venv.step(player.act(obs[:, :n_raw], masks))
    return {k: np.concatenate(v) for k, v in rows.items()}


def fit_and_score(x: np.ndarray, d: dict[str, np.ndarray], test: np.ndarray, hidden: list[int], epochs: int,
                  seed: int) -> dict[str, float]:
    """A masked-softmax MLP fitted to the teacher's labels on ``~test``, scored on ``test``."""
    import torch

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    X = torch.as_tensor(x)
    X = (X - X[~test].mean(0)) / (X[~test].std(0) + 1e-3)
    M, A, P = (torch.as_tensor(d[k]) for k in ("masks", "teacher", "planner"))
    layers: list[torch.nn.Module] = []
    width = X.shape[1]
    for h in hidden:
        layers += [torch.nn.Linear(width, h), torch.nn.Tanh()]
        width = h
    net = torch.nn.Sequential(*layers, torch.nn.Linear(width, M.shape[1]))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    train = np.flatnonzero(~test)
    for _ in range(epochs):
        for chunk in np.array_split(rng.permutation(train), max(1, len(train) // 512)):
            i = torch.as_tensor(chunk)
            loss = torch.nn.functional.cross_entropy(net(X[i]).masked_fill(~M[i], -1e9), A[i])
            opt.zero_grad()
            loss.backward()
            opt.step()
    i = torch.as_tensor(np.flatnonzero(test))
    with torch.no_grad():
        move = net(X[i]).masked_fill(~M[i], -1e9).argmax(1).numpy()
    return agreement(move, d["teacher"][test], d["planner"][test])


def agreement(move: np.ndarray, label: np.ndarray, planner: np.ndarray) -> dict[str, float]:
    """How often ``move`` is the label (all rows, departures), the planner's move on departures,
    and a departure where the label is the planner's."""
    dep = label != planner
    return {"label": _mean(move == label), "label_on_departures": _mean((move == label)[dep]),
            "planner_on_departures": _mean((move == planner)[dep]), "spurious_departures": _mean((move != planner) & ~dep)}


def _mean(x: np.ndarray) -> float:
    return float(x.mean()) if x.size else float("nan")  # a tiny run may hold no departure


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True, help="the network that plays (a deckgym PPO model, Rack-O 2p)")
    ap.add_argument("--teacher", default="racko:search")
    ap.add_argument("--steps", type=int, default=400, help="decisions per game row")
    ap.add_argument("--envs", type=int, default=64)
    ap.add_argument("--test-envs", type=int, default=12, help="game rows held out")
    ap.add_argument("--reruns", type=int, default=2, help="teacher runs with other seeds on the held-out rows")
    ap.add_argument("--net", default="256,256")
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--data", default=None, help="npz cache of the labelled states")
    args = ap.parse_args()
    if not os.path.isfile(args.model):
        raise SystemExit(f"imitation_ceiling: no model file {args.model!r}")
    if not 0 < args.test_envs < args.envs:
        raise SystemExit(f"imitation_ceiling: --test-envs must lie in 1..{args.envs - 1}, got {args.test_envs}")
    hidden = [int(h) for h in args.net.split(",")]
    if args.data and os.path.exists(args.data):
        with np.load(args.data) as z:
            d = {k: z[k] for k in COLUMNS}
    else:
        d = collect(args)
        if args.data:
            np.savez_compressed(args.data, **d)
    test = d["env"] >= args.envs - args.test_envs
    dep = d["teacher"] != d["planner"]
    print(f"{len(dep):,} labelled decisions, {int(test.sum()):,} held out; the teacher departs from the planner "
          f"on {dep.mean():.3f}")
    from racko_env.core import RackoCore

    core = RackoCore(RackoRules(num_players=2))
    sub = {k: v[test] for k, v in d.items()}
    for r in range(args.reruns):
        again = make_agent(args.teacher, core, seed=args.seed + 1000 * (r + 1), game="racko")
        move = np.concatenate([again.act(sub["info"][i : i + 64], sub["masks"][i : i + 64])
                               for i in range(0, len(sub["info"]), 64)])
        print(f"teacher, rerun {r + 1}: " + fmt(agreement(move, sub["teacher"], sub["planner"])))
    history = d["info"][:, core.obs_size :]
    for name, x in (("network, features", d["obs"]), ("network, features + history", np.hstack([d["obs"], history]))):
        print(f"{name} ({x.shape[1]} inputs): " + fmt(fit_and_score(x, d, test, hidden, args.epochs, args.seed)))


def fmt(a: dict[str, float]) -> str:
    return ", ".join(f"{k.replace('_', ' ')} {v:.3f}" for k, v in a.items())


if __name__ == "__main__":
    main()
