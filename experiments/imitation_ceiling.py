"""How closely a network can imitate a search teacher, against how closely the teacher
imitates itself, with and without the public history in the network's input.

    python -m experiments.imitation_ceiling --model models/racko_2p.safetensors --steps 400 --seed 11

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

With ``--arena DEALS``, networks of the size ``deckgym train --expert`` fits (MaskablePPO,
``--net``) are fitted on every row, once to the labels and once to the teacher's candidate
values (``RackoSearchAgent.act_values``) for each ``--taus`` temperature (target: the
softmax of the values, the planner's move credited with the teacher's ``margin``), and each
plays ``racko:lookahead`` on DEALS duplicate deals of ``--seed 0`` (``deckgym eval``'s).

``--data`` caches the labelled states (written after collecting, read if it exists).
"""

from __future__ import annotations

import argparse
import os
from typing import Any, Callable

import numpy as np

from deckgym.agents.registry import make_agent
from racko_env.core import RackoCore
from racko_env.rules import RackoRules
from deckgym.outputs import atomic_file  # noqa: E402

COLUMNS = ("obs", "info", "masks", "teacher", "values", "planner", "env")


def collect(args: argparse.Namespace) -> dict[str, np.ndarray]:
    """Labelled states of the network's own play (``COLUMNS``, one row per decision)."""
    from deckgym.training.vec_env import CoreVecEnv

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
        label, values = teacher.act_values(info, masks)
        for k, v in zip(COLUMNS, (obs, info, masks, label, values, planner.act(obs[:, :n_raw], masks),
                                  np.arange(args.envs))):
            rows[k].append(np.array(v))
        obs, *_ = venv.step(player.act(obs[:, :n_raw], masks))
    return {k: np.concatenate(v) for k, v in rows.items()}


def one_hot(d: dict[str, np.ndarray]) -> np.ndarray:
    """``(n, A)`` the teacher's labels as target distributions."""
    n, A = d["masks"].shape
    target = np.zeros((n, A), np.float32)
    target[np.arange(n), d["teacher"]] = 1.0
    return target


def value_targets(d: dict[str, np.ndarray], tau: float, margin: float) -> np.ndarray:
    """``(n, A)`` the label, or on searched rows the softmax of the candidates' values over
    ``tau`` with the planner's move credited ``margin``."""
    A = d["masks"].shape[1]
    target = one_hot(d)
    values = d["values"]
    searched = ~np.isnan(values).all(axis=1)
    v = values[searched]
    score = np.where(np.isnan(v), -np.inf, v) + margin * (np.arange(A) == d["planner"][searched, None])
    z = np.exp((score - score.max(axis=1, keepdims=True)) / tau)
    target[searched] = z / z.sum(axis=1, keepdims=True)
    return target


def fit_targets(params: Any, log_probs: Callable[[Any, Any], Any], x: np.ndarray, masks: np.ndarray,
                target: np.ndarray, epochs: int, seed: int, minibatch: int) -> None:
    """Fit ``log_probs(X, M)`` (masked log-probabilities) to the target distributions by
    cross-entropy, with the project's supervised fit (``deckgym.training.behaviour_cloning.fit``)."""
    import torch

    from deckgym.training.behaviour_cloning import TeacherSamples, fit

    def losses(X: Any, M: np.ndarray, T: Any, R: Any, V: Any) -> tuple[Any, Any, Any]:
        lp = log_probs(X, torch.as_tensor(M))
        return -(T * lp).sum(dim=1).mean(), (lp.argmax(dim=1) == T.argmax(dim=1)).float().mean(), torch.zeros(())

    n = len(x)
    data = TeacherSamples(x, masks, target, np.zeros(n, np.float32), np.zeros(n, bool))
    fit(params, losses, data, epochs, seed, minibatch=minibatch)


def fit_and_score(x: np.ndarray, d: dict[str, np.ndarray], test: np.ndarray, hidden: list[int], epochs: int,
                  seed: int) -> dict[str, float]:
    """A masked-softmax MLP fitted to the teacher's labels on ``~test``, scored on ``test``."""
    import torch

    torch.manual_seed(seed)
    X = torch.as_tensor(x)
    X = ((X - X[~test].mean(0)) / (X[~test].std(0) + 1e-3)).numpy()
    layers: list[torch.nn.Module] = []
    width = X.shape[1]
    for h in hidden:
        layers += [torch.nn.Linear(width, h), torch.nn.Tanh()]
        width = h
    net = torch.nn.Sequential(*layers, torch.nn.Linear(width, d["masks"].shape[1]))
    log_probs = lambda X, M: torch.log_softmax(net(X).masked_fill(~M, -1e9), dim=1)  # noqa: E731
    fit_targets(net.parameters(), log_probs, X[~test], d["masks"][~test], one_hot(d)[~test], epochs, seed, 512)
    with torch.no_grad():
        move = log_probs(torch.as_tensor(X[test]), torch.as_tensor(d["masks"][test])).argmax(dim=1).numpy()
    return agreement(move, d["teacher"][test], d["planner"][test])


def arena_of_fits(d: dict[str, np.ndarray], args: argparse.Namespace, hidden: list[int], margin: float) -> None:
    """Fit a MaskablePPO policy to each target set on every row; each plays lookahead (``--arena`` deals)."""
    import tempfile

    import torch
    from sb3_contrib import MaskablePPO

    from deckgym.agents.ppo import model_metadata, save_model
    from deckgym.evaluation.arena import evaluate
    from deckgym.training.vec_env import CoreVecEnv

    env = CoreVecEnv("racko", num_envs=1, opponents=["racko:lookahead"], rules=RackoRules(num_players=2),
                     features=True, seed=args.seed)
    meta = model_metadata(env.core, "racko", features=True, features_version=env.features_version)
    fits = [("labels", one_hot(d))] + [(f"values, tau {t:g}", value_targets(d, t, margin)) for t in args.taus]
    with tempfile.TemporaryDirectory() as tmp:
        for name, target in fits:
            model = MaskablePPO("MlpPolicy", env, seed=args.seed, device="cpu", verbose=0,
                                policy_kwargs={"net_arch": {"pi": hidden, "vf": hidden}})
            policy = model.policy
            log_probs = lambda X, M: torch.log(  # noqa: E731
                policy.get_distribution(X, action_masks=M).distribution.probs.clamp_min(1e-12))
            policy.set_training_mode(True)
            fit_targets(policy.parameters(), log_probs, d["obs"], d["masks"], target, args.epochs, args.seed, 1024)
            policy.set_training_mode(False)
            path = save_model(model, os.path.join(tmp, "net.safetensors"), meta)
            rep = evaluate("racko", [f"ppo:{path}", "racko:lookahead"], deals=args.arena, seed=0, players=2)
            a = next(x for x in rep.agents if x.name.startswith("ppo:"))
            print(f"network fitted to the {name}, vs racko:lookahead over {args.arena} deals: {a.win_rate:.3f} "
                  f"[{a.ci_low:.3f}, {a.ci_high:.3f}], {a.mean_points:.2f} points per round", flush=True)


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
    ap.add_argument("--model", required=True, help="the network that plays (a policy file, Rack-O 2p)")
    ap.add_argument("--teacher", default="racko:search")
    ap.add_argument("--steps", type=int, default=400, help="decisions per game row")
    ap.add_argument("--envs", type=int, default=64)
    ap.add_argument("--test-envs", type=int, default=12, help="game rows held out")
    ap.add_argument("--reruns", type=int, default=2, help="teacher runs with other seeds on the held-out rows")
    ap.add_argument("--net", default="256,256")
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--data", default=None, help="npz cache of the labelled states")
    ap.add_argument("--arena", type=int, default=0, help="deals each fitted network plays against lookahead (0: none)")
    ap.add_argument("--taus", type=float, nargs="*", default=[0.05], help="temperatures of the value targets")
    args = ap.parse_args()
    if not os.path.isfile(args.model):
        raise SystemExit(f"imitation_ceiling: no model file {args.model!r}")
    if args.arena < 0 or any(t <= 0 for t in args.taus):
        raise SystemExit("imitation_ceiling: --arena must be >= 0 and every --taus value > 0")
    if not 0 < args.test_envs < args.envs:
        raise SystemExit(f"imitation_ceiling: --test-envs must lie in 1..{args.envs - 1}, got {args.test_envs}")
    if not args.teacher.startswith("racko:search"):
        raise SystemExit(f"imitation_ceiling: the teacher must be a racko:search spec (it gives values), got {args.teacher!r}")
    if args.data and not os.path.exists(args.data) and not os.access(os.path.dirname(os.path.abspath(args.data)), os.W_OK):
        raise SystemExit(f"imitation_ceiling: cannot write --data {args.data!r}")
    hidden = [int(h) for h in args.net.split(",")]
    if args.data and os.path.exists(args.data):
        with np.load(args.data) as z:
            d = {k: z[k] for k in COLUMNS}
    else:
        d = collect(args)
        if args.data:
            with atomic_file(args.data) as f:
                np.savez_compressed(f, **d)
    test = d["env"] >= args.envs - args.test_envs
    dep = d["teacher"] != d["planner"]
    print(f"{len(dep):,} labelled decisions, {int(test.sum()):,} held out; the teacher departs from the planner "
          f"on {dep.mean():.3f}")
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
    if args.arena:
        arena_of_fits(d, args, hidden, float(make_agent(args.teacher, core, game="racko").params["margin"]))


def fmt(a: dict[str, float]) -> str:
    return ", ".join(f"{k.replace('_', ' ')} {v:.3f}" for k, v in a.items())


if __name__ == "__main__":
    main()
