"""Fit the learned opponent model behind ``deckgym.agents.racko_belief.RackoBelief(model="learned")``.

    python -m experiments.fit_belief_net --games 3000 --epochs 6 --seed 0 --out agents/data/racko_belief_net_p2.npz

From ``racko:lookahead`` self-play (two players), every choose-phase decision gives one
example: the information state of the seat to move, and the card in each of the opponent's
slots it cannot see. A small network (information state → 128 ReLU units → a distribution
over the cards for each of the 10 slots) is trained with cross-entropy on the hidden slots
only, and saved as numpy arrays (``w1``, ``b1``, ``w2``, ``b2``): the agent needs no torch.
Prints the held-out cross-entropy against the uniform belief's (log of the unseen count).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from deckgym.agents.registry import make_agent
from racko_env.core import RackoCore
from racko_env.rules import RackoRules
from racko_env.state import CHOOSE
from deckgym.outputs import atomic_file  # noqa: E402


def examples(games: int, seed: int, batch: int = 1000) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(obs (n, O), the opponent's cards (n, 10), hidden (n, 10) bool) of self-play decisions."""
    core = RackoCore(RackoRules(), obs="infostate")
    agent = make_agent("racko:lookahead", core, seed=seed, game="racko")
    xs, ys, hs = [], [], []
    for first in range(0, games, batch):
        n = min(batch, games - first)
        st = core.init(n, seed, game_ids=np.arange(first, first + n))
        live = np.ones(n, bool)
        while live.any():
            idx = np.flatnonzero(live)
            sub = st.take(idx)
            seat = core.current_player(sub)
            obs = core.observe(sub, seat)
            ch = np.flatnonzero(sub.phase == CHOOSE)
            if len(ch):
                xs.append(obs[ch])
                ys.append(np.abs(sub.racks[ch, 1 - seat[ch]].astype(np.int64)))
                hs.append(core.obs_view(obs[ch])["opp_known"][:, 0] == 0)
            res = core.step(sub, agent.act(obs, core.legal_action_mask(sub)), check=False)
            st.put(idx, sub)
            live[idx[res.round_over]] = False
    return np.concatenate(xs), np.concatenate(ys), np.concatenate(hs)


def main(argv: list[str] | None = None) -> None:
    import torch

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=3000)
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="agents/data/racko_belief_net_p2.npz")
    args = ap.parse_args(argv)
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    t = time.time()
    x, y, h = examples(args.games, args.seed)
    N = 40
    print(f"{len(x)} examples in {time.time() - t:.0f} s", flush=True)
    cut = int(0.9 * len(x))
    X, Y, H = torch.tensor(x), torch.tensor(y - 1), torch.tensor(h)
    net = torch.nn.Sequential(torch.nn.Linear(x.shape[1], args.hidden), torch.nn.ReLU(),
                              torch.nn.Linear(args.hidden, 10 * N))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)

    def loss_of(lo: int, hi: int) -> torch.Tensor:
        logits = net(X[lo:hi]).view(-1, 10, N)
        ce = torch.nn.functional.cross_entropy(logits.reshape(-1, N), Y[lo:hi].reshape(-1), reduction="none")
        m = H[lo:hi].reshape(-1).float()
        return (ce * m).sum() / m.sum().clamp(min=1)

    for epoch in range(args.epochs):
        perm = torch.randperm(cut)
        X[:cut], Y[:cut], H[:cut] = X[perm], Y[perm], H[perm]
        for lo in range(0, cut, 512):
            opt.zero_grad()
            loss = loss_of(lo, min(cut, lo + 512))
            loss.backward()
            opt.step()
        with torch.no_grad():
            held = float(loss_of(cut, len(x)))
        print(f"epoch {epoch + 1}: held-out cross-entropy {held:.3f}", flush=True)
    v = RackoCore(RackoRules(), obs="infostate").obs_view(x[cut:])
    known = np.zeros((len(x) - cut, N + 1), bool)
    rows = np.arange(len(known))[:, None]
    known[rows, v["rack"]] = True
    known[rows, v["opp_known"].reshape(len(known), -1)] = True
    known |= v["discard_depth"] > 0
    n_unknown = (~known[:, 1:]).sum(axis=1)
    print(f"uniform belief: cross-entropy {np.log(np.repeat(n_unknown, h[cut:].sum(axis=1))).mean():.3f}")
    w = {k: p.detach().numpy() for k, p in zip(("w1", "b1", "w2", "b2"), net.parameters())}
    with atomic_file(args.out) as f:
        np.savez_compressed(f, w1=w["w1"].T.copy(), b1=w["b1"], w2=w["w2"].T.copy(), b2=w["b2"])
    print("wrote", args.out)


if __name__ == "__main__":
    main()
