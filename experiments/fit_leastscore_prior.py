"""Fit the opponent model behind ``deckgym.agents.leastscore_belief.LeastScoreBelief(model="prior")``.

    python -m experiments.fit_leastscore_prior --games 20000 --seed 0 --out agents/data/leastscore_belief_prior.npz

At every decision of ``leastscore:dp`` self-play rounds, for every opponent of the player to
move, counts the ranks of the opponent's unknown cards (held, not known from a floor pick)
and what a uniform draw from the mover's unseen cards would give the same number of cards,
by the opponent's turns played (``TURN_BUCKETS``) and its number of unknown cards. Their
ratio is the weight of a rank. Decisions after a reshuffle (L6) are left out (the unknown
cards are then not all unseen). One pair of tables per player count, ``num{P}`` and
``den{P}``: ``(TURN_BUCKETS, 6, 13)``.

Then the particles' density ratio: at the decisions of ``--ratio-games`` more self-play
rounds, every opponent's true hand (label 1) and its hand in one world drawn by that prior
(label 0) are described by ``deckgym.agents.leastscore_belief.hand_features``; a logistic regression
(Newton's method, a small ridge) separates them, and its coefficients, ``ratio{P}``, give the
log of how much likelier dp's play makes a hand than the prior's draw.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from deckgym.agents.leastscore_belief import TURN_BUCKETS, LeastScoreBelief, bits_cards, hand_features, opponent_turns
from deckgym.agents.registry import make_agent
from leastscore_env.cards import NUM_CARDS, NUM_RANKS, RANK
from leastscore_env.core import LeastScoreCore
from leastscore_env.rules import LeastScoreRules
from deckgym.outputs import atomic_file  # noqa: E402

N_FEATURES = 17  # deckgym.agents.leastscore_belief.hand_features
_RANK_ONEHOT = np.eye(NUM_RANKS)[RANK[:NUM_CARDS]]  # (52, 13)


def fit(P: int, games: int, seed: int, spec: str = "leastscore:dp", batch: int = 4096) -> tuple[np.ndarray, np.ndarray]:
    """``(num, den)`` of ``games`` rounds of ``spec`` self-play with ``P`` players."""
    core = LeastScoreCore(LeastScoreRules(num_players=P))
    agent = make_agent(spec, core, seed=seed, game="leastscore")
    num = np.zeros((TURN_BUCKETS, 6, NUM_RANKS))
    den = np.zeros_like(num)
    for first in range(0, games, batch):
        n = min(batch, games - first)
        st = core.init(n, seed, game_ids=np.arange(first, first + n))
        live = np.ones(n, bool)
        while live.any():
            idx = np.flatnonzero(live)
            sub = st.take(idx)
            seat = core.current_player(sub)
            obs = core.observe(sub, seat)
            mask = core.legal_action_mask(sub)
            rows = np.arange(len(idx))
            located = sub.hand_bits[rows, seat] | sub.floor_bits | sub.pending_bits | sub.dead
            located |= np.bitwise_or.reduce(sub.known, axis=1)
            pool = bits_cards(~located & ~sub.seen)  # (n, 52): unseen, unlocated
            pool_share = pool @ _RANK_ONEHOT / np.maximum(pool.sum(axis=1, keepdims=True), 1)  # (n, 13)
            for q in range(1, P):
                opp = (seat + q) % P
                hidden = bits_cards(sub.hand_bits[rows, opp] & ~sub.known[rows, opp])
                ok = ~(hidden & ~pool).any(axis=1)  # no reshuffle has put a seen card there
                nu = hidden.sum(axis=1)
                tb = np.minimum((sub.turn.astype(np.int64) + q) // P, TURN_BUCKETS - 1)
                np.add.at(num, (tb[ok], nu[ok]), (hidden @ _RANK_ONEHOT)[ok])
                np.add.at(den, (tb[ok], nu[ok]), (nu[:, None] * pool_share)[ok])
            res = core.step(sub, agent.act(obs, mask), check=False)
            st.put(idx, sub)
            live[idx[res.round_over]] = False
    return num, den


def fit_ratio(P: int, prior: np.ndarray, games: int, seed: int, batch: int = 2048, ridge: float = 1e-3) -> np.ndarray:
    """Logistic coefficients separating dp's true hands from ``prior``-drawn ones (module docstring)."""
    core = LeastScoreCore(LeastScoreRules(num_players=P), obs="infostate")
    dp = make_agent("leastscore:dp", LeastScoreCore(core.rules), seed=seed, game="leastscore")
    belief = LeastScoreBelief(core, "uniform")
    belief.model, belief.prior = "prior", prior
    rng = np.random.default_rng(seed)
    X, y = [], []
    for first in range(0, games, batch):
        n = min(batch, games - first)
        st = core.init(n, seed + 1, game_ids=np.arange(first, first + n))
        live = np.ones(n, bool)
        while live.any():
            idx = np.flatnonzero(live)
            sub = st.take(idx)
            seat = core.current_player(sub)
            obs, mask = core.observe(sub, seat), core.legal_action_mask(sub)
            w = belief.sample(obs, 1, rng)
            turns = opponent_turns(sub.turn, P)
            ego = (seat[:, None] + np.arange(1, P)[None, :]) % P
            r = np.arange(len(idx))[:, None]
            X.append(hand_features(sub.hands[r, ego], sub.known[r, ego], sub.legal[r, ego], turns).reshape(-1, N_FEATURES))
            X.append(hand_features(w.hands[:, 1:], w.known[:, 1:], w.legal[:, 1:], turns).reshape(-1, N_FEATURES))
            y += [np.ones(len(X[-1])), np.zeros(len(X[-1]))]
            res = core.step(sub, dp.act(core.observe_default(sub, seat), mask), check=False)
            st.put(idx, sub)
            live[idx[res.round_over]] = False
    X, t = np.concatenate(X), np.concatenate(y)
    beta = np.zeros(X.shape[1])
    for _ in range(25):  # Newton's method on the ridge-penalised log-likelihood
        p = 1.0 / (1.0 + np.exp(-(X @ beta)))
        grad = X.T @ (t - p) - ridge * len(t) * beta
        hess = (X * (p * (1 - p))[:, None]).T @ X + ridge * len(t) * np.eye(len(beta))
        beta += np.linalg.solve(hess, grad)
    p = 1.0 / (1.0 + np.exp(-(X @ beta)))
    print(f"  ratio P={P}: {len(t)} hands, log loss {-np.mean(t * np.log(p) + (1 - t) * np.log(1 - p)):.4f} "
          f"(0.6931 = no separation)", flush=True)
    return beta


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--players", type=int, nargs="+", default=[2, 3, 4, 5, 6])
    ap.add_argument("--ratio-games", type=int, default=4000)
    ap.add_argument("--out", default="agents/data/leastscore_belief_prior.npz")
    args = ap.parse_args(argv)
    tables = {}
    for P in args.players:
        t = time.time()
        num, den = fit(P, args.games, args.seed)
        tables[f"num{P}"], tables[f"den{P}"] = num, den
        tables[f"ratio{P}"] = fit_ratio(P, (num + 1.0) / (den + 1.0), args.ratio_games, args.seed)
        print(f"P={P}: {num.sum():.0f} unknown cards counted in {time.time() - t:.0f} s", flush=True)
    with atomic_file(args.out) as f:
        np.savez_compressed(f, **tables)
    print("wrote", args.out)


if __name__ == "__main__":
    main()
