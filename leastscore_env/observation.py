"""Least Score observations: the ego-centric layout v1 (documented in
:mod:`leastscore_env.env`), batched and for one game, and ``obs_view`` to decode them.

Players see their own hand, the floor, the discards, the cards seen and the dead pile, of
the opponents only the cards publicly known to be in their hands and their hand sizes.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from deckgym.core import SizeCache, check_out, check_seat
from leastscore_env.cards import NUM_CARDS, PAD, VALUE
from leastscore_env.core_tables import CoreTables
from leastscore_env.rules import LeastScoreRules
from leastscore_env.state import HAND_MAX, LeastScoreState
from leastscore_env.tables import BYTE_BITS_F32, N_ALIVE, N_ALIVE_PY

_I64 = np.int64
# Per hand slot in the observation: (rank + 1) / 13, (suit + 1) / 4, value / 10; PAD -> 0.
SLOT_FEATURES = np.zeros((256, 3), dtype=np.float32)
SLOT_FEATURES[:NUM_CARDS, 0] = (np.arange(NUM_CARDS) // 4 + 1) / 13.0
SLOT_FEATURES[:NUM_CARDS, 1] = (np.arange(NUM_CARDS) % 4 + 1) / 4.0
SLOT_FEATURES[:NUM_CARDS, 2] = VALUE[:NUM_CARDS] / 10.0
# observe's hand slots as 4 groups of 4 floats, group g read from the byte pair g, g + 1 of
# the hand word (the uint16 at byte g, row lo + 256 hi, hi <= 52): group 0 = rank0 suit0
# value0 rank1, 1 = suit1 value1 rank2 suit2, 2 = value2 rank3 suit3 value3, 3 = rank4 suit4
# value4 (of the high byte) and a float overwritten later
_SLOT_GROUP_ROWS = 256 * (PAD + 1)
SLOT_FEATURE_GROUPS = np.zeros((4, _SLOT_GROUP_ROWS, 4), dtype=np.float32)
_lo, _hi = np.arange(_SLOT_GROUP_ROWS) & 0xFF, np.arange(_SLOT_GROUP_ROWS) >> 8
SLOT_FEATURE_GROUPS[0, :, :3], SLOT_FEATURE_GROUPS[0, :, 3] = SLOT_FEATURES[_lo], SLOT_FEATURES[_hi, 0]
SLOT_FEATURE_GROUPS[1, :, :2], SLOT_FEATURE_GROUPS[1, :, 2:] = SLOT_FEATURES[_lo, 1:], SLOT_FEATURES[_hi, :2]
SLOT_FEATURE_GROUPS[2, :, 0], SLOT_FEATURE_GROUPS[2, :, 1:] = SLOT_FEATURES[_lo, 2], SLOT_FEATURES[_hi]
SLOT_FEATURE_GROUPS[3, :, :3] = SLOT_FEATURES[_hi]
SLOT_FEATURE_GROUPS.flags.writeable = False
del _lo, _hi
_V16, _V8 = np.dtype((np.void, 16)), np.dtype((np.void, 8))  # 4 and 2 floats as one item
_OBS_CHUNK = 512  # games per chunk of observe's writes of the float32 rows (L2-sized)
_CARD_IDS = np.arange(NUM_CARDS)
#: float32 values of SLOT_FEATURES, exact as Python floats (the B = 1 path)
SLOT_FEATURES_PY = [tuple(float(v) for v in row) for row in SLOT_FEATURES]  # float32 values, exact as Python floats


@lru_cache(maxsize=None)
def _obs_flag_table(P: int) -> np.ndarray:
    """observe's alive (ego order), to_move (ego order), phase and can_declare fields, placed
    in the 4-float groups of the rest of an observation row that hold them (zeros for the
    other fields of those groups): (groups, rows, 4) float32, row
    ((seat * P + cur) << P | alive) << 2 | phase << 1 | ge (``ge``: completed turns >=
    players still in, L7)."""
    ego = (np.arange(P)[:, None] + np.arange(P)) % P
    t = np.zeros((P, P, 1 << P, 2, 2, 2 * P + 2), dtype=np.float32)
    alive = (np.arange(1 << P)[:, None] >> ego[:, None, :]) & 1  # (seat, alive, i)
    t[..., :P] = alive[:, None, :, None, None, :]
    t[..., P : 2 * P] = (ego[:, None, :] == np.arange(P)[None, :, None])[:, :, None, None, None, :]
    t[:, :, :, 1, :, 2 * P] = 1.0  # phase
    t[:, :, :, 0, 1, 2 * P + 1] = 1.0  # can_declare: discard phase and every player in has played
    t = t.reshape(-1, 2 * P + 2)
    t0 = 14 + 2 * P  # offset of alive in the rest of a row
    g0, g1 = t0 // 4, (t0 + 2 * P + 1) // 4
    q = np.zeros((len(t), 4 * (g1 - g0 + 1)), dtype=np.float32)
    q[:, t0 - 4 * g0 : t0 - 4 * g0 + 2 * P + 2] = t
    q = np.ascontiguousarray(q.reshape(len(t), g1 - g0 + 1, 4).transpose(1, 0, 2))
    q.flags.writeable = False
    return q


class LeastScoreObservation:
    """The default observations of a :class:`leastscore_env.core.LeastScoreCore`, a part it holds
    as ``core.observation`` (:mod:`leastscore_env.infostate` builds on it for information states)."""

    obs = "default"

    def __init__(self, rules: LeastScoreRules, tables: CoreTables) -> None:
        self.rules = rules
        P = self.num_players = rules.num_players
        self._ego, self._step_buffers = tables.ego, tables.bases
        self._obs_buffers = SizeCache(self._make_obs_scratch)
        # Observation layout (documented in env.py): K 52-card blocks, then the rest.
        K = self._nblocks = 5 + (P - 1)
        self.obs_slices: dict[str, slice] = {}
        off = 0
        for name in ("hand_mask", "floor", "discard", "seen", "dead"):
            self.obs_slices[name] = slice(off, off + 52)
            off += 52
        self.obs_slices["opp_known"] = slice(off, off + 52 * (P - 1))
        off = 52 * K
        for name, n in [
            ("hand_slots", 5 * 3),
            ("opp_hand_size", P - 1),
            ("scores", P),
            ("alive", P),
            ("to_move", P),
            ("phase", 1),
            ("can_declare", 1),
            ("deck_size", 1),
            ("turn", 1),
        ]:
            self.obs_slices[name] = slice(off, off + n)
            off += n
        self.obs_size = self.base_obs_size = off  # (information states append to obs_size)
        # B = 1 path: ego orders as lists, the per-entry scale of the non-card observation
        # part (float32, so raw * scale is bit-identical to the batched float32 products),
        # and a read-only result for the steps that report nothing.
        self._egol = self._ego.tolist()
        # the scaled observation entries as the batched path's float32 products, per value:
        # opponent hand size, score, deck position (top), turn
        self._obs_tables = (
            (np.arange(9, dtype=np.uint8) * np.float32(1.0 / rules.hand_size)).tolist(),
            (np.arange(rules.elimination_score + rules.penalty + 51, dtype=np.int16)
             * np.float32(1.0 / rules.elimination_score)).tolist(),
            ((NUM_CARDS - np.arange(NUM_CARDS + 1, dtype=np.uint8).astype(np.float32)) * np.float32(1.0 / NUM_CARDS)).tolist(),
            (np.arange(rules.max_turns + 1, dtype=np.int16) * np.float32(1.0 / rules.max_turns)).tolist(),
        )
        self._ego_alive = [[[float(m >> q & 1) for q in self._egol[e]] for m in range(256)] for e in range(P)]
        self._ego_tomove = [[[float(q == c) for q in self._egol[e]] for c in range(P)] for e in range(P)]
        # batched observe: rows of the seats seen from seat e (relative to e's row), one
        # table row of alive + to_move (ego order) per (seat, player to move, alive word),
        # the float32 tables of the scaled entries, void dtypes to copy k floats as one item
        self._ego_deltaT = np.ascontiguousarray((self._ego - np.arange(P)[:, None]).T, dtype=_I64)
        self._obs_flags = _obs_flag_table(P)
        self._obs_flags_g0 = (14 + 2 * P) // 4
        self._obs_deck = np.array(self._obs_tables[2], dtype=np.float32)
        # the K card blocks packed: word j of a game = OR of block k shifted left by sh
        # (right if negative) for (k, sh) in _obs_pack[j]
        nw = self._obs_nw = (52 * K + 63) // 64
        self._obs_pack = [[(k, 52 * k - 64 * j) for k in range(K) if -52 < 52 * k - 64 * j < 64] for j in range(nw)]
        self._o_slots = self.obs_slices["hand_slots"].start
        self._o_rest = self.obs_slices["opp_hand_size"].start
        # Tight bounds: all in [0, 1] except the scores (a total may pass the threshold on
        # the round that eliminates: at most elimination_score - 1 + penalty + 50).
        self.obs_low = np.zeros(self.obs_size, dtype=np.float32)
        self.obs_high = np.ones(self.obs_size, dtype=np.float32)
        self.obs_high[self.obs_slices["scores"]] = (rules.elimination_score - 1 + rules.penalty + 50) / rules.elimination_score

    # ------------------------------------------------------------------ observations
    def observe(self, state: LeastScoreState, seat, out: np.ndarray | None = None) -> np.ndarray:
        """``(B, obs_size)`` float32 observations (layout in ``leastscore_env.env``),
        ego-centric for ``seat``: an int, or ``(B,)`` ints (one seat per game); ValueError
        otherwise.

        A new array, unless ``out`` (a C-contiguous ``(B, obs_size)`` float32 array) is
        given: then the observation is written into it and ``out`` is returned (saves the
        allocation).

        The K 52-card blocks are gathered as K 52-bit words per game, unpacked and cast to
        float32 straight into the rows of ``obs``; the other fields are built in a small
        ``(B, rest)`` float32 scratch (mostly from tables) and copied row by row as one
        ``void`` item, both in L2-sized chunks of games.
        """
        s, P, K = state, self.num_players, self._nblocks
        if not isinstance(s, LeastScoreState):
            raise ValueError(f"state must be a LeastScoreState, got {type(s).__name__}")
        B = s.phase.shape[0]
        if B == 1 and out is None:
            if type(seat) is not int or not 0 <= seat < P:
                seat = check_seat(seat, 1, P)
            return self._observe_one(s, seat if type(seat) is int else int(np.asarray(seat).reshape(-1)[0]))
        seat = check_seat(seat, B, P)
        if out is None:
            obs = np.empty((B, self.base_obs_size), dtype=np.float32)
        else:
            check_out(out, B, self.base_obs_size)
            obs = out
        X, D, tmp, tailQ = self._obs_buffers.get(B)
        # (P, B) gathers of the seats seen from each game's seat (ego order), the seat's hand
        # word and the seat + player to move pair (a row of the alive/to_move table)
        if isinstance(seat, (int, np.integer)):
            e = int(seat)
            ego = self._ego[e]
            hbT = s.hand_bits.T.take(ego, axis=0)
            knT = s.known.T.take(ego[1:], axis=0)
            scT = s.scores.T.take(ego, axis=0)
            hw = s.hands[:, e].copy()
            key = s.player.astype(np.intp)
            key += e * P
        else:
            seat = np.asarray(seat)
            rows = self._step_buffers.get(B)[1] + seat
            flatT = self._ego_deltaT.take(seat, axis=1)
            flatT += rows
            hbT = s.hand_bits.reshape(-1).take(flatT)
            knT = s.known.reshape(-1).take(flatT[1:])
            scT = s.scores.reshape(-1).take(flatT)
            hw = s.hands.reshape(-1).take(rows)
            key = seat * P
            key += s.player
        # the K card blocks (52-bit words: own hand, floor, discard, seen, dead, opp_known)
        # packed end to end into nW 64-bit words per game, so that one unpack gives each
        # game's 52 K card bits contiguously
        blocks = (hbT[0], s.floor_bits, s.pending_bits, s.seen, s.dead, *knT)
        for j, pieces in enumerate(self._obs_pack):
            dj = D[j]
            for i, (k, sh) in enumerate(pieces):
                o = dj if i == 0 else tmp
                if sh > 0:
                    np.left_shift(blocks[k], sh, out=o)
                elif sh < 0:
                    np.right_shift(blocks[k], -sh, out=o)
                else:
                    np.copyto(o, blocks[k])
                if i:
                    np.bitwise_or(dj, tmp, out=dj)
        np.positive(D, out=X.T)  # (a ufunc: its loops run over B)
        # The rest of a row (T floats, T even) in ``tailQ``, as (groups, B, 4): float t of
        # game b at tailQ[t // 4, b, t % 4], so that it is copied into the rows of ``obs``
        # 16 bytes at a time. Hand slots: the first 4 groups, one table row per byte pair of
        # the hand word (the 16th float is overwritten by the first opponent's hand size);
        # alive, to_move, phase, can_declare: the groups that hold them, one table row per
        # seat, player to move, alive word, phase and L7 test (written before the fields that
        # share those groups); opponents' hand sizes and scores (the float32 products); deck
        # size; turn.
        for g in range(4):
            np.take(SLOT_FEATURE_GROUPS[g], np.ndarray((B,), np.uint16, buffer=hw, offset=g, strides=(8,)), axis=0, out=tailQ[g], mode="clip")
        key <<= P
        key += s.alive
        key <<= 2
        key += s.phase << 1
        key += s.turn >= N_ALIVE.take(s.alive)
        g0 = self._obs_flags_g0
        np.take(self._obs_flags, key, axis=1, out=tailQ[g0 : g0 + self._obs_flags.shape[0]], mode="clip")
        t = 15
        for c in np.bitwise_count(hbT[1:]):
            np.multiply(c, np.float32(1.0 / self.rules.hand_size), out=tailQ[t >> 2, :, t & 3])
            t += 1
        for c in scT:
            np.multiply(c, np.float32(1.0 / self.rules.elimination_score), out=tailQ[t >> 2, :, t & 3])
            t += 1
        t += 2 * P + 2
        tailQ[t >> 2, :, t & 3] = self._obs_deck.take(s.top)
        t += 1
        np.multiply(s.turn, np.float32(1.0 / self.rules.max_turns), out=tailQ[t >> 2, :, t & 3])
        n = 52 * K
        ng = (self.base_obs_size - n) >> 2  # whole groups; T % 4 == 2: a last pair of floats
        Xb = X.view(np.uint8)
        for i in range(0, B, _OBS_CHUNK):  # L2-sized chunks of games: cards, then the rest
            j = min(i + _OBS_CHUNK, B)
            bits = np.unpackbits(Xb[i:j].reshape(-1), bitorder="little").reshape(j - i, -1)
            np.copyto(obs[i:j, :n], bits[:, :n], casting="unsafe")
            np.copyto(obs[i:j, n : n + 4 * ng].view(_V16).T, tailQ[:ng, i:j].view(_V16)[:, :, 0])
            np.copyto(obs[i:j, n + 4 * ng :].view(_V8)[:, 0], tailQ[ng, i:j, :2].view(_V8)[:, 0])
        return obs

    def _observe_one(self, s: LeastScoreState, e: int) -> np.ndarray:
        """``observe`` for one game (the AEC env) from Python ints: the same float32 values
        as the batched path (the scaled entries are read from tables of the batched float32
        products, ``_obs_tables``), few numpy calls."""
        K = self._nblocks
        ego = self._egol[e]
        hb = s.hand_bits[0].tolist()
        kn = s.known[0].tolist()
        sc = s.scores[0].tolist()
        f_cnt, f_score, f_deck, f_turn = self._obs_tables
        words = [hb[e], int(s.floor_bits[0]), int(s.pending_bits[0]), int(s.seen[0]), int(s.dead[0])]
        raw = []
        for b in int(s.hands[0, e]).to_bytes(8, "little")[:HAND_MAX]:
            raw += SLOT_FEATURES_PY[b]
        for q in ego[1:]:
            words.append(kn[q])
            raw.append(f_cnt[hb[q].bit_count()])
        X = np.array(words, dtype=_I64)
        obs = np.empty((1, self.base_obs_size), dtype=np.float32)
        obs[0, : 52 * K].reshape(K, NUM_CARDS)[...] = BYTE_BITS_F32.take(X.view(np.uint8), axis=0).reshape(K, 64)[:, :NUM_CARDS]
        if 0 <= min(sc) and max(sc) < len(f_score):
            raw += [f_score[sc[q]] for q in ego]
        else:  # outside the table (not reachable by play): the batched product
            raw += (s.scores[0].take(ego) * np.float32(1.0 / self.rules.elimination_score)).tolist()
        alive, cur, phase, turn = int(s.alive[0]), int(s.player[0]), int(s.phase[0]), int(s.turn[0])
        raw += self._ego_alive[e][alive]
        raw += self._ego_tomove[e][cur]
        raw += [phase, phase == 0 and turn >= N_ALIVE_PY[alive], f_deck[int(s.top[0])]]
        raw.append(f_turn[turn] if 0 <= turn < len(f_turn) else float(s.turn[0] * np.float32(1.0 / self.rules.max_turns)))
        obs[0, 52 * K :] = raw
        return obs

    def _make_obs_scratch(self, B: int) -> tuple[np.ndarray, ...]:
        K = self._nblocks
        return (
            np.empty((B, self._obs_nw), dtype=_I64),  # the card blocks packed end to end
            np.empty((self._obs_nw, B), dtype=_I64),  # the same, transposed
            np.empty(B, dtype=_I64),
            np.empty(((self.base_obs_size - 52 * K + 3) // 4, B, 4), dtype=np.float32),  # the rest of a row, by groups of 4
        )

    def obs_view(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        """Named, decoded fields of a batch of observations ``(B, obs_size)`` or of one
        ``(obs_size,)``: card ids (-1 = none), bool card sets and flags, counts as ints."""
        obs = np.asarray(obs, dtype=np.float32)
        if obs.ndim == 1:
            obs = obs[None]
        if obs.ndim != 2 or obs.shape[1] != self.base_obs_size:
            raise ValueError(f"observations must have shape (B, {self.base_obs_size}), got {obs.shape}")
        B, P, L = obs.shape[0], self.num_players, self.obs_slices

        def f(name):
            return obs[:, L[name]]

        def ids_of(onehot, n=5):
            key = np.where(onehot > 0.5, _CARD_IDS, 99)
            key.sort(axis=1)
            key = key[:, :n]
            return np.where(key == 99, -1, key).astype(_I64)

        slots = f("hand_slots").reshape(B, 5, 3)
        rank = np.rint(slots[:, :, 0] * 13).astype(_I64) - 1
        suit = np.rint(slots[:, :, 1] * 4).astype(_I64) - 1
        return {
            "hand": np.where(rank >= 0, rank * 4 + suit, -1),
            "hand_mask": f("hand_mask") > 0.5,
            "floor": ids_of(f("floor")),
            "discard": f("discard") > 0.5,
            "seen": f("seen") > 0.5,
            "dead": f("dead") > 0.5,
            "opp_known": f("opp_known").reshape(B, P - 1, 52) > 0.5,
            "opp_hand_size": np.rint(f("opp_hand_size") * self.rules.hand_size).astype(_I64),
            "scores": np.rint(f("scores") * self.rules.elimination_score).astype(_I64),
            "alive": f("alive") > 0.5,
            "to_move": f("to_move") > 0.5,
            "phase": np.rint(f("phase")[:, 0]).astype(_I64),
            "can_declare": f("can_declare")[:, 0] > 0.5,
            "deck_size": np.rint(f("deck_size")[:, 0] * NUM_CARDS).astype(_I64),
            "turn": np.rint(f("turn")[:, 0] * self.rules.max_turns).astype(_I64),
        }
