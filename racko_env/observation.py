"""Rack-O observations: the ego-centric layout v1 (documented in :mod:`racko_env.env`),
batched and for one game, and ``obs_view`` to decode them.

Players see their own rack, of the opponents only the cards publicly known to be in their
racks (R5), the discard pile, and the card in hand only while they hold it (R4).
"""

from __future__ import annotations

import numpy as np

from deckgym.core import SizeCache, check_out, check_seat
from racko_env.rules import RackoRules
from racko_env.state import CHOOSE, RackoState

_VOID10 = np.dtype((np.void, 10))  # one rack (10 int8 cards) as one item


class ObsBuffers:
    """Per-batch-size buffers and views of ``observe``: a uint8 code of the whole row (only
    the flags part is read) cast in one pass, and the head (cards, one-hots, counts, turn,
    scores) as a separate contiguous code scaled by a tiled scale vector."""

    def __init__(self, core: "RackoObservation", b: int) -> None:
        P, N, K = core.num_players, core.deck_size, core.pile_size
        rows = np.arange(b)
        self.base_pile = rows * (K + 1) + (K - 1)  # + (K-1) so that pidx = base - s (+1)
        self.base_seat = rows * P
        self.base_seat_col = self.base_seat[:, None]
        H, O = core._obs_off["seen"], core.base_obs_size
        self.obs_code = np.zeros((b, O), np.uint8)
        self.head_code = np.zeros((b, H), np.uint8)
        self.head_f = np.zeros((b, H), np.float32)
        # The head scale tiled for k rows (k divides b, k <= 64): k·H-long inner loops, and a
        # small tile instead of a (b·H,) one (as fast, without megabytes per batch size).
        k = max(d for d in range(1, 65) if b % d == 0)
        self.head_scale = np.tile(core._obs_scale_head, k)
        self.head_scale[core._obs_off["turn"] :: H] = 0  # turn / scores are written as floats
        for j in range(P):
            self.head_scale[core._obs_off["scores"] + j :: H] = 0
        self.head_code_k = self.head_code.reshape(b // k, k * H)
        self.head_f_k = self.head_f.reshape(b // k, k * H)

        def rowview(buf: np.ndarray, off: int, n: int) -> np.ndarray:
            # Bytes [off, off + n) of every row of ``buf`` as one (b,) array of n-byte items:
            # copying a column block is then one 1-D copy instead of one inner loop per row.
            return np.ndarray((b,), np.dtype((np.void, n)), buffer=buf, offset=off, strides=(buf.strides[0],))

        o = core._obs_off
        self.v_rack = rowview(self.head_code, 0, 10)
        self.v_opp = rowview(self.head_code, 10, 10 * (P - 1))
        self.v_info = rowview(self.head_code, o["phase"], o["turn"] - o["phase"])
        self.v_seen = rowview(self.obs_code, H, N)
        self.v_in_discard = rowview(self.obs_code, H + N, N)
        self.score_cols = tuple(self.head_f[:, o["scores"] + j] for j in range(P))
        self.head_items = self.head_f.view(np.dtype((np.void, 4 * H))).reshape(-1)
        self.hand_col = self.head_code[:, o["hand"]]
        self.top_col = self.head_code[:, o["discard_top"]]
        self.turn_col = self.head_f[:, o["turn"]]
        self.base_seat2 = 2 * self.base_seat + 1  # P = 2: base_seat + the other seat


class RackoObservation:
    """The default observations (layout v1) of a :class:`racko_env.core.RackoCore`, a part it
    holds as ``core.observation`` (:mod:`racko_env.infostate` builds on it for information states)."""

    obs = "default"

    def __init__(self, rules: RackoRules) -> None:
        self.rules = rules
        self.num_players, self.deck_size, self.pile_size = rules.num_players, int(rules.deck_size), rules.pile_size
        P, N, K = self.num_players, self.deck_size, self.pile_size
        self._obs_buffers = SizeCache(lambda b: ObsBuffers(self, b))
        self._rot = (np.arange(P)[:, None] + np.arange(P)[None, :]) % P  # ego order of seats
        sizes = [("rack", 10), ("opp_known", 10 * (P - 1)), ("phase", 3), ("to_move", P), ("hand", 1),
                 ("discard_top", 1), ("draw_size", 1), ("discard_size", 1), ("turn", 1), ("scores", P),
                 ("seen", N), ("in_discard", N)]
        self.obs_slices: dict[str, slice] = {}
        off = 0
        for name, n in sizes:
            self.obs_slices[name] = slice(off, off + n)
            off += n
        self.obs_size = self.base_obs_size = off  # (information states append to obs_size)
        scale = np.ones(off, dtype=np.float32)
        high = np.ones(off, dtype=np.float32)
        for name in ("rack", "hand", "discard_top", "opp_known"):
            scale[self.obs_slices[name]] = 1.0 / N
        for name in ("draw_size", "discard_size"):
            scale[self.obs_slices[name]] = 1.0 / K
        scale[self.obs_slices["scores"]] = 1.0 / rules.target_score
        # A total can pass the target by at most one round (2 × (75 + 400) with partners).
        high[self.obs_slices["scores"]] = (rules.target_score + 2 * 475 + 100) / rules.target_score
        scale[self.obs_slices["turn"]] = 1.0 / rules.max_turns
        self._obs_scale = scale
        self._obs_off = {name: sl.start for name, sl in self.obs_slices.items()}
        self._obs_scale_head = scale[: self._obs_off["seen"]].copy()  # seen / in_discard are 0/1
        # One row per (phase, seat to move, my seat, discard pile size s): the uint8 code
        # of [phase one-hot, to_move one-hot, hand (0), discard top (0), draw size, discard
        # size], and whether I see the card in hand (I hold it: a place phase and my turn).
        o = self._obs_off
        ph, pl, me, dn = (g.reshape(-1) for g in np.meshgrid(np.arange(3), np.arange(P), np.arange(P), np.arange(K + 1),
                                                              indexing="ij"))
        rel = (pl - me) % P
        info = np.zeros((len(ph), o["turn"] - o["phase"]), np.uint8)
        info[np.arange(len(ph)), ph] = 1
        info[np.arange(len(ph)), 3 + rel] = 1
        info[:, o["draw_size"] - o["phase"]] = np.maximum(K - dn - (ph != CHOOSE), 0)
        info[:, o["discard_size"] - o["phase"]] = dn
        self._obs_info = info.view(np.dtype((np.void, info.shape[1]))).reshape(-1)
        self._obs_hand_vis = ((ph != CHOOSE) & (rel == 0)).astype(np.uint8)
        self._obs_turn_scale = scale[o["turn"]]
        self._obs_score_scale = scale[o["scores"]]
        self.obs_low = 0.0
        self.obs_high = high

    def observe(self, state: RackoState, seat: np.ndarray | int, out: np.ndarray | None = None) -> np.ndarray:
        """``(B, obs_size)`` float32 observations (layout in ``racko_env.env``), ego-centric
        for ``seat``: an int, or ``(B,)`` ints (one seat per game); ValueError otherwise.

        ``out``: an optional C-contiguous ``(B, obs_size)`` float32 buffer to write into
        (saves the allocation and its page faults when the caller reuses one buffer, e.g. a
        vector env)."""
        st = state
        K, P = self.pile_size, self.num_players
        if not isinstance(st, RackoState):
            raise ValueError(f"state must be a RackoState, got {type(st).__name__}")
        b = st.disc_n.shape[0]
        if b == 1 and out is None:
            if type(seat) is not int or not 0 <= seat < P:
                seat = check_seat(seat, 1, P)
            return self._observe_one(st, int(np.asarray(seat).reshape(-1)[0]))
        seat = check_seat(seat, b, P)
        if out is not None:
            check_out(out, b, self.base_obs_size)
        N = self.deck_size
        c = self._obs_buffers.get(b)
        if not isinstance(seat, (int, np.integer)):
            seat = np.asarray(seat)
        # Every block is written as one 1-D copy of n-byte items (``_BatchTables`` views):
        # a 2-D column-block write would pay one inner loop per row. Cards and counts are
        # assembled as uint8 codes, then cast / scaled in contiguous passes.
        rv = st.racks.reshape(-1).view(_VOID10)  # one item per (game, seat) rack
        me = c.base_seat + seat
        if P == 2:
            opp = c.base_seat2 - me
            ego_cols = (me, opp)
        else:
            ego = c.base_seat_col + self._rot.take(seat, axis=0)  # (B, P) me, then the seats after me
            opp = ego[:, 1:]
            ego_cols = tuple(ego[:, j] for j in range(P))
        # My rack (abs: public cards are stored negative); of the opponents only the cards
        # publicly known to be there (R5: stored negative).
        mine = rv.take(me)
        np.abs(mine.view(np.int8), out=mine.view(np.int8))
        np.copyto(c.v_rack, mine)
        theirs = rv.take(opp).reshape(-1)
        t8 = theirs.view(np.int8)
        sign = np.right_shift(t8, 7)  # -1 where public (negative), else 0
        np.negative(t8, out=t8)
        np.bitwise_and(t8, sign, out=t8)  # max(-x, 0), faster than np.maximum for int8
        np.copyto(c.v_opp, theirs.view(c.v_opp.dtype))
        # Phase, seat to move, draw/discard sizes: one table row; then [hand, discard top]
        # from the piles (adjacent: the gap K-s-1 and K-s, piles[K] = 0 if s = 0).
        s = st.disc_n
        key = st.phase * P
        key += st.player
        key *= P
        key = np.add(key, seat, dtype=np.intp)  # (phase, player, seat): no modulo (slow)
        key *= K + 1
        key += s
        np.copyto(c.v_info, self._obs_info.take(key))
        pu = st.piles.reshape(-1).view(np.uint8)
        pidx = c.base_pile - s
        np.multiply(pu.take(pidx), self._obs_hand_vis.take(key), out=c.hand_col)  # a drawn card is face down (R4)
        pidx += 1
        c.top_col[...] = pu.take(pidx)
        # Flags (0/1) straight from the two planes of ``pub``, then everything cast at once.
        pub = st.pub.reshape(b, -1)
        np.copyto(c.v_seen, np.ndarray((b,), c.v_seen.dtype, buffer=pub, offset=1, strides=(pub.strides[0],)))
        np.copyto(c.v_in_discard, np.ndarray((b,), c.v_seen.dtype, buffer=pub, offset=N + 2, strides=(pub.strides[0],)))
        obs = np.empty((b, self.base_obs_size), np.float32) if out is None else out
        np.copyto(obs, c.obs_code)
        np.multiply(c.head_code_k, c.head_scale, out=c.head_f_k)
        np.multiply(st.turn, self._obs_turn_scale, out=c.turn_col)
        tf = st.scores.reshape(-1)
        for col, ix in zip(c.score_cols, ego_cols):  # match totals in ego order
            np.multiply(tf.take(ix), self._obs_score_scale, out=col)
        np.copyto(np.ndarray((b,), c.head_items.dtype, buffer=obs, strides=(obs.strides[0],)), c.head_items)
        return obs

    def _observe_one(self, st: RackoState, seat: int) -> np.ndarray:
        """``observe`` for one game (the AEC env) from Python lists: same values, few calls."""
        K, P = self.pile_size, self.num_players
        racks = st.racks[0].tolist()
        piles = st.piles[0].tolist()
        ph, player, s = int(st.phase[0]), int(st.player[0]), int(st.disc_n[0])
        totals = st.scores[0].tolist()
        order = [(seat + j) % P for j in range(P)]
        raw = [x if x > 0 else -x for x in racks[seat]]
        for q in order[1:]:  # opponents: only the public (negative) cards, R5
            raw += [-x if x < 0 else 0 for x in racks[q]]
        raw += [ph == 0, ph == 1, ph == 2]
        rel = (player - seat) % P
        raw += [j == rel for j in range(P)]
        raw += [piles[K - s - 1] if ph != CHOOSE and player == seat else 0, piles[K - s],
                K - s - (ph != CHOOSE), s, int(st.turn[0])]
        raw += [totals[q] for q in order]
        pub = st.pub[0, :, 1:].tolist()
        raw += pub[0] + pub[1]
        return (np.array(raw, dtype=np.float32) * self._obs_scale)[None, :]

    def obs_view(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        """Named, decoded fields of a batch of observations ``(B, obs_size)`` or of one
        ``(obs_size,)`` (layout v1): cards as ints, one-hots as indices, flags as bools."""
        obs = np.atleast_2d(np.asarray(obs, dtype=np.float32))
        if obs.ndim != 2 or obs.shape[1] != self.base_obs_size:
            raise ValueError(f"observations must have shape (B, {self.base_obs_size}), got {obs.shape}")
        b, P, N, K = obs.shape[0], self.num_players, self.deck_size, self.pile_size
        sl = self.obs_slices

        def ints(name: str, mult: float) -> np.ndarray:
            return np.rint(obs[:, sl[name]] * mult).astype(np.int64)

        def flags(name: str) -> np.ndarray:
            out = np.zeros((b, N + 1), bool)
            out[:, 1:] = obs[:, sl[name]] > 0.5
            return out

        return {
            "rack": ints("rack", N),
            "phase": np.argmax(obs[:, sl["phase"]], axis=1),
            "to_move": np.argmax(obs[:, sl["to_move"]], axis=1),
            "hand": ints("hand", N)[:, 0],
            "discard_top": ints("discard_top", N)[:, 0],
            "opp_known": ints("opp_known", N).reshape(b, P - 1, 10),
            "seen": flags("seen"),
            "in_discard": flags("in_discard"),
            "draw_size": ints("draw_size", K)[:, 0],
            "discard_size": ints("discard_size", K)[:, 0],
            "scores": ints("scores", self.rules.target_score),
            "turn": ints("turn", self.rules.max_turns)[:, 0],
        }

