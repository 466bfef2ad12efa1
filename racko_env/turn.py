"""Rack-O turns: legal actions (R4), the swap (R5), the reshuffle (R6), going out (R7)
and the turn cap (R9), batched and for one game (the AEC env's B = 1 path).

The batched ``step`` is a few dozen whole-batch array calls: per-code table lookups (code =
phase * 13 + action) and flat 1-D take/put, no branch per game. ``_step_one`` applies the
same rules with Python scalars on one game (tests compare both paths step by step); both
share the tables below, :meth:`RackoTurns.reshuffle` and the round end
(:mod:`racko_env.scoring`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from deckgym.core import SizeCache, StepResult, check_actions, illegal_actions_error
from deckgym.rng import permutation_keys
from racko_env.rules import RackoRules
from racko_env.scoring import RackoScoring
from racko_env.tables import INCREASING, LONGEST_RUN, rack_codes
from racko_env.state import (ACTION_NAMES, CHOOSE, DISCARD_DRAWN, DRAW, NUM_ACTIONS, PHASE_NAMES, PLACE_DISCARD,
                             PLACE_DRAWN, TAKE, RackoState)

_ONES64 = np.uint64(0x0101010101010101)  # ten bool bytes all True, read as uint64 + uint16
_ONES16 = np.uint16(0x0101)
_VOID10 = np.dtype((np.void, 10))  # one rack (10 int8 cards) as one item


def result_zeros(b: int, P: int, writeable: bool = True) -> StepResult:
    """A StepResult of zeros for ``b`` games (read-only: the shared "nothing happened")."""

    def zeros(shape: tuple, dtype: Any) -> np.ndarray:
        z = np.zeros(shape, dtype)
        z.flags.writeable = writeable
        return z

    return StepResult(
        rewards=zeros((b, P), np.float32), terminated=zeros(b, bool), truncated=zeros(b, bool),
        round_over=zeros(b, bool), round_points=zeros((b, P), np.int32), total_points=zeros((b, P), np.int32),
        winners=zeros((b, P), bool),
        extra={"own_points": zeros((b, P), np.int32), "went_out": zeros((b, P), bool),
               "run_bonus": zeros((b, P), np.int32)},
    )


class StepBuffers:
    """Per-batch-size constants and work buffers of ``step`` (flat index bases, the R7
    test's buffers, a result with nothing to report)."""

    def __init__(self, P: int, N: int, K: int, b: int) -> None:
        self.rows = np.arange(b)
        self.base_pile = self.rows * (K + 1) + (K - 1)  # + (K-1) so that pidx = base - s (+1)
        self.base_seat = self.rows * P
        self.base_pub0 = self.rows * (2 * (N + 1))  # + N + 1: the second flag plane
        # Work buffers of the R7 test (see RackoTurns.step).
        self.row = np.zeros(b * 10, np.int8)
        self.row_void = self.row.view(_VOID10)
        self.diff = np.zeros(b * 10, np.int8)
        self.up = np.zeros(b * 10, bool)
        thresh = np.zeros((b, 10), np.int8)
        thresh[:, 9] = -128  # the difference crossing into the next row (>= -126) counts as up
        self.up_thresh = thresh.reshape(-1)
        self.up_lo = np.ndarray(shape=(b,), dtype=np.uint64, buffer=self.up, offset=0, strides=(10,))
        self.up_hi = np.ndarray(shape=(b,), dtype=np.uint16, buffer=self.up, offset=8, strides=(10,))
        self.alive = np.ones((b, P), bool)
        self.alive.flags.writeable = False
        self.nothing = result_zeros(b, P, writeable=False)


class RackoTurns:
    """The turn rules of a :class:`racko_env.core.RackoCore`, a part it holds as ``core.turns``:
    legal actions and ``step``; a round that ends goes to ``scoring``."""

    action_names = ACTION_NAMES  # (named in the errors of check_actions)
    phase_names = PHASE_NAMES

    def __init__(self, rules: RackoRules, scoring: RackoScoring) -> None:
        self.rules, self.scoring = rules, scoring
        self.num_players, self.deck_size, self.pile_size = rules.num_players, int(rules.deck_size), rules.pile_size
        P = self.num_players
        self.step_buffers = SizeCache(lambda b: StepBuffers(self.num_players, self.deck_size, self.pile_size, b))
        # -- action tables, indexed by phase * 13 + action --------------------------------
        codes = np.arange(3 * NUM_ACTIONS)
        ph, a = codes // NUM_ACTIONS, codes % NUM_ACTIONS
        choose = ph == CHOOSE
        is_slot = (ph != CHOOSE) & (a >= 2) & (a <= 11)
        self._t_draw = choose & (a == DRAW)
        self._t_take = (choose & (a == TAKE)).astype(np.int8)
        self._t_slot = np.where(is_slot, a - 2, 0).astype(np.intp)
        self._t_is_slot = is_slot
        # Signed multiplier of the card put into a rack: -1 marks it public (from the discard, R5).
        self._t_sign = np.where(is_slot, np.where(ph == PLACE_DISCARD, -1, 1), 0).astype(np.int8)
        place = (ph != CHOOSE) & (is_slot | (a == DISCARD_DRAWN))
        self._t_place = place
        self._t_place_players = np.where(place, P, 0).astype(np.int8)
        # int8, the dtype of ``player``: a wider table would widen the field on every step
        self._next_seat = ((np.arange(2 * P) + np.arange(2 * P) // P) % P).astype(np.int8)  # seat p (+P if the turn ends)
        # Public flags: a discarded card becomes seen and in the discard pile; a taken one
        # stays seen and leaves it; a drawn card is not touched (index 0 is a dummy).
        self._t_touch = place | (choose & (a == TAKE))
        self._t_discard_delta = np.select([choose & (a == TAKE), place], [-1, 1], 0).astype(np.int8)
        self._t_next_phase = np.select(
            [choose & (a == DRAW), choose & (a == TAKE), place], [PLACE_DRAWN, PLACE_DISCARD, CHOOSE], ph
        ).astype(np.int8)
        # -- legal actions by phase (R4): draw/take; a slot; a slot or discard the drawn card
        mask = np.zeros((3, NUM_ACTIONS), dtype=bool)
        mask[CHOOSE, [DRAW, TAKE]] = True
        mask[PLACE_DISCARD, 2:12] = True
        mask[PLACE_DRAWN, 2:13] = True
        self._mask_table = mask
        self._legal_code = mask.reshape(-1)  # by phase * 13 + action: legal (step's check)
        self._legal_py = mask.tolist()
        words = np.zeros((3, 16), dtype=bool)
        words[:, :NUM_ACTIONS] = mask
        self._mask_words = words.view(np.uint64)
        # -- R7 for these rules: the rack codes that go out (increasing, with the run needed)
        self._win = INCREASING & (LONGEST_RUN >= self.rules.min_run_to_win)
        self._need_run = self.rules.min_run_to_win > 1

    def reshuffle(self, st: RackoState, rows: np.ndarray) -> None:
        """R6: the draw pile is empty (``s = K``): all discards but the top form the draw pile."""
        K = self.pile_size
        old = st.piles[rows, :K]
        new = np.empty_like(old)
        new[:, K - 1] = old[:, 0]  # the top card stays: the new discard pile
        if self.rules.reshuffle == "flip":
            new[:, : K - 1] = old[:, 1:]  # turned over: the bottom card becomes the top
        else:
            ctr = st.rng_counter[rows]
            order = np.argsort(permutation_keys(st.rng_key[rows], ctr, K - 1), axis=1, kind="stable")
            st.rng_counter[rows] = ctr
            order += np.arange(1, len(rows) * K, K)[:, None]  # flat index into old[:, 1:]
            new[:, : K - 1] = old.reshape(-1).take(order)  # (take_along_axis costs ~5x more here)
        st.piles[rows, :K] = new
        st.disc_n[rows] = 1
        st.pub[rows, 1] = False  # none of them is in the discard pile any more, but the top
        st.pub[rows, 1, new[:, K - 1]] = True

    def legal_action_mask(self, state: RackoState) -> np.ndarray:
        """``(B, 13)`` bool: the legal actions of the player to act in each game (R4).

        A read-only view of a per-phase table: copy it before writing into it."""
        # R4: the legal actions depend on the phase only (both piles are never empty when
        # needed: K >= 2 cards outside the racks, R1/R6). Rows are gathered as 16-byte words.
        return self._mask_words.take(state.phase, axis=0).view(bool)[:, :NUM_ACTIONS]

    def check_actions(self, state: RackoState, actions: np.ndarray) -> np.ndarray:
        """``actions`` as a ``(B,)`` int array if each is legal in its game (R4), else a
        ValueError naming the rows, their actions, phases and legal actions."""
        if not isinstance(state, RackoState):
            raise ValueError(f"state must be a RackoState, got {type(state).__name__}")
        a = check_actions(actions, state.disc_n.shape[0], NUM_ACTIONS)
        ok = self._legal_code.take(state.phase * NUM_ACTIONS + a)
        if not ok.all():
            bad = np.flatnonzero(~ok)
            ph = state.phase[bad]
            raise illegal_actions_error(self, bad, a, ph, self._mask_table[ph])
        return a

    def step(self, state: RackoState, actions: np.ndarray, check: bool = True) -> StepResult:
        """Play one action per game, in place: ``actions`` ``(B,)`` ints, legal in each game.

        Returns the :class:`~deckgym.core.StepResult` of the step (rewards, episode and round
        ends, points). ``check`` (default True): refuse the whole step with a ValueError if
        any action is out of range, of the wrong shape or dtype, or illegal in its game
        (rules: ``docs/RULES.md``). Loops that already sample from ``legal_action_mask`` may
        pass ``check=False`` to skip it; an illegal action is then undefined behaviour."""
        st = state
        if check and not isinstance(st, RackoState):
            self.check_actions(st, actions)  # raises, naming the problem
        if st.disc_n.shape[0] == 1:
            if check:
                if (type(actions) is np.ndarray and actions.shape == (1,) and actions.dtype.kind in "iu"
                        and isinstance(st, RackoState)):
                    a = int(actions[0])
                    if not (0 <= a < NUM_ACTIONS and self._legal_py[st.phase[0]][a]):
                        self.check_actions(st, actions)  # raises, naming the problem
                else:
                    a = int(self.check_actions(st, actions)[0])
            else:
                a = int(np.asarray(actions).reshape(-1)[0])
            return self._step_one(st, a)
        return self.step_batch(st, actions, check)

    def step_batch(self, st: RackoState, actions: np.ndarray, check: bool = True) -> StepResult:
        """``step`` by whole-batch array calls, for any ``B`` (``step`` gives ``B = 1`` to ``_step_one``)."""
        # Hot path: a few dozen whole-batch array calls, table lookups by ``code`` and flat
        # 1-D take/put (several times faster than 2-D fancy indexing); no branch per game.
        K = self.pile_size
        if check:
            actions = check_actions(actions, st.disc_n.shape[0], NUM_ACTIONS)
        c = self.step_buffers.get(st.disc_n.shape[0])
        code = st.phase * NUM_ACTIONS + actions
        if check and not self._legal_code.take(code).all():
            self.check_actions(st, actions)  # raises, naming the rows (nothing was changed yet)
        empty = st.disc_n == K  # the draw pile is empty (only possible in the choose phase)
        if np.count_nonzero(empty):
            need = self._t_draw.take(code) & empty  # R6: reshuffle when drawing from it
            if np.count_nonzero(need):
                self.reshuffle(st, np.flatnonzero(need))
        # Per-code table lookups, each into its own contiguous array (strided record fields
        # or int->bool casts in a fancy assignment cost 3-5x more).
        # One pile index serves every phase: the draw-pile top (draw), the discard top
        # (take) or the gap holding the card in hand (place), see racko_env.state.
        piles_flat = st.piles.reshape(-1)
        pidx = c.base_pile - st.disc_n
        pidx += self._t_take.take(code)
        card = piles_flat[pidx]
        p = st.player
        seat_idx = c.base_seat + p
        ridx = seat_idx * 10
        ridx += self._t_slot.take(code)
        racks_flat = st.racks.reshape(-1)
        old = racks_flat[ridx]  # signed (negative = public)
        is_slot = self._t_is_slot.take(code)
        # R5: the card goes into the slot (negative if it came from the discard pile: public)
        # and the old card onto the discard pile; other actions write the old values back.
        racks_flat[ridx] = np.where(is_slot, self._t_sign.take(code) * card, old)
        out = np.where(is_slot, np.abs(old), card)
        piles_flat[pidx] = out
        # Public flags (two planes of ``pub``): a card put on the discard pile is seen and in
        # it, a taken one stays seen and leaves it; a drawn one is untouched (index 0 dummy).
        touch = self._t_touch.take(code)
        fidx = c.base_pub0 + out * touch
        pubf = st.pub.reshape(-1)
        pubf[fidx] = touch
        fidx += self.deck_size + 1
        place = self._t_place.take(code)
        pubf[fidx] = place
        st.disc_n += self._t_discard_delta.take(code)
        self._t_next_phase.take(code, out=st.phase, mode="clip")
        st.turn += place
        if self.num_players == 2:  # (a new array: ``p`` is still the player who just played)
            st.player = np.bitwise_xor(p, place)
        else:
            st.player = self._next_seat.take(p + self._t_place_players.take(code))
        # R7: Rack-O of the player who just played? First "is the rack increasing": its 10
        # cards are copied into a flat buffer, adjacent differences > 0 are 10 bool bytes per
        # row (the 10th, crossing rows, forced True) read as one uint64 + one uint16.
        racks_flat.view(_VOID10).take(seat_idx, out=c.row_void, mode="clip")
        np.abs(c.row, out=c.row)
        np.subtract(c.row[1:], c.row[:-1], out=c.diff[:-1])
        np.greater(c.diff, c.up_thresh, out=c.up)  # threshold -128 at the 10th byte: forced True
        went = np.equal(c.up_lo, _ONES64)
        went &= place
        went &= c.up_hi == _ONES16
        if self._need_run and np.count_nonzero(went):  # R7 run: only for increasing racks
            w = np.flatnonzero(went)
            went[w] = self._win[rack_codes(c.row.reshape(-1, 10)[w])]
        end = went | ((st.turn >= self.rules.max_turns) & place)  # R9
        if not np.count_nonzero(end):
            return c.nothing
        b, P = end.shape[0], self.num_players
        res = result_zeros(b, P)
        res.round_over = end
        self.scoring.end_rounds(st, np.flatnonzero(end), p, went, res)
        return res

    def _step_one(self, st: RackoState, a: int) -> StepResult:
        """``step`` for a batch of one game (the AEC env) with Python scalars: the same rules,
        the same state (``tests/test_racko_fastpath.py`` compares it with ``step_batch`` step by
        step), a tenth of the numpy calls. Why it exists: the AEC env plays 1.90× as many
        steps per second with it as with ``step_batch`` at B = 1 (core+obs at B = 1: 1.88×;
        ``benchmarks/core_ab.py``, BENCHMARKS.md)."""
        K, P = self.pile_size, self.num_players
        c = self.step_buffers.get(1)
        ph, p, s = int(st.phase[0]), int(st.player[0]), int(st.disc_n[0])
        if ph == CHOOSE:
            if a == DRAW:
                if s == K:  # R6: the draw pile is empty
                    self.reshuffle(st, c.rows)
                st.phase[0] = PLACE_DRAWN
            else:  # TAKE: the discard top leaves the discard pile (seen already)
                st.pub[0, 1, st.piles[0, K - s]] = False
                st.disc_n[0] = s - 1
                st.phase[0] = PLACE_DISCARD
            return c.nothing
        piles, rack = st.piles[0], st.racks[0, p]
        card = int(piles[K - s - 1])  # the card in hand (the gap)
        if a == DISCARD_DRAWN:
            out = card
        else:  # R5: swap; public (negative) if the card came from the discard pile
            old = int(rack[a - 2])
            rack[a - 2] = -card if ph == PLACE_DISCARD else card
            out = -old if old < 0 else old
        piles[K - s - 1] = out
        st.disc_n[0] = s + 1
        st.pub[0, :, out] = True
        st.phase[0] = CHOOSE
        turn = int(st.turn[0]) + 1
        st.turn[0] = turn
        st.player[0] = (p + 1) % P
        # R7
        v = [x if x > 0 else -x for x in rack.tolist()]
        went = all(v[i] < v[i + 1] for i in range(9))
        if went and self._need_run:
            went = bool(self._win[rack_codes(np.array(v))])
        if not went and turn < self.rules.max_turns:  # R9
            return c.nothing
        res = result_zeros(1, P)
        res.round_over[0] = True
        self.scoring.end_rounds(st, c.rows, np.array([p]), np.array([went]), res)
        return res

