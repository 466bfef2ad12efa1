"""Least Score turns (L4): discard a legal group (L5) or declare (L7), then take the top
card of the deck (reshuffling the dead pile when it is empty, L6) or one floor card; the
turn cap (L10).

The batched path works on one int64 card word per hand: the discard compacts the kept
bytes with a 3-stage byte network, the draw inserts the card by a SWAR compare (tables in
:mod:`leastscore_env.tables`). ``_step_one`` plays the same rules on Python ints for one
game (the AEC env) with the same tables, state, result and random draws (tests compare the
two step by step); the rare round end, deal and reshuffle use the batched code.
"""

from __future__ import annotations

from bisect import bisect_left

import numpy as np

from deckgym.core import StepResult, check_actions, illegal_actions_error
from leastscore_env.cards import NUM_CARDS
from leastscore_env.legality import RANK_SUIT_TERM_PY
from leastscore_env.core_tables import CoreTables
from leastscore_env.dealing import LeastScoreDealing
from leastscore_env.rules import LeastScoreRules
from leastscore_env.scoring import LeastScoreScoring
from leastscore_env.state import (ACTION_NAMES, DECLARE, DRAW_DECK, HAND_MAX, NUM_ACTIONS, PAD_WORD, PHASE_NAMES,
                                  TAKE_FLOOR, LeastScoreState)
from leastscore_env.tables import (ACTION_DISCARD_SLOTS, ACTION_DISCARD_TABLES, ACTION_DRAW_TABLES, BYTE_BITS, CARD_BIT, CARD_BIT_PY,
                                   COMPRESS_BY1_PY, COMPRESS_BY2_PY, COMPRESS_BY4_PY, DECLARE_BIT, DECLARE_WORD,
                                   DISCARD_BYTES_PY, DISCARD_PAD_FILL_PY, DRAW_ACTIONS_WORD, DRAW_ACTIONS_WORD_PY,
                                   FLOOR_CARD_SHIFT, FLOOR_CARD_SHIFT_PY, KEEP_BYTES_PY, KEPT_PAD_FILL_PY, N_ALIVE,
                                   N_ALIVE_PY, NEXT_SEAT, NEXT_SEAT_PY, PAIR_BITS)


def result_zeros(b: int, P: int, writeable: bool = True) -> StepResult:
    """A StepResult of zeros for ``b`` games (read-only: the shared "nothing happened")."""
    buf = np.zeros(16 * b * P + (3 + P) * b, dtype=np.uint8)  # one allocation for the 8 result arrays
    buf.flags.writeable = writeable
    ints = buf[: 12 * b * P].view(np.int32).reshape(3, b, P)
    flags = buf[16 * b * P :].view(bool)
    return StepResult(
        rewards=buf[12 * b * P : 16 * b * P].view(np.float32).reshape(b, P),
        terminated=flags[:b],
        truncated=flags[b : 2 * b],
        round_over=flags[2 * b : 3 * b],
        round_points=ints[0],
        total_points=ints[1],
        winners=flags[3 * b :].reshape(b, P),
        extra={"hand_total": ints[2]},
    )


class LeastScoreTurns:
    """The turn of a :class:`leastscore_env.core.LeastScoreCore`, a part it holds as
    ``core.turns``: legal actions and ``step``; ``dealing`` reshuffles (L6), a round that ends
    goes to ``scoring``."""

    action_names = ACTION_NAMES  # (named in the errors of check_actions)
    phase_names = PHASE_NAMES

    def __init__(self, rules: LeastScoreRules, tables: CoreTables, dealing: LeastScoreDealing,
                 scoring: LeastScoreScoring) -> None:
        self.rules, self.dealing, self.scoring = rules, dealing, scoring
        P = self.num_players = rules.num_players
        self._legal_of, self._legal_lists = tables.legal_of, tables.legal_lists
        self._step_buffers = tables.bases
        self._nothing = result_zeros(1, P, writeable=False)
        self._mask_rows: dict[int, np.ndarray] = {}
        #: (mask, its (B*64,) base) of the last batched legal_action_mask: sample_legal packs it back in one call
        self.last_mask: tuple[np.ndarray, np.ndarray] | None = None

    def legal_action_mask(self, state: LeastScoreState) -> np.ndarray:
        """(B, 38) bool: one unpack of the mask words (a view of a (B, 64) array)."""
        m = state.mask
        B = m.shape[0]
        if B == 1:  # a copy of the cached (1, 38) row of this mask word
            k = int(m[0])
            row = self._mask_rows.get(k)
            if row is None:
                if len(self._mask_rows) >= 4096:
                    self._mask_rows.clear()
                row = self._mask_rows[k] = BYTE_BITS.take(m.view(np.uint8).reshape(1, 8)[:, :5], axis=0).reshape(1, 40)[:, :NUM_ACTIONS].copy()
            return row.copy()
        bits = np.unpackbits(np.ascontiguousarray(m, dtype=np.int64).view(np.uint8), bitorder="little")
        mask = bits.view(bool).reshape(B, 64)[:, :NUM_ACTIONS]
        self.last_mask = (mask, bits)
        return mask

    def check_actions(self, state: LeastScoreState, actions: np.ndarray) -> np.ndarray:
        """``actions`` as a ``(B,)`` int array if each is legal in its game (L4, L5, L7),
        else a ValueError naming the rows, their actions, phases and legal actions."""
        if not isinstance(state, LeastScoreState):
            raise ValueError(f"state must be a LeastScoreState, got {type(state).__name__}")
        a = check_actions(actions, state.phase.shape[0], NUM_ACTIONS)
        ok = np.right_shift(state.mask, a)
        ok &= 1
        if np.count_nonzero(ok) != ok.size:
            bad = np.flatnonzero(ok == 0)
            masks = (state.mask[bad, None] >> np.arange(NUM_ACTIONS)) & 1
            raise illegal_actions_error(self, bad, a, state.phase[bad], masks.astype(bool))
        return a

    def step(self, state: LeastScoreState, actions: np.ndarray, check: bool = True) -> StepResult:
        """Play one action per game, in place: ``actions`` ``(B,)`` ints, legal in each game.

        Returns the :class:`~deckgym.core.StepResult` of the step (rewards, episode and round
        ends, points, ``extra["hand_total"]``). ``check`` (default True): refuse the whole
        step with a ValueError if any action is out of range, of the wrong shape or dtype,
        or illegal in its game (rules: ``docs/RULES.md``). Loops that already sample from
        ``legal_action_mask`` may pass ``check=False`` to skip it; an illegal action is then
        undefined behaviour."""
        s = state
        if check:
            if (s.phase.shape[0] == 1 and type(actions) is np.ndarray and actions.shape == (1,)
                    and actions.dtype.kind in "iu" and isinstance(s, LeastScoreState)):
                a1 = int(actions[0])
                if not (0 <= a1 < NUM_ACTIONS and (int(s.mask[0]) >> a1) & 1):
                    self.check_actions(s, actions)  # raises, naming the problem
                return self._step_one(s, a1)
            actions = self.check_actions(s, actions)
        a = np.asarray(actions)
        if a.shape[0] == 1 and s.phase.shape[0] == 1:
            return self._step_one(s, int(a.reshape(-1)[0]))
        return self.step_batch(s, a)

    def step_batch(self, s: LeastScoreState, a: np.ndarray) -> StepResult:
        """``step`` by whole-batch array calls on legal actions ``a``, for any ``B`` (``step``
        gives ``B = 1`` to ``_step_one``)."""
        B = a.shape[0]
        res = result_zeros(B, self.num_players)
        nd = np.count_nonzero(s.phase)
        if nd == 0:
            self._discard(s, a, None, res)
        elif nd == B:
            self._draw(s, a, None, res)
        else:  # a batch whose games are in different phases
            ixw = np.flatnonzero(s.phase)
            ixd = np.flatnonzero(s.phase == 0)
            self._discard(s, a.take(ixd), ixd, res)
            self._draw(s, a.take(ixw), ixw, res)
        return res

    def _step_one(self, s: LeastScoreState, a: int) -> StepResult:
        """``step`` for a batch of one game (the AEC env) on Python ints: the same rules and
        the same state, result and random draws as ``_discard`` / ``_draw``
        (``tests/test_leastscore_fastpath.py`` compares the two step by step); the rare round
        end, deal and reshuffle use the batched code. Why it exists: the AEC env plays 2.20×
        as many steps per second with it as with ``step_batch`` at B = 1 (core+obs at B = 1:
        2.76×; ``benchmarks/core_ab.py``, BENCHMARKS.md)."""
        cur = int(s.player[0])
        if not s.phase[0]:  # L4 first half: discard the group a + 1 (or declare, L7)
            w = int(s.hands[0, cur])
            sel = a + 1
            x = w & KEEP_BYTES_PY[sel]
            t = x & COMPRESS_BY1_PY[sel]
            x = (x ^ t) | (t >> 8)
            t = x & COMPRESS_BY2_PY[sel]
            x = (x ^ t) | (t >> 16)
            t = x & COMPRESS_BY4_PY[sel]
            x = (x ^ t) | (t >> 32)
            s.hands[0, cur] = x | KEPT_PAD_FILL_PY[sel]
            d = (w & DISCARD_BYTES_PY[sel]) | DISCARD_PAD_FILL_PY[sel]
            dm = 0
            for b in d.to_bytes(8, "little")[:HAND_MAX]:
                dm |= CARD_BIT_PY[b]
            if dm:
                ndm = ~dm
                s.hand_bits[0, cur] = int(s.hand_bits[0, cur]) & ndm
                s.known[0, cur] = int(s.known[0, cur]) & ndm
                s.seen[0] = int(s.seen[0]) | dm
            s.pending[0] = d
            s.pending_sel[0] = sel & 31
            s.pending_bits[0] = dm
            s.phase[0] = 1
            s.mask[0] = DRAW_ACTIONS_WORD_PY[int(s.floor_sel[0])]
            if a != DECLARE:
                return self._nothing
            res = result_zeros(1, self.num_players)
            self.scoring.end_rounds(s, self._step_buffers.get(1)[0], True, res)
            return res
        # L4 second half: the top deck card or one floor card; the turn passes left
        top = int(s.top[0])
        if a == DRAW_DECK:
            if top >= NUM_CARDS:  # L6: the dead pile becomes the new deck
                self.dealing.reshuffle(s, self._step_buffers.get(1)[0])
                top = int(s.top[0])
            c = int(s.deck[0, top])
            kb = 0
            s.top[0] = top + 1
        else:
            c = (int(s.floor[0]) >> FLOOR_CARD_SHIFT_PY[(int(s.floor_sel[0]) << 3) | ((a - TAKE_FLOOR) & 7)]) & 0xFF
            kb = CARD_BIT_PY[c]  # a floor card taken is known to be in that hand
            s.known[0, cur] = int(s.known[0, cur]) | kb
        s.hand_bits[0, cur] = int(s.hand_bits[0, cur]) | CARD_BIT_PY[c]
        hb = int(s.hands[0, cur]).to_bytes(8, "little")
        k = bisect_left(hb, c)  # sorted insertion of c (the PAD bytes sort last)
        nb = hb[:k] + bytes((c,)) + hb[k:7]
        s.hands[0, cur] = int.from_bytes(nb, "little")
        LT = RANK_SUIT_TERM_PY
        ix = LT[0][nb[0]] + LT[1][nb[1]] + LT[2][nb[2]] + LT[3][nb[3]] + LT[4][nb[4]]
        ri = ix & 0x3FFF
        A, Bt, MONO = self._legal_lists  # legality.LegalTables, as lists
        legal = A[ri] | (Bt[ri] & MONO[ix >> 14])
        s.legal[0, cur] = legal
        s.dead[0] = int(s.dead[0]) | (int(s.floor_bits[0]) ^ kb)  # the untaken floor cards
        turn = int(s.turn[0]) + 1
        alive = int(s.alive[0])
        nxt = NEXT_SEAT_PY[(alive << 3) | cur]
        mask = legal if nxt == cur else int(s.legal[0, nxt])
        if turn >= N_ALIVE_PY[alive]:  # L7
            mask |= DECLARE_BIT
        s.floor[0] = s.pending[0]  # the discards are the next player's floor
        s.floor_sel[0] = s.pending_sel[0]
        s.floor_bits[0] = s.pending_bits[0]
        s.pending[0] = PAD_WORD
        s.pending_sel[0] = 0
        s.pending_bits[0] = 0
        s.turn[0] = turn
        s.player[0] = nxt
        s.phase[0] = 0
        s.mask[0] = mask
        if turn < self.rules.max_turns:
            return self._nothing
        res = result_zeros(1, self.num_players)  # L10
        self.scoring.end_rounds(s, self._step_buffers.get(1)[0], False, res)
        return res

    def _discard(self, s: LeastScoreState, a: np.ndarray, ix: np.ndarray | None, res: StepResult) -> None:
        """L4 first half for the games ``ix`` (None: all): discard the group ``a + 1`` (or
        declare, a == 31, L7)."""
        _, arP, _ = self._step_buffers.get(s.phase.shape[0])
        if ix is None:
            rows = arP + s.player
            fs = s.floor_sel
        else:
            rows = arP.take(ix)
            rows += s.player.take(ix)
            fs = s.floor_sel.take(ix)
        T = ACTION_DISCARD_TABLES.take(a, axis=1)  # (7, n): the tables of each game's group
        hands, known, hbits = s.hands.reshape(-1), s.known.reshape(-1), s.hand_bits.reshape(-1)
        w = hands.take(rows)
        # kept cards: clear the discarded bytes, compact them down, refill with PAD
        x = w & T[0]
        t = x & T[1]
        x ^= t
        t >>= 8
        x |= t
        np.bitwise_and(x, T[2], out=t)
        x ^= t
        t >>= 16
        x |= t
        np.bitwise_and(x, T[3], out=t)
        x ^= t
        t >>= 32
        x |= t
        x |= T[4]
        hands[rows] = x
        d = np.bitwise_and(w, T[5], out=w)  # the discards, at their slots
        d |= T[6]
        dm = PAIR_BITS.take(np.ndarray((3, d.size), np.uint16, buffer=d, strides=(2, 8)))  # 52-bit sets of byte pairs
        dm[0] |= dm[1]
        dm = np.bitwise_or(dm[0], dm[2], out=dm[0])
        ndm = ~dm
        hb = hbits.take(rows)
        hb &= ndm
        hbits[rows] = hb
        kn = known.take(rows)
        kn &= ndm  # discarded cards are no longer known to be held
        known[rows] = kn
        if ix is None:
            s.seen |= dm  # discards are face up
            s.pending[:] = d
            np.take(ACTION_DISCARD_SLOTS, a, out=s.pending_sel)
            s.pending_bits[:] = dm
            s.phase[:] = 1
            np.take(DRAW_ACTIONS_WORD, fs, out=s.mask)  # L4: the deck or any floor card
        else:
            seen = s.seen.take(ix)
            seen |= dm
            s.seen[ix] = seen
            s.pending[ix] = d
            s.pending_sel[ix] = ACTION_DISCARD_SLOTS.take(a)
            s.pending_bits[ix] = dm
            s.phase[ix] = 1
            s.mask[ix] = DRAW_ACTIONS_WORD.take(fs)
        if a.max() >= DECLARE:
            decl = a == DECLARE
            if decl.any():
                self.scoring.end_rounds(s, (self._step_buffers.get(s.phase.shape[0])[0] if ix is None else ix)[decl], True, res)

    def _draw(self, s: LeastScoreState, a: np.ndarray, ix: np.ndarray | None, res: StepResult) -> None:
        """L4 second half for the games ``ix`` (None: all): take the top deck card or one
        floor card; the turn passes left."""
        ar, arP, ar53 = self._step_buffers.get(s.phase.shape[0])
        g = (lambda x: x) if ix is None else (lambda x: x.take(ix))
        T = ACTION_DRAW_TABLES.take(a, axis=1)  # (3, n) uint8: from the deck, deck index offset, floor index
        top = g(s.top)
        te = top + T[1]  # the deck column of the card taken (> 52 if not from the deck)
        empty = te == NUM_CARDS
        if empty.any():  # L6: an empty deck; the dead pile becomes the new deck
            self.dealing.reshuffle(s, (ar if ix is None else ix)[empty])
            top = g(s.top)
            te = top + T[1]
        np.minimum(te, NUM_CARDS, out=te)
        di = g(ar53) + te  # (a new array: g may return the cached bases)
        fs = g(s.floor_sel) << 3
        fs |= T[2]
        sh = FLOOR_CARD_SHIFT.take(fs)
        fc = g(s.floor) >> sh  # the floor card taken (PAD if none)
        fc &= 0xFF
        c = np.minimum(fc, s.deck.reshape(-1).take(di))  # the card taken
        cur = g(s.player)
        rowsP = g(arP)
        rows = rowsP + cur
        hands, known, hbits = s.hands.reshape(-1), s.known.reshape(-1), s.hand_bits.reshape(-1)
        w = hands.take(rows)
        # sorted insertion of c into the hand word (SWAR): the bytes >= c move up one byte
        cK = c * 0x0101010101010101
        m = w | -0x7F7F7F7F7F7F7F80
        m -= cK
        m >>= 7
        m &= 0x0101010101010101
        m *= 0xFF  # the bytes >= c
        wm = w & m
        w ^= wm
        wm <<= 8
        w |= wm
        np.left_shift(m, 8, out=wm)
        m ^= wm  # the lowest of them: where c goes
        m &= cK
        w |= m
        hands[rows] = w
        hb = hbits.take(rows)
        hb |= CARD_BIT.take(c)
        hbits[rows] = hb
        kb = CARD_BIT.take(fc)  # a floor card taken is known to be in that hand
        kn = known.take(rows)
        kn |= kb
        known[rows] = kn
        legal = s.legal.reshape(-1)
        legal[rows] = self._legal_of(w)
        fb = g(s.floor_bits) ^ kb  # the untaken floor cards go to the dead pile
        fb |= g(s.dead)
        turn = g(s.turn) + 1
        alive = g(s.alive)
        nxt = NEXT_SEAT.take((alive << 3) | cur)
        mask = legal.take(np.add(rowsP, nxt, out=rows))
        mask |= DECLARE_WORD.take(turn >= N_ALIVE.take(alive))  # L7
        top += T[0]
        if ix is None:
            s.top[:] = top
            s.dead[:] = fb
            s.floor[:] = s.pending  # the discards are the next player's floor
            s.floor_sel[:] = s.pending_sel
            s.floor_bits[:] = s.pending_bits
            s.pending[:] = PAD_WORD
            s.pending_sel[:] = 0
            s.pending_bits[:] = 0
            s.turn[:] = turn
            s.player[:] = nxt
            s.phase[:] = 0
            s.mask[:] = mask
        else:
            s.top[ix] = top
            s.dead[ix] = fb
            s.floor[ix] = s.pending.take(ix)
            s.floor_sel[ix] = s.pending_sel.take(ix)
            s.floor_bits[ix] = s.pending_bits.take(ix)
            s.pending[ix] = PAD_WORD
            s.pending_sel[ix] = 0
            s.pending_bits[ix] = 0
            s.turn[ix] = turn
            s.player[ix] = nxt
            s.phase[ix] = 0
            s.mask[ix] = mask
        if turn.max() >= self.rules.max_turns:  # L10
            self.scoring.end_rounds(s, (ar if ix is None else ix)[turn >= self.rules.max_turns], False, res)
