"""Belief sampling for Rack-O: full worlds consistent with a seat's information state.

:class:`RackoBelief` turns a batch of information states (``RackoCore(rules, obs="infostate")``
observations of the seat to move) into ``k`` complete games per row, a
:class:`racko_env.state.RackoInfoState` of ``B·k`` rows (row ``b·k + j`` is world ``j`` of
observation ``b``), in the observer's frame: seat 0 is the observer, seats 1.. the opponents
in ego order. Every card is in exactly one place, and observing a world for seat 0 gives the
observation it was sampled from, bit for bit. What the seat cannot see is drawn:

* the opponents' unknown slots. A slot that still holds its dealt card (the history says
  nothing left it) holds a card never face up this round; a slot filled from the draw pile
  any unknown card;
* the draw pile's order: the remaining unknown cards, shuffled.

Two models choose the unknown slots' cards:

* ``"uniform"``: every consistent assignment equally likely;
* ``"prior"``: each slot's card drawn with weights from a table of how often a card of each
  value sits in slot *i*, by slot kind (dealt / refilled) and by how long the opponent has
  played, counted from games of ``racko:lookahead`` (``experiments/fit_belief_prior.py``;
  ``agents/data/racko_belief_prior.npz``). Planners keep their racks ordered; uniform
  samples make them look random, which is what misleads a search;
* ``"particles"``: ``oversample`` times as many ``prior`` worlds, of which ``k`` are kept
  (without replacement) with weights: the likelihood of the last opponent's last turn
  (take or draw, then the slot or the throw) under the planner's cost estimates of its rack
  before that turn (the rack of the world with the swapped-out card put back), a softmax
  at temperature ``action_temp`` turns; times ``exp(-order_weight · d)``, ``d`` the descents
  between adjacent slots of the opponents' racks, growing over their first eight turns;
* ``"sorted"``: ``prior`` worlds whose hidden cards are then sorted, each kind of slot
  (dealt, refilled) among itself, with probability ``sort_prob`` growing over the
  opponent's first eight turns: racks as ordered as a planner keeps them;
* ``"learned"`` (two players, 40 cards): each slot's card drawn with the weights a small
  network predicts from the whole information state (``experiments/fit_belief_net.py``,
  ``agents/data/racko_belief_net_p2.npz``, trained on ``racko:lookahead`` self-play);
* ``"history"``: ``oversample`` times as many ``prior`` worlds, the ``k`` likeliest kept by
  the likelihood of every logged opponent decision under the ``opponent`` model
  (``OPPONENT_MODELS``; ``eps``: the chance it plays otherwise), then ``sweeps``
  Metropolis–Hastings swaps of hidden cards per world (:mod:`deckgym.agents.racko_belief_history`).

Rows must be the observer's own decisions or a choose phase (an opponent holding a card
it took or drew is refused: a search never asks for those).
"""

from __future__ import annotations

import os
from functools import partial
from typing import Any, Callable

import numpy as np

from deckgym.agents.racko_heuristics import lookahead_decide, sequence_decide
from racko_env.infostate import LOG_FIELDS
from racko_env.state import CHOOSE, RackoInfoState, RackoState, draw_pile_size

__all__ = ["RackoBelief", "BELIEF_MODELS", "draw_orders", "TURN_EDGES", "VALUE_BINS", "value_bins", "turn_buckets", "load_prior",
           "opponent_turns", "strip_history", "last_turn_loglik", "thrown_loglik", "OPPONENT_MODELS",
           "opponent_policy", "order_slots"]

BELIEF_MODELS = ("uniform", "prior", "particles", "sorted", "learned", "history")
#: the prior's buckets of turns the opponent has played (lower edges) and its value bins
TURN_EDGES = np.array([0, 1, 3, 6, 10, 15, 25])
VALUE_BINS = 20
PRIOR_FILE = os.path.join(os.path.dirname(__file__), "data", "racko_belief_prior.npz")
NET_FILE = os.path.join(os.path.dirname(__file__), "data", "racko_belief_net_p{players}.npz")


def value_bins(cards: np.ndarray, n: int) -> np.ndarray:
    """The prior's value bin of each card (1..n): cards scaled to ``VALUE_BINS`` equal ranges."""
    return np.minimum((np.asarray(cards) - 1) * VALUE_BINS // n, VALUE_BINS - 1)


def turn_buckets(own_turns: np.ndarray) -> np.ndarray:
    """The prior's bucket of a number of turns played by the opponent."""
    return np.searchsorted(TURN_EDGES, np.asarray(own_turns), side="right") - 1


def opponent_turns(view: dict[str, np.ndarray], num_players: int) -> np.ndarray:
    """``(B, P-1)``: turns each opponent (ego order) has played this round, from ``turn`` and
    the seat to move (the mover of turn ``t`` is ``to_move - (turn - t)``, ego)."""
    P = num_players
    r = (np.arange(1, P)[None, :] - view["to_move"][:, None] + view["turn"][:, None]) % P
    return (view["turn"][:, None] - r + P - 1) // P


def load_prior(num_players: int, path: str = PRIOR_FILE) -> np.ndarray:
    """``(2, 10, len(TURN_EDGES), VALUE_BINS)`` float weights (kind dealt/refilled, slot, turn
    bucket, value bin) for ``num_players`` (the nearest table fitted); a clear error if missing."""
    if not os.path.exists(path):
        raise FileNotFoundError(f"belief prior {path} is missing; make it with experiments/fit_belief_prior.py")
    with np.load(path) as z:
        have = sorted(int(k[1:]) for k in z.files if k.startswith("p"))
        p = min(have, key=lambda x: abs(x - num_players))
        counts = z[f"p{p}"].astype(np.float64)
    return (counts + 1.0) / (counts + 1.0).sum(axis=-1, keepdims=True)  # add-one smoothing


#: the planners the search plays as the ``history`` model's opponent and in its rollouts:
#: lookahead (its draw outlook at 16 values, or 4), sequence
OPPONENT_MODELS = ("lookahead", "lookahead4", "sequence")


def opponent_policy(name: str) -> Callable[..., np.ndarray]:
    """The decision function of the ``history`` opponent model ``name`` (``OPPONENT_MODELS``)."""
    if name == "sequence":
        return sequence_decide
    return partial(lookahead_decide, params={"outlook_samples": 4}) if name == "lookahead4" else lookahead_decide


class RackoBelief:
    """Sample worlds consistent with Rack-O information states (module docstring)."""

    def __init__(self, core: Any, model: str = "prior", oversample: int = 4, order_weight: float = 2.0,
                 action_temp: float = 1.0, sort_prob: float = 1.0, eps: float = 0.05, sweeps: int = 32,
                 opponent: str = "lookahead4") -> None:
        if model not in BELIEF_MODELS:
            raise ValueError(f"belief model must be one of {BELIEF_MODELS}, got {model!r}")
        if getattr(core, "obs", "default") != "infostate":
            raise ValueError("RackoBelief needs an information-state core: RackoCore(rules, obs='infostate')")
        if not isinstance(oversample, (int, np.integer)) or oversample < 1:
            raise ValueError(f"oversample must be an int >= 1, got {oversample!r}")
        self.core, self.model = core, model
        self.oversample, self.order_weight, self.action_temp = int(oversample), float(order_weight), float(action_temp)
        self.sort_prob = float(sort_prob)
        if not 0 < eps < 1 or not isinstance(sweeps, (int, np.integer)) or sweeps < 0:
            raise ValueError(f"eps must be in (0, 1) and sweeps an int >= 0, got {eps!r}, {sweeps!r}")
        self.eps, self.sweeps = float(eps), int(sweeps)
        if opponent not in OPPONENT_MODELS:
            raise ValueError(f"opponent model must be one of {OPPONENT_MODELS}, got {opponent!r}")
        self.opponent, self.decide = opponent, opponent_policy(opponent)
        self.prior = load_prior(core.num_players) if model not in ("uniform", "learned") else None
        self.net = None
        if model == "learned":
            path = NET_FILE.format(players=core.num_players)
            if not os.path.exists(path) or core.deck_size != 40:
                raise ValueError(f"the learned belief exists for the default two-player game only (no {path})")
            with np.load(path) as z:
                self.net = {k: z[k].astype(np.float32) for k in ("w1", "b1", "w2", "b2")}

    def sample(self, obs: np.ndarray, k: int, rng: np.random.Generator) -> RackoInfoState:
        """``k`` worlds per row of ``obs`` (``(B, obs_size)`` information states), ``B·k`` rows."""
        core = self.core
        if not isinstance(k, (int, np.integer)) or k < 1:
            raise ValueError(f"k (worlds per observation) must be an int >= 1, got {k!r}")
        obs = np.atleast_2d(np.asarray(obs, dtype=np.float32))
        if obs.ndim != 2 or obs.shape[1] != core.obs_size:
            raise ValueError(f"observations must be information states of shape (B, {core.obs_size}), got {obs.shape}")
        v = core.obs_view(obs)
        if self.model == "history":
            return self._sample_history(v, k, rng, obs)
        if self.model != "particles" or self.oversample == 1:
            return self._sample(v, k, rng, obs)
        M = self.oversample * k
        worlds = self._sample(v, M, rng, obs)
        P, B = core.num_players, obs.shape[0]
        opp = np.abs(worlds.racks[:, 1:].astype(np.int64))
        descents = (np.diff(opp, axis=2) < 0).sum(axis=2)  # (B·M, P-1)
        ramp = np.minimum(opponent_turns(v, P) / 8.0, 1.0)  # (B, P-1)
        logw = -self.order_weight * (descents.reshape(B, M, P - 1) * ramp[:, None, :]).sum(axis=2)
        if self.action_temp > 0:
            logw = logw + last_turn_loglik(core, v, worlds, M, self.action_temp).reshape(B, M)
            logw = logw + thrown_loglik(core, v, worlds, M, self.action_temp).reshape(B, M)
        keys = logw + rng.gumbel(size=logw.shape)  # Gumbel top-k: k of M without replacement, ∝ weight
        keep = np.argsort(-keys, axis=1, kind="stable")[:, :k]
        return worlds.take((np.arange(B)[:, None] * M + np.sort(keep, axis=1)).reshape(-1))

    def _sample_history(self, v: dict[str, np.ndarray], k: int, rng: np.random.Generator,
                        obs: np.ndarray) -> RackoInfoState:
        """``prior`` worlds kept and moved by the opponents' logged decisions (``"history"``)."""
        from deckgym.agents.racko_belief_history import history_loglik

        B = obs.shape[0]
        M = self.oversample * k
        worlds = self._sample(v, M, rng, obs)
        rep = np.repeat(np.arange(B), M)
        logw = history_loglik(self.core, v, worlds.racks, rep, self.decide, self.eps).reshape(B, M)
        keys = logw + rng.gumbel(size=logw.shape)  # Gumbel top-k: k of M without replacement, ∝ weight
        keep = (np.arange(B)[:, None] * M + np.sort(np.argsort(-keys, axis=1, kind="stable")[:, :k], axis=1)).reshape(-1)
        worlds = worlds.take(keep)
        self._refine(v, obs, worlds, np.repeat(np.arange(B), k), rng, logw.reshape(-1)[keep], True)
        return worlds

    def refine(self, worlds: RackoState, obs: np.ndarray, rows: np.ndarray, rng: np.random.Generator,
               swap_pile: bool = True) -> None:
        """``sweeps`` Metropolis–Hastings swaps of hidden cards in each world (in place), towards
        the history's posterior; world ``r`` belongs to observation ``rows[r]``. Without
        ``swap_pile`` only the opponents' hidden slots trade cards (the set they hold stays)."""
        self._refine(self.core.obs_view(obs), obs, worlds, rows, rng, None, swap_pile)

    def _refine(self, v: dict[str, np.ndarray], obs: np.ndarray, worlds: RackoState, rows: np.ndarray,
                rng: np.random.Generator, logw: np.ndarray | None, swap_pile: bool) -> None:
        from deckgym.agents.racko_belief_history import history_loglik, refine

        if not self.sweeps:
            return
        core = self.core
        if logw is None:
            logw = history_loglik(core, v, worlds.racks, rows, self.decide, self.eps)
        weights = self._slot_weights(v, opponent_turns(v, core.num_players), obs)
        log_w = np.log(np.maximum(weights, 1e-300)) if weights is not None else None

        def log_prior(racks: np.ndarray, r: np.ndarray) -> np.ndarray:
            if log_w is None:
                return np.zeros(len(racks))
            opp = racks[:, 1:].astype(np.int64)  # hidden cards are positive
            w = np.take_along_axis(log_w[r], np.maximum(opp, 0)[..., None], axis=3)[..., 0]
            return np.where(opp > 0, w, 0.0).sum(axis=(1, 2))

        refine(core, v, worlds, rows, logw, log_prior, self.decide, self.eps, self.sweeps, rng, swap_pile)

    def _sample(self, v: dict[str, np.ndarray], k: int, rng: np.random.Generator, obs: np.ndarray) -> RackoInfoState:
        core = self.core
        P, N, K = core.num_players, core.deck_size, core.pile_size
        B = v["rack"].shape[0]
        bad = np.flatnonzero((v["phase"] != CHOOSE) & (v["to_move"] != 0))
        if len(bad):
            raise ValueError(f"rows {bad[:8].tolist()}: an opponent holds a card; worlds are sampled at the "
                             "observer's decisions or in a choose phase")
        known = np.zeros((B, N + 1), bool)
        rows = np.arange(B)[:, None]
        known[rows, v["rack"]] = True
        opp = v["opp_known"]  # (B, P-1, 10)
        known[rows, opp.reshape(B, -1)] = True
        known |= v["discard_depth"] > 0
        known[np.arange(B), v["hand"]] = True
        known[:, 0] = True
        unknown = ~known
        free = opp == 0
        dealt = free & (v["slot_out"][:, 1:] == 0)
        n_free = free.reshape(B, -1).sum(axis=1)
        draw = v["draw_size"]
        if not np.array_equal(unknown.sum(axis=1), n_free + draw):
            bad = np.flatnonzero(unknown.sum(axis=1) != n_free + draw)
            raise ValueError(f"rows {bad[:8].tolist()}: the observation's cards do not add up (not an information state?)")

        # -- k copies, then the opponents' unknown slots, dealt ones first (they take unseen cards)
        R = B * k
        rep = np.repeat(np.arange(B), k)
        avail = unknown[rep].copy()  # (R, N+1)
        unseen = avail & ~v["seen"][rep]
        racks = np.zeros((R, P, 10), np.int64)
        racks[:, 0] = v["rack"][rep]
        racks[:, 1:] = -opp[rep]
        own_turns = opponent_turns(v, P)
        weights = self._slot_weights(v, own_turns, obs)  # (B, P-1, 10, N+1) or None
        for kind_dealt in (True, False):
            kind = dealt if kind_dealt else free & ~dealt
            for q in range(P - 1):
                for i in range(10):
                    need = kind[rep, q, i]
                    if not need.any():
                        continue
                    r = np.flatnonzero(need)
                    pool = unseen[r] if kind_dealt else avail[r]
                    w = pool.astype(np.float64) if weights is None else pool * weights[rep[r], q, i]
                    c = _draw_weighted(w, rng)
                    racks[r, q + 1, i] = c
                    avail[r, c] = False
                    unseen[r, c] = False
        if self.model == "sorted":  # planners keep racks in order: sort each kind of hidden slot
            ramp = np.minimum(opponent_turns(v, P) / 8.0, 1.0)[rep]  # (R, P-1)
            for q in range(P - 1):
                on = rng.random(R) < self.sort_prob * ramp[:, q]
                for kind in (dealt, free & ~dealt):
                    order_slots(racks[:, q + 1], kind[rep, q] & on[:, None])
        # -- the draw pile: the rest, shuffled
        keys = np.where(avail, rng.random((R, N + 1)), 2.0)
        order = np.argsort(keys, axis=1, kind="stable")  # available cards first, in random order
        st = core._empty(R)
        s = v["discard_size"][rep]
        h = (v["phase"][rep] != CHOOSE).astype(np.int64)
        d = draw[rep]
        j = np.arange(K)[None, :]
        piles = np.zeros((R, K + 1), np.int64)
        in_draw = j < d[:, None]
        piles[:, :K] = np.where(in_draw, np.take_along_axis(order, np.minimum(j, N), axis=1), 0)
        depth = v["discard_depth"][rep]  # card -> 1 = top
        dr, dc = np.nonzero(depth)
        piles[dr, K - s[dr] + depth[dr, dc] - 1] = dc
        hr = np.flatnonzero(h)
        piles[hr, K - s[hr] - 1] = v["hand"][rep][hr]
        st.piles[:] = piles
        mine_public = np.take_along_axis(v["took"][rep, 0], racks[:, 0], axis=1)
        racks[:, 0] = np.where(mine_public, -racks[:, 0], racks[:, 0])
        st.racks[:] = racks
        st.disc_n[:] = s
        st.phase[:] = v["phase"][rep]
        st.player[:] = v["to_move"][rep]
        st.turn[:] = v["turn"][rep]
        st.dealer[:] = (st.player.astype(np.int64) - 1 - st.turn) % P  # the seat before the first mover
        st.pub[:, 0] = v["seen"][rep]
        st.pub[:, 1] = v["in_discard"][rep]
        st.scores[:] = v["scores"][rep]
        st.rng_key[:] = rng.integers(0, 2**63, size=R, dtype=np.int64).astype(np.uint64)
        st.took[:] = v["took"][rep]
        st.thrown[:] = v["thrown"][rep]
        st.left[:] = v["left"][rep]
        st.slot_out[:] = v["slot_out"][rep]
        age = v["slot_age"][rep]
        st.slot_turn[:] = np.where(age > 0, v["turn"][rep][:, None, None] - age, -1)
        st.log[:] = np.stack([v[f][rep] for f in LOG_FIELDS], axis=-1)
        return st

    def _slot_weights(self, v: dict[str, np.ndarray], own_turns: np.ndarray, obs: np.ndarray) -> np.ndarray | None:
        """``(B, P-1, 10, N+1)`` weights of each card in each opponent slot under the prior
        (or the learned network's distribution)."""
        if self.net is not None:
            n = self.net
            x = obs[:, : self.core.obs_slices["log_top"].start]  # fitted on the fields before the turn log
            logits = (np.maximum(x @ n["w1"] + n["b1"], 0) @ n["w2"] + n["b2"]).reshape(len(obs), 1, 10, -1)
            w = np.zeros(logits.shape[:3] + (logits.shape[3] + 1,))
            w[..., 1:] = np.exp(logits - logits.max(axis=-1, keepdims=True))
            return w
        if self.prior is None:
            return None
        N = self.core.deck_size
        kind = (v["slot_out"][:, 1:] > 0).astype(np.intp)  # 0 dealt, 1 refilled
        tb = turn_buckets(own_turns)[:, :, None]  # (B, P-1, 1)
        vb = value_bins(np.arange(1, N + 1), N)
        w = np.zeros(kind.shape + (N + 1,))
        w[..., 1:] = self.prior[kind, np.arange(10)[None, None, :], tb][..., vb]
        return w


def last_turn_loglik(core: Any, v: dict[str, np.ndarray], worlds: RackoState, M: int, temp: float) -> np.ndarray:
    """``(B·M,)`` log-likelihood of the last opponent's last turn in each world under the
    planner (``sequence_plan``'s costs, softmax at ``temp``); 0 where the history shows none."""
    from racko_env.planning.plan import DEFAULT_SEQUENCE_PARAMS, sequence_plan
    from racko_env.planning.plan_constants import BIG
    from racko_env.state import PLACE_DISCARD, PLACE_DRAWN

    P = core.num_players
    B = v["rack"].shape[0]
    q = P - 1  # ego index of the seat that moved just before the observer
    rb = np.arange(B)
    age = v["slot_age"][:, q]
    swapped = (age == 1).any(axis=1) & (v["turn"] >= 1)
    i = np.argmax(age == 1, axis=1)
    out_card = v["slot_out"][rb, q, i]  # Y: the card the swap threw
    known_now = v["opp_known"][rb, q - 1, i]
    took = swapped & (known_now > 0) & v["took"][rb, q, known_now]
    depth = v["discard_depth"]
    top = np.argmax(depth == 1, axis=1) * (depth == 1).any(axis=1)
    second = np.argmax(depth == 2, axis=1) * (depth == 2).any(axis=1)
    thrown_card = np.where(v["thrown"][rb, q, top], top, np.where(v["thrown"][rb, q, v["hand"]], v["hand"], 0))
    threw = ~swapped & (thrown_card > 0) & (v["turn"] >= 1)
    last = np.where(swapped, out_card, thrown_card)  # the card that ended its turn
    seen_top = np.where(took, known_now, np.where(top == last, second, top))  # the top it chose against
    valid = swapped | threw
    rep = np.repeat(rb, M)
    R = B * M
    rr = np.arange(R)
    H = np.abs(worlds.racks[:, q].astype(np.int64))
    hidden_drawn = H[rr, i[rep]]
    Hp = H.copy()
    Hp[rr[swapped[rep]], i[rep][swapped[rep]]] = out_card[rep][swapped[rep]]
    mine = worlds.racks[:, 0].astype(np.int64)
    opp_known = np.zeros((R, P - 1, 10), np.int64)
    opp_known[:, 0] = np.where(mine < 0, -mine, 0)
    base = {"rack": Hp, "opp_known": opp_known, "in_discard": v["in_discard"][rep], "seen": v["seen"][rep]}
    p = DEFAULT_SEQUENCE_PARAMS
    ll = np.zeros(R)
    # the choice of pile: take when the best placement beats keeping the rack by the margin
    ch = valid[rep] & (seen_top[rep] > 0)
    cost, win = sequence_plan({**base, "phase": np.full(R, CHOOSE), "hand": np.zeros(R, np.int64),
                               "discard_top": np.maximum(seen_top[rep], 1)}, core.rules, p)
    gain = np.where(win.any(axis=1), BIG, cost[:, 0] - cost[:, 1:].min(axis=1))
    z = np.clip((gain - p["take_margin"]) / temp, -30, 30)
    sign = np.where(took[rep], 1.0, -1.0)
    ll += np.where(ch, -np.logaddexp(0.0, -sign * z), 0.0)
    # the placement of the card in hand (taken, or drawn: then the world's hidden card)
    hand = np.where(took[rep], known_now[rep], np.where(swapped[rep], hidden_drawn, thrown_card[rep]))
    phase = np.where(took[rep], PLACE_DISCARD, PLACE_DRAWN)
    cost, win = sequence_plan({**base, "phase": phase, "hand": np.maximum(hand, 1),
                               "discard_top": np.zeros(R, np.int64)}, core.rules, p)
    score = np.empty((R, 11))
    finite = np.where(win, np.inf, cost[:, 1:]).min(axis=1)
    score[:, :10] = np.where(win, (np.minimum(finite, cost[:, 0]) - 10.0)[:, None], cost[:, 1:])
    score[:, 10] = np.where(phase == PLACE_DRAWN, cost[:, 0], np.inf)
    logits = -score / temp
    lse = np.logaddexp.reduce(logits, axis=1)
    chosen = np.where(swapped[rep], i[rep], 10)
    ll += np.where(valid[rep], logits[rr, chosen] - lse, 0.0)
    return ll


def _place_loglik(core: Any, rack: np.ndarray, hand: np.ndarray, phase: np.ndarray, chosen: np.ndarray,
                  temp: float, extra: dict[str, np.ndarray]) -> np.ndarray:
    """Log-probability of placing ``hand`` by ``chosen`` (slot 0..9, or 10: thrown) under the
    planner's costs of ``rack`` (softmax at ``temp``; a placement that goes out is 10 turns better)."""
    from racko_env.planning.plan import DEFAULT_SEQUENCE_PARAMS, sequence_plan
    from racko_env.state import PLACE_DRAWN

    R = len(rack)
    cost, win = sequence_plan({**extra, "rack": rack, "phase": phase, "hand": np.maximum(hand, 1),
                               "discard_top": np.zeros(R, np.int64)}, core.rules, DEFAULT_SEQUENCE_PARAMS)
    score = np.empty((R, 11))
    finite = np.where(win, np.inf, cost[:, 1:]).min(axis=1)
    score[:, :10] = np.where(win, (np.minimum(finite, cost[:, 0]) - 10.0)[:, None], cost[:, 1:])
    score[:, 10] = np.where(phase == PLACE_DRAWN, cost[:, 0], np.inf)
    logits = -score / temp
    return logits[np.arange(R), chosen] - np.logaddexp.reduce(logits, axis=1)


def thrown_loglik(core: Any, v: dict[str, np.ndarray], worlds: RackoState, M: int, temp: float,
                  most: int = 12) -> np.ndarray:
    """``(B·M,)`` log-likelihood that each opponent threw the drawn cards it threw (the
    history's ``thrown``, up to ``most`` per opponent) with the world's rack as its rack then."""
    from racko_env.state import PLACE_DRAWN

    P = core.num_players
    B = v["rack"].shape[0]
    R = B * M
    rep = np.repeat(np.arange(B), M)
    ll = np.zeros(R)
    for q in range(1, P):
        thrown = v["thrown"][:, q].copy()
        thrown[:, 0] = False
        n = thrown.sum(axis=1)
        if not n.any():
            continue
        order = np.argsort(~thrown, axis=1, kind="stable")[:, :most]  # its thrown cards first
        ok = np.take_along_axis(thrown, order, axis=1)  # (B, T)
        T = order.shape[1]
        used = ok.any(axis=0)
        order, ok, T = order[:, used], ok[:, used], int(used.sum())
        H = np.abs(worlds.racks[:, q].astype(np.int64))
        rows = np.repeat(np.arange(R), T)
        cards = order[rep].reshape(-1)
        mine = worlds.racks[:, 0].astype(np.int64)
        opp_known = np.zeros((R, P - 1, 10), np.int64)
        opp_known[:, 0] = np.where(mine < 0, -mine, 0)
        extra = {"opp_known": opp_known[rows], "in_discard": v["in_discard"][rep][rows], "seen": v["seen"][rep][rows]}
        part = _place_loglik(core, H[rows], cards, np.full(R * T, PLACE_DRAWN), np.full(R * T, 10), temp, extra)
        ll += np.where(ok[rep].reshape(-1), part, 0.0).reshape(R, T).sum(axis=1)
    return ll


def order_slots(rack: np.ndarray, where: np.ndarray, keys: np.ndarray | None = None) -> None:
    """Rearrange the cards of ``rack (R, 10)`` at the slots ``where (R, 10)``, in place, in
    ascending order of ``keys (R, 10)`` (default: of the cards themselves, a sort)."""
    order = np.argsort(np.where(where, rack if keys is None else keys, np.inf), axis=1, kind="stable")
    vals = np.take_along_axis(rack, order, axis=1)
    pos = np.argsort(~where, axis=1, kind="stable")  # the chosen slots first, in slot order
    ok = np.arange(rack.shape[1])[None, :] < where.sum(axis=1)[:, None]
    cur = np.take_along_axis(rack, pos, axis=1)
    np.put_along_axis(rack, pos, np.where(ok, vals, cur), axis=1)


def _draw_weighted(w: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One column per row of ``w`` (non-negative, some positive per row), drawn ∝ ``w``."""
    c = np.cumsum(w, axis=1)
    u = rng.random(len(w)) * c[:, -1]
    return np.minimum((c <= u[:, None]).sum(axis=1), w.shape[1] - 1)


def draw_orders(st: RackoState, copies: int, rng: np.random.Generator) -> RackoState:
    """Each world of ``st`` ``copies`` times (world ``r``'s copies at rows ``r·copies + j``),
    every copy with its draw pile in a fresh random order and a fresh random stream. No seat
    sees the draw order, so each copy is as likely as its world: more worlds to roll out at
    the cost of one belief sample."""
    if copies == 1:
        return st
    out = st.take(np.repeat(np.arange(st.batch_size), copies))
    R, K = out.piles.shape[0], out.piles.shape[1] - 1
    j = np.arange(K)[None, :]
    keys = np.where(j < draw_pile_size(out)[:, None], rng.random((R, K)), 2.0 + j)  # the rest keep their places
    out.piles[:, :K] = np.take_along_axis(out.piles[:, :K], np.argsort(keys, axis=1), axis=1)
    out.rng_key[:] = rng.integers(0, 2**63, size=R, dtype=np.int64).astype(np.uint64)
    return out


def strip_history(st: RackoState) -> RackoState:
    """The plain :class:`RackoState` of ``st``'s games (copies), for fast play on a default core."""
    from dataclasses import fields

    return RackoState(**{f.name: getattr(st, f.name).copy() for f in fields(RackoState)})

