"""Belief sampling for Least Score: full games consistent with a seat's information state.

:class:`LeastScoreBelief` turns a batch of information states (``LeastScoreCore(rules,
obs="infostate")`` observations of the seat to move) into ``k`` complete games per row, a
:class:`leastscore_env.state.LeastScoreInfoState` of ``B·k`` rows (row ``b·k + j`` is world
``j`` of observation ``b``), in the observer's frame: seat 0 is the observer, seats 1.. the
opponents in ego order. Every card is in exactly one place (a hand, the floor, the mover's
discards, the dead pile or the deck), and observing a world for seat 0 gives the observation
it was sampled from, bit for bit (``tests/test_leastscore_belief.py``). What is copied: the
observer's hand, the floor, the discards, the dead pile, the cards each opponent is known to
hold (L4: taken from the floor), hand sizes, scores, the turn and the history. What is drawn:

* each opponent's unknown cards. Before any reshuffle (L6) they are cards never face up this
  round; once a seen card is unaccounted for (the dead pile went back into the deck), any
  unknown card;
* the deck's order: the remaining unknown cards, shuffled.

Models of the opponents' unknown cards:

* ``"uniform"``: every consistent assignment equally likely;
* ``"tilt"``: each card weighted ``exp(-skew · value)``, the skew of the calibrated opponent
  model that ``leastscore:expect`` and ``leastscore:dp`` declare with
  (``leastscore_env.planning.plan.calibrated_skew``: it grows with the opponent's turns and unknown
  cards): players keep low cards and throw high ones;
* ``"prior"``: each card weighted by its rank's over-representation in the unknown cards of
  ``leastscore:dp`` players, by the opponent's turns played and its number of unknown cards,
  counted in dp self-play (``experiments/fit_leastscore_prior.py``,
  ``agents/data/leastscore_belief_prior.npz``). It learns what the tilt assumes (low ranks
  stay) and what it cannot (pairs and runs are thrown early, so their ranks thin out);
* ``"particles"``: ``oversample`` times as many ``prior`` worlds, of which ``k`` are kept
  (without replacement) in proportion to how much more likely each opponent's whole hand is
  under dp's play than under the prior's card-by-card draw: a logistic classifier of true
  against prior-sampled hands (same self-play, same file) gives that density ratio from the
  hand's features (:func:`hand_features`: its totals, its best legal group, pairs, high
  cards, with the opponent's turns). Card-by-card weights cannot see that a dp player
  rarely keeps a pair of kings it could throw; the ratio can.

Weighted draws take an opponent's cards without replacement, each in proportion to its
weight among the cards left (exponential keys), opponents in ego order.
"""

from __future__ import annotations

import os
from dataclasses import fields
from typing import Any

import numpy as np

from leastscore_env.cards import NUM_CARDS, NUM_RANKS, PAD, RANK, VALUE
from leastscore_env.planning.plan import DISCARD_SLOTS, calibrated_skew
from leastscore_env.state import HAND_MAX, LeastScoreInfoState, LeastScoreState
from leastscore_env.tables import DECLARE_BIT, DRAW_ACTIONS_WORD, words_of

__all__ = ["LeastScoreBelief", "BELIEF_MODELS", "TURN_BUCKETS", "PRIOR_FILE", "opponent_turns", "load_prior",
           "load_ratio", "hand_features", "strip_history", "card_bits", "bits_cards"]

BELIEF_MODELS = ("uniform", "tilt", "prior", "particles")
#: the prior's buckets of turns the opponent has played: 0, 1, ..., TURN_BUCKETS - 1 or more
TURN_BUCKETS = 7
PRIOR_FILE = os.path.join(os.path.dirname(__file__), "data", "leastscore_belief_prior.npz")
_CARDS = np.arange(NUM_CARDS, dtype=np.int64)
_CARD_RANK = RANK[:NUM_CARDS].astype(np.intp)
_CARD_VALUE = VALUE[:NUM_CARDS].astype(np.float64)
_BYTE_VALUE = VALUE.astype(np.float64)  # card id or PAD (value 0) -> value
_MULTI = sum(1 << a for a in range(31) if bin(a + 1).count("1") >= 2)  # discard groups of 2+ cards (L5)
_RANK_COUNT = np.eye(NUM_RANKS + 1)[RANK.astype(np.intp)][:, :NUM_RANKS]  # card id or PAD -> its rank, one-hot


def opponent_turns(turn: np.ndarray, num_players: int) -> np.ndarray:
    """``(B, P-1)``: turns each opponent (ego order) has played this round, the observer to
    move at completed turn ``turn`` (turn ``t`` was played by ego seat ``(t - turn) mod P``)."""
    q = np.arange(1, num_players)[None, :]
    return (np.asarray(turn, dtype=np.int64)[:, None] + q) // num_players


def load_prior(num_players: int, path: str = PRIOR_FILE) -> np.ndarray:
    """``(TURN_BUCKETS, HAND_MAX + 1, 13)`` weights of a rank by (opponent's turns, unknown
    cards) for ``num_players`` (the nearest table fitted); a clear error if the file is missing."""
    if not os.path.exists(path):
        raise FileNotFoundError(f"Least Score belief prior {path} is missing; make it with "
                                "experiments/fit_leastscore_prior.py")
    with np.load(path) as z:
        have = sorted(int(k[3:]) for k in z.files if k.startswith("num"))
        p = min(have, key=lambda x: abs(x - num_players))
        num, den = z[f"num{p}"].astype(np.float64), z[f"den{p}"].astype(np.float64)
    return (num + 1.0) / (den + 1.0)  # ratio to the uniform share, smoothed towards 1


def load_ratio(num_players: int, path: str = PRIOR_FILE) -> np.ndarray:
    """``(F,)`` coefficients of the particles' log density ratio (:func:`hand_features`)."""
    if not os.path.exists(path):
        raise FileNotFoundError(f"Least Score belief prior {path} is missing; make it with "
                                "experiments/fit_leastscore_prior.py")
    with np.load(path) as z:
        have = sorted(int(k[5:]) for k in z.files if k.startswith("ratio"))
        if not have:
            raise FileNotFoundError(f"{path} has no particle ratio; make it with experiments/fit_leastscore_prior.py")
        return z[f"ratio{min(have, key=lambda x: abs(x - num_players))}"].astype(np.float64)


def hand_features(hands: np.ndarray, known: np.ndarray, legal: np.ndarray, turns: np.ndarray) -> np.ndarray:
    """``(..., F)`` features of hands (card words ``hands``, their known cards ``known``, legal
    discard bits ``legal``, the owner's turns played ``turns``, all the same shape): what
    separates a dp player's hands from card-by-card draws (see ``"particles"``)."""
    ids = np.ascontiguousarray(hands, dtype=np.int64)[..., None].view(np.uint8)[..., :HAND_MAX].astype(np.intp)
    val = _BYTE_VALUE[ids]  # (..., 5)
    known_val = (bits_cards(known) * _CARD_VALUE).sum(axis=-1)
    total = val.sum(axis=-1)
    unknown_sum = total - known_val
    groups = np.where(((legal[..., None] >> np.arange(31)) & 1) == 1, val @ DISCARD_SLOTS.T.astype(np.float64), 0.0)
    best = groups.max(axis=-1)
    top = val.max(axis=-1)
    pairs = (_RANK_COUNT[ids].sum(axis=-2) >= 2).sum(axis=-1)
    high = (val >= 8).sum(axis=-1)
    multi = ((legal & _MULTI) != 0).astype(np.float64)
    t = np.minimum(turns, 6) / 6.0
    n = (ids < NUM_CARDS).sum(axis=-1) / HAND_MAX
    # a floor card is taken to pair or run with the hand: unknown cards matching a known card's rank or a neighbour
    kn = bits_cards(known)
    held = (_RANK_COUNT[ids].sum(axis=-2) > 0)  # (..., 13)
    known_rank = (kn.reshape(kn.shape[:-1] + (NUM_RANKS, 4)).any(axis=-1))
    unk_rank = held & ~known_rank | (_RANK_COUNT[ids].sum(axis=-2) >= 2) & known_rank
    near = np.zeros_like(known_rank)
    near[..., 1:] |= known_rank[..., :-1]
    near[..., :-1] |= known_rank[..., 1:]
    has_known = known_rank.any(axis=-1)
    f = [np.ones_like(total), unknown_sum / 10, total / 10, top / 10, best / 10, (best - top) / 10, pairs, high / 5,
         multi, t * unknown_sum / 10, t * (best - top) / 10, t * pairs, t * high / 5, n * unknown_sum / 10,
         (unk_rank & known_rank).sum(axis=-1), (unk_rank & near & ~known_rank).sum(axis=-1), has_known * unknown_sum / 10]
    return np.stack(f, axis=-1)


def card_bits(member: np.ndarray) -> np.ndarray:
    """``(..., 52)`` bool → ``(...)`` int64 52-bit card sets."""
    return (member.astype(np.int64) << _CARDS).sum(axis=-1)


def bits_cards(bits: np.ndarray) -> np.ndarray:
    """``(...)`` int64 52-bit card sets → ``(..., 52)`` bool."""
    return (np.asarray(bits, dtype=np.int64)[..., None] >> _CARDS) & 1 == 1


def _words(member: np.ndarray) -> np.ndarray:
    """``(..., 52)`` bool sets of at most 5 cards → card words (ids ascending, PAD after)."""
    ids = np.sort(np.where(member, _CARDS, PAD), axis=-1)[..., :HAND_MAX]
    return words_of(ids.astype(np.uint8))


def strip_history(st: LeastScoreState) -> LeastScoreState:
    """The plain :class:`LeastScoreState` of ``st``'s games (copies), to play on a default core."""
    return LeastScoreState(**{f.name: getattr(st, f.name).copy() for f in fields(LeastScoreState)})


class LeastScoreBelief:
    """Sample worlds consistent with Least Score information states (module docstring)."""

    def __init__(self, core: Any, model: str = "prior", oversample: int = 4) -> None:
        if model not in BELIEF_MODELS:
            raise ValueError(f"belief model must be one of {BELIEF_MODELS}, got {model!r}")
        if getattr(core, "obs", "default") != "infostate":
            raise ValueError("LeastScoreBelief needs an information-state core: LeastScoreCore(rules, obs='infostate')")
        if not isinstance(oversample, (int, np.integer)) or isinstance(oversample, bool) or oversample < 1:
            raise ValueError(f"oversample must be an int >= 1, got {oversample!r}")
        self.core, self.model, self.oversample = core, model, int(oversample)
        self.prior = load_prior(core.num_players) if model in ("prior", "particles") else None
        self.ratio = load_ratio(core.num_players) if model == "particles" else None

    def sample(self, obs: np.ndarray, k: int, rng: np.random.Generator) -> LeastScoreInfoState:
        """``k`` worlds per row of ``obs`` (``(B, obs_size)`` information states of the seat
        to move), ``B·k`` rows in the observer's frame (module docstring)."""
        core = self.core
        if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or k < 1:
            raise ValueError(f"k (worlds per observation) must be an int >= 1, got {k!r}")
        obs = np.atleast_2d(np.asarray(obs, dtype=np.float32))
        if obs.ndim != 2 or obs.shape[1] != core.obs_size:
            raise ValueError(f"observations must be information states of shape (B, {core.obs_size}), got {obs.shape}")
        v = core.obs_view(obs)
        if self.model == "particles":
            return self._particles(obs, v, k, rng)
        return self._sample(v, k, rng)

    def _particles(self, obs: np.ndarray, v: dict[str, np.ndarray], k: int, rng: np.random.Generator) -> LeastScoreInfoState:
        """``oversample · k`` prior worlds, ``k`` kept ∝ the hands' density ratio (module docstring)."""
        B, P, M = obs.shape[0], self.core.num_players, self.oversample * k
        worlds = self._sample(v, M, rng)
        turns = np.repeat(opponent_turns(v["turn"], P), M, axis=0)
        f = hand_features(worlds.hands[:, 1:], worlds.known[:, 1:], worlds.legal[:, 1:], turns)
        logw = (f @ self.ratio).sum(axis=1).reshape(B, M)
        keys = logw + rng.gumbel(size=logw.shape)  # Gumbel top-k: k of M without replacement, ∝ weight
        keep = np.sort(np.argsort(-keys, axis=1, kind="stable")[:, :k], axis=1)
        return worlds.take((np.arange(B)[:, None] * M + keep).reshape(-1))

    def _sample(self, v: dict[str, np.ndarray], k: int, rng: np.random.Generator) -> LeastScoreInfoState:
        """``k`` worlds per row of the decoded observations ``v`` (``"particles"``: prior worlds)."""
        core = self.core
        B, P = v["turn"].shape[0], core.num_players
        bad = np.flatnonzero(~v["to_move"][:, 0])
        if len(bad):
            raise ValueError(f"rows {bad[:8].tolist()}: worlds are sampled for the seat to move, not another seat")
        opp_known = v["opp_known"]  # (B, P-1, 52)
        located = v["hand_mask"] | v["discard"] | v["dead"] | opp_known.any(axis=1)
        fl = v["floor"]
        located[np.nonzero(fl >= 0)[0], fl[fl >= 0]] = True
        unknown = ~located
        need = np.maximum(v["opp_hand_size"] - opp_known.sum(axis=2), 0)  # (B, P-1)
        if not np.array_equal(unknown.sum(axis=1), need.sum(axis=1) + v["deck_size"]):
            bad = np.flatnonzero(unknown.sum(axis=1) != need.sum(axis=1) + v["deck_size"])
            raise ValueError(f"rows {bad[:8].tolist()}: the observation's cards do not add up (not an information state?)")
        # before a reshuffle (L6) every unknown card is unseen and the opponents hold only such cards
        reshuffled = (unknown & v["seen"]).any(axis=1, keepdims=True)
        eligible = unknown & (~v["seen"] | reshuffled)

        R = B * k
        rep = np.repeat(np.arange(B), k)
        avail = unknown[rep]
        elig = eligible[rep]
        mine = np.zeros((R, P - 1, NUM_CARDS), bool)
        weights = self._weights(v, need)  # (B, P-1, 52) or None
        if weights is None:  # uniform: one random order of the eligible cards, dealt out in ego order
            keys = np.where(elig, rng.random((R, NUM_CARDS)), 2.0)
            order = np.argsort(keys, axis=1, kind="stable")
            rank = np.empty_like(order)
            np.put_along_axis(rank, order, np.arange(NUM_CARDS)[None, :], axis=1)
            hi = np.cumsum(need[rep], axis=1)
            lo = hi - need[rep]
            mine = (rank[:, None, :] >= lo[:, :, None]) & (rank[:, None, :] < hi[:, :, None])
        else:
            for q in range(P - 1):
                w = weights[rep, q]
                keys = np.where(elig, -np.log(rng.random((R, NUM_CARDS))) / np.maximum(w, 1e-12), np.inf)
                order = np.argsort(keys, axis=1, kind="stable")
                take = np.arange(NUM_CARDS)[None, :] < need[rep, q][:, None]
                np.put_along_axis(mine[:, q], order, take, axis=1)
                elig &= ~mine[:, q]
        avail &= ~mine.any(axis=1)
        keys = np.where(avail, rng.random((R, NUM_CARDS)), 2.0)
        deck_cards = np.argsort(keys, axis=1, kind="stable")  # the deck's cards first, in random order
        return self._world(v, rep, mine, deck_cards, rng)

    def _weights(self, v: dict[str, np.ndarray], need: np.ndarray) -> np.ndarray | None:
        """``(B, P-1, 52)`` weight of each card in each opponent's unknown cards (None: uniform)."""
        if self.model == "uniform":
            return None
        turns = opponent_turns(v["turn"], self.core.num_players)
        if self.model == "tilt":
            skew = calibrated_skew(turns, need)
            return np.exp(-skew[..., None] * _CARD_VALUE)
        tb = np.minimum(turns, TURN_BUCKETS - 1)
        return self.prior[tb, np.minimum(need, HAND_MAX)][..., _CARD_RANK]

    def _world(self, v: dict[str, np.ndarray], rep: np.ndarray, mine: np.ndarray, deck_cards: np.ndarray,
               rng: np.random.Generator) -> LeastScoreInfoState:
        """The ``R`` states: the observation's public part copied, the drawn cards placed."""
        core = self.core
        P, R = core.num_players, len(rep)
        st = core._empty(R)
        held = np.concatenate([v["hand_mask"][rep][:, None], v["opp_known"][rep] | mine], axis=1)  # (R, P, 52)
        st.hands[:] = _words(held)
        st.hand_bits[:] = card_bits(held)
        st.legal[:] = core._legal_of(st.hands)
        picked = v["picked"][rep]
        st.known[:, 0] = card_bits(picked[:, 0] & v["hand_mask"][rep])  # floor cards it took and still holds
        st.known[:, 1:] = card_bits(v["opp_known"][rep])
        floor = np.zeros((R, NUM_CARDS), bool)
        fl = v["floor"][rep]
        r, j = np.nonzero(fl >= 0)
        floor[r, fl[r, j]] = True
        # discards sit at consecutive slots: the floor's card j is its j-th lowest either way (L4)
        n_floor, n_pend = floor.sum(axis=1), v["discard"][rep].sum(axis=1)
        st.floor[:] = _words(floor)
        st.floor_sel[:] = (1 << n_floor) - 1
        st.floor_bits[:] = card_bits(floor)
        st.pending[:] = _words(v["discard"][rep])
        st.pending_sel[:] = (1 << n_pend) - 1
        st.pending_bits[:] = card_bits(v["discard"][rep])
        deck_size = v["deck_size"][rep]
        top = NUM_CARDS - deck_size
        col = np.arange(NUM_CARDS)[None, :]
        src = np.clip(col - top[:, None], 0, NUM_CARDS - 1)
        st.deck[:, :NUM_CARDS] = np.where(col >= top[:, None], np.take_along_axis(deck_cards, src, axis=1), PAD)
        st.top[:] = top
        st.seen[:] = card_bits(v["seen"][rep])
        st.dead[:] = card_bits(v["dead"][rep])
        st.scores[:] = v["scores"][rep]
        alive = v["alive"][rep]
        st.alive[:] = (alive.astype(np.int64) << np.arange(P)).sum(axis=1)
        turn = v["turn"][rep]
        seats_in = np.argsort(~alive, axis=1, kind="stable")  # the seats still in, in turn order from seat 0
        n_in = alive.sum(axis=1)
        st.first[:] = seats_in[np.arange(R), (-turn) % np.maximum(n_in, 1)]
        st.player[:] = 0
        phase = v["phase"][rep]
        st.phase[:] = phase
        st.turn[:] = turn
        st.round[:] = 1
        st.mask[:] = np.where(phase == 0, st.legal[:, 0] | np.where(v["can_declare"][rep], DECLARE_BIT, 0),
                              DRAW_ACTIONS_WORD[st.floor_sel])
        st.rng_key[:] = rng.integers(0, 2**63, size=R, dtype=np.int64).astype(np.uint64)
        st.thrown[:] = card_bits(v["thrown"][rep])
        st.picked[:] = card_bits(picked)
        st.draws[:] = v["draws"][rep]
        return st
