"""The batched Rack-O core: ``B`` games as numpy arrays, no Python loop over games.

See ``docs/CONTRACT.md`` for the interface and :mod:`racko_env.rules` for the rules and
the decisions taken on ambiguous points. Rule ids (R1–R12) refer to ``RULES.md``.

State layout (:class:`RackoState`, one row per game; ``P`` players, ``N`` cards,
``K = N − 10·P`` cards outside the racks). Default sizes: 2p 149 B, 3p 181 B, 4p 213 B
per game (limit 256).

=============  ===========  ========  =====================================================
field          shape        dtype     meaning
=============  ===========  ========  =====================================================
racks          (B, P, 10)   int8      card in each slot (slot 1 first). **Negative** = the
                                      card is publicly known to be there (the owner took it
                                      from the discard pile, R5); ``abs()`` is the card.
piles          (B, K+1)     int8      draw pile and discard pile in one array, growing from
                                      opposite ends. With ``s = disc_n`` and ``h = 1`` during
                                      a place phase (a card in hand) else 0: the draw pile is
                                      ``piles[0 : K-s-h]`` (top = last), the card in hand is
                                      ``piles[K-s-1]`` (a place phase), the discard pile is
                                      ``piles[K-s : K]`` (top = ``piles[K-s]``, bottom =
                                      ``piles[K-1]``). ``piles[K] = 0`` is a sentinel, so
                                      ``piles[K-s]`` is 0 when the discard pile is empty.
disc_n         (B,)         int8      s, discard pile size.
phase          (B,)         int8      0 choose, 1 place_discard (took the discard top),
                                      2 place_drawn (drew from the draw pile).
player         (B,)         int8      seat to act.
dealer         (B,)         int8      dealer of the round (R3); ``player`` starts at dealer+1.
turn           (B,)         int16     completed turns this round (R9).
pub            (B, 2, N+1)  bool      public flags of card c (index 0 unused): ``pub[:, 0]`` =
                                      was face up this round, ``pub[:, 1]`` = is in the
                                      discard pile now.
totals         (B, P)       int16     match totals (R12; team totals per seat with R11).
rng_key        (B,)         uint64    per-game random stream (``deckgym.rng``).
rng_counter    (B,)         uint64
=============  ===========  ========  =====================================================

Every card 1..N is exactly once in ``|racks| ∪ piles[:K]`` at every step (in a place phase
the card in hand sits in the gap between the two piles). The draw pile size is implied:
``K − s − h``, so the R6 reshuffle (draw pile empty ⇔ ``s = K`` in the choose phase)
always permutes exactly the ``K − 1`` cards under the discard top: a fixed-size shuffle.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from deckgym.core import BatchState, StepResult, zero_sum_win_rewards, check_core_options
from deckgym.rng import make_keys, permutation_keys, random_below, shuffled

from racko_env.rules import RackoRules

__all__ = ["RackoCore", "RackoState", "ACTION_NAMES", "PHASE_NAMES", "DRAW", "TAKE", "DISCARD_DRAWN"]

DRAW, TAKE, DISCARD_DRAWN = 0, 1, 12
NUM_ACTIONS = 13
_SAMPLE_SPAN = 110  # lcm of the legal-action counts 2, 10, 11 (RackoCore.sample_legal)
ACTION_NAMES = ("draw", "take_discard") + tuple(f"slot_{i}" for i in range(1, 11)) + ("discard_drawn",)
PHASE_NAMES = ("choose", "place_discard", "place_drawn")
CHOOSE, PLACE_DISCARD, PLACE_DRAWN = 0, 1, 2


# -- rack lookup tables (rules-independent, built at import) -------------------------------
# A rack is summarised by its 9 adjacent differences d_i = slot_{i+2} - slot_{i+1}, each
# clipped to {0: d <= 0 (order breaks), 1: d == 1 (consecutive), 2: d >= 2}, as the base-3
# number sum(c_i * 3**i). Every "increasing prefix / run" question is one table lookup.
_POW3 = (3 ** np.arange(9)).astype(np.int16)
_ONES64 = np.uint64(0x0101010101010101)
_ONES16 = np.uint16(0x0101)


def _rack_tables() -> tuple[np.ndarray, np.ndarray]:
    codes = np.arange(3**9)
    digits = (codes[:, None] // (3 ** np.arange(9))[None, :]) % 3  # (3^9, 9)
    up = digits > 0
    # R8: cards in increasing order counted from slot 1 (at least the first card).
    prefix = 1 + np.cumprod(up, axis=1).sum(axis=1)
    # R7/R10: longest run of consecutive numbers in adjacent slots, in cards.
    one = (digits == 1).astype(np.int64)
    run = np.zeros_like(one)
    cur = np.zeros(len(codes), dtype=np.int64)
    for i in range(9):  # over the 9 differences, at import
        cur = (cur + 1) * one[:, i]
        run[:, i] = cur
    longest = 1 + run.max(axis=1)
    return prefix.astype(np.int8), longest.astype(np.int8)


PREFIX_LEN, LONGEST_RUN = _rack_tables()
INCREASING = PREFIX_LEN == 10


def rack_codes(racks: np.ndarray) -> np.ndarray:
    """Base-3 code of racks ``(..., 10)`` (card values, positive) for the lookup tables."""
    d = np.diff(racks.astype(np.int16), axis=-1)
    return np.clip(d, 0, 2) @ _POW3.astype(np.int64)


def r8_points(rack: np.ndarray) -> np.ndarray:
    """R8 points of a player who did not go out: 5 × increasing prefix length."""
    return 5 * PREFIX_LEN[rack_codes(np.abs(np.asarray(rack)))].astype(np.int64)


def longest_run(rack: np.ndarray) -> np.ndarray:
    return LONGEST_RUN[rack_codes(np.abs(np.asarray(rack)))].astype(np.int64)


class _BatchTables:
    """Per-batch-size constants (flat index bases, a result with nothing to report)."""

    def __init__(self, core: "RackoCore", b: int) -> None:
        P, N, K = core.num_players, core.deck_size, core.pile_size
        self.rows = np.arange(b)
        self.base_pile = self.rows * (K + 1) + (K - 1)  # + (K-1) so that pidx = base - s (+1)
        self.base_seat = self.rows * P
        self.base_seat_col = self.base_seat[:, None]
        self.base_pub0 = self.rows * (2 * (N + 1))  # + N + 1: the second flag plane
        # Work buffers of the R7 test (see RackoCore.step).
        self.row = np.zeros(b * 10, np.int8)
        self.row_void = self.row.view(core._void10)
        self.diff = np.zeros(b * 10, np.int8)
        self.up = np.zeros(b * 10, bool)
        thresh = np.zeros((b, 10), np.int8)
        thresh[:, 9] = -128  # the difference crossing into the next row (>= -126) counts as up
        self.up_thresh = thresh.reshape(-1)
        self.up_lo = np.ndarray(shape=(b,), dtype=np.uint64, buffer=self.up, offset=0, strides=(10,))
        self.up_hi = np.ndarray(shape=(b,), dtype=np.uint16, buffer=self.up, offset=8, strides=(10,))

        # Observation buffers (see RackoCore.observe): a uint8 code of the whole row (only
        # the flags part is read) cast in one pass, and the head (cards, one-hots, counts,
        # turn, scores) as a separate contiguous code scaled by a tiled scale vector.
        H, O = core._obs_off["seen"], core.obs_size
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

        self.alive = np.ones((b, P), bool)
        self.alive.flags.writeable = False

        def zeros(shape: tuple, dtype: Any) -> np.ndarray:
            z = np.zeros(shape, dtype)
            z.flags.writeable = False
            return z

        self.nothing = StepResult(
            rewards=zeros((b, P), np.float32), terminated=zeros(b, bool), truncated=zeros(b, bool),
            round_over=zeros(b, bool), round_points=zeros((b, P), np.int32), total_points=zeros((b, P), np.int32),
            winners=zeros((b, P), bool),
            extra={"own_points": zeros((b, P), np.int32), "went_out": zeros((b, P), bool),
                   "run_bonus": zeros((b, P), np.int32)},
        )


@dataclass
class RackoState(BatchState):
    """State of ``B`` Rack-O games; see the module docstring for the field layout."""

    racks: np.ndarray
    piles: np.ndarray
    disc_n: np.ndarray
    phase: np.ndarray
    player: np.ndarray
    dealer: np.ndarray
    turn: np.ndarray
    pub: np.ndarray
    totals: np.ndarray
    rng_key: np.ndarray
    rng_counter: np.ndarray


class RackoCore:
    """Batched Rack-O (``docs/CONTRACT.md``). ``episode``: one ``"round"`` or a ``"match"``
    (R12); ``reward``: ``"win"`` (zero-sum at the episode end) or ``"points"`` (the round
    points when a round ends; team points with R11)."""

    obs_version = 1
    action_names = ACTION_NAMES
    phase_names = PHASE_NAMES
    num_actions = NUM_ACTIONS

    def __init__(self, rules: RackoRules | None = None, episode: str = "round", reward: str = "win") -> None:
        if rules is None:
            rules = RackoRules()
        if not isinstance(rules, RackoRules):
            raise TypeError(f"rules must be a RackoRules, got {type(rules).__name__}")
        check_core_options(episode, reward)
        self.rules = rules
        self.episode = episode
        self.reward = reward
        P = self.num_players = rules.num_players
        N = self.deck_size = int(rules.deck_size)
        K = self.pile_size = rules.pile_size
        self._batch_cache: dict[int, _BatchTables] = {}

        # -- action tables, indexed by phase * 13 + action --------------------------------
        codes = np.arange(3 * NUM_ACTIONS)
        ph, a = codes // NUM_ACTIONS, codes % NUM_ACTIONS
        choose = ph == CHOOSE
        is_slot = (ph != CHOOSE) & (a >= 2) & (a <= 11)
        self._t_draw = choose & (a == DRAW)
        self._t_take = (choose & (a == TAKE)).astype(np.int8)
        self._t_slot = np.where(is_slot, a - 2, 0).astype(np.intp)
        self._t_isslot = is_slot
        # Signed multiplier of the card put into a rack: -1 marks it public (from the discard, R5).
        self._t_sign = np.where(is_slot, np.where(ph == PLACE_DISCARD, -1, 1), 0).astype(np.int8)
        place = (ph != CHOOSE) & (is_slot | (a == DISCARD_DRAWN))
        self._t_place = place
        self._t_place_p = np.where(place, P, 0).astype(np.int8)
        self._next_seat = (np.arange(2 * P) + np.arange(2 * P) // P) % P  # seat p (+P if the turn ends)
        # Public flags: a discarded card becomes seen and in the discard pile; a taken one
        # stays seen and leaves it; a drawn card is not touched (index 0 is a dummy).
        self._t_touch = place | (choose & (a == TAKE))
        self._t_ds = np.select([choose & (a == TAKE), place], [-1, 1], 0).astype(np.int8)
        self._t_next_phase = np.select(
            [choose & (a == DRAW), choose & (a == TAKE), place], [PLACE_DRAWN, PLACE_DISCARD, CHOOSE], ph
        ).astype(np.int8)
        # -- legal actions by phase (R4): draw/take; a slot; a slot or discard the drawn card
        mask = np.zeros((3, NUM_ACTIONS), dtype=bool)
        mask[CHOOSE, [DRAW, TAKE]] = True
        mask[PLACE_DISCARD, 2:12] = True
        mask[PLACE_DRAWN, 2:13] = True
        self._mask_table = mask
        words = np.zeros((3, 16), dtype=bool)
        words[:, :NUM_ACTIONS] = mask
        self._mask_words = words.view(np.uint64)
        # sample_legal: u uniform on [0, 110) and 110 = lcm(2, 10, 11), so u mod (legal count)
        # is exactly uniform; the table maps (kind of mask, u) to the action.
        kinds = [(2, 10), (0, 2), (2, 11)]  # place_discard, choose, place_drawn: first legal, count
        self._sample_table = np.concatenate([lo + np.arange(_SAMPLE_SPAN) % n for lo, n in kinds]).astype(np.int64)
        # -- rack tables for these rules (R7, R8, R10) ------------------------------------
        self._win = INCREASING & (LONGEST_RUN >= rules.min_run_to_win)
        self._need_run = rules.min_run_to_win > 1
        self._void10 = np.dtype((np.void, 10))
        bonus = np.array([rules.run_bonus(r) for r in range(11)], dtype=np.int64)
        self._bonus_by_run = bonus if rules.run_bonus_active else np.zeros(11, dtype=np.int64)
        # -- deal (R3): seat s at offset j = (s - dealer - 1) % P from the dealer's left gets
        # deck[j], deck[j + P], ... into slots 10, 9, ...; the next card is turned up.
        deal_idx = np.zeros((P, P, 10), dtype=np.intp)
        for dealer in range(P):
            for s in range(P):
                j = (s - dealer - 1) % P
                deal_idx[dealer, s] = [j + (9 - i) * P for i in range(10)]
        self._deal_idx = deal_idx.reshape(P, P * 10)
        self._pile_idx = N - 1 - np.arange(K)  # piles[K-1] = deck[10P] (turned up), then draw pile
        # -- observation (layout v1, documented in racko_env.env) ------------------------------
        self._rot = (np.arange(P)[:, None] + np.arange(P)[None, :]) % P  # ego order of seats
        sizes = [("rack", 10), ("opp_known", 10 * (P - 1)), ("phase", 3), ("to_move", P), ("hand", 1),
                 ("discard_top", 1), ("draw_size", 1), ("discard_size", 1), ("turn", 1), ("scores", P),
                 ("seen", N), ("in_discard", N)]
        self.obs_slices: dict[str, slice] = {}
        off = 0
        for name, n in sizes:
            self.obs_slices[name] = slice(off, off + n)
            off += n
        self.obs_size = off
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

    # -- helpers ------------------------------------------------------------------------------
    def _rows(self, b: int) -> np.ndarray:
        return self._cache(b).rows

    def _cache(self, b: int) -> "_BatchTables":
        c = self._batch_cache.get(b)
        if c is None:
            c = self._batch_cache[b] = _BatchTables(self, b)
        return c

    def _empty(self, b: int) -> RackoState:
        P, N, K = self.num_players, self.deck_size, self.pile_size
        return RackoState(
            racks=np.zeros((b, P, 10), np.int8), piles=np.zeros((b, K + 1), np.int8),
            disc_n=np.zeros(b, np.int8), phase=np.zeros(b, np.int8), player=np.zeros(b, np.int8),
            dealer=np.zeros(b, np.int8), turn=np.zeros(b, np.int16), pub=np.zeros((b, 2, N + 1), bool),
            totals=np.zeros((b, P), np.int16), rng_key=np.zeros(b, np.uint64), rng_counter=np.zeros(b, np.uint64),
        )

    def _deal_rows(self, st: RackoState, rows: np.ndarray, dealer: np.ndarray) -> None:
        """R3: shuffle and deal a new round in games ``rows`` with the given dealers."""
        n, P, K = len(rows), self.num_players, self.pile_size
        ctr = st.rng_counter[rows]
        perm = shuffled(st.rng_key[rows], ctr, self.deck_size)
        st.rng_counter[rows] = ctr
        deck = (perm + 1).astype(np.int8)
        st.racks[rows] = np.take_along_axis(deck, self._deal_idx[dealer], axis=1).reshape(n, P, 10)
        piles = deck[:, self._pile_idx]
        st.piles[rows, :K] = piles
        st.disc_n[rows] = 1
        st.phase[rows] = CHOOSE
        st.dealer[rows] = dealer
        st.player[rows] = (dealer + 1) % P
        st.turn[rows] = 0
        st.pub[rows] = False
        st.pub[rows[:, None], :, piles[:, K - 1 : K]] = True

    def _reshuffle(self, st: RackoState, rows: np.ndarray) -> None:
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

    # -- contract -----------------------------------------------------------------------------
    def init(self, batch: int, seed: int, game_ids: np.ndarray | None = None) -> RackoState:
        if game_ids is None:
            game_ids = np.arange(batch)
        game_ids = np.asarray(game_ids)
        if game_ids.shape != (batch,):
            raise ValueError(f"game_ids must have shape ({batch},), got {game_ids.shape}")
        st = self._empty(batch)
        st.rng_key[:] = make_keys(seed, game_ids)
        self.reset_where(st, np.ones(batch, dtype=bool))
        return st

    def reset_where(self, state: RackoState, mask: np.ndarray) -> None:
        rows = np.flatnonzero(mask)
        if len(rows) == 0:
            return
        ctr = state.rng_counter[rows]
        dealer = random_below(state.rng_key[rows], ctr, self.num_players)  # R3: first dealer at random
        state.rng_counter[rows] = ctr
        state.totals[rows] = 0
        self._deal_rows(state, rows, dealer)

    def current_player(self, state: RackoState) -> np.ndarray:
        return state.player.astype(np.int64)

    def phase(self, state: RackoState) -> np.ndarray:
        return state.phase.astype(np.int64)

    def alive(self, state: RackoState) -> np.ndarray:
        return self._cache(state.disc_n.shape[0]).alive  # nobody is eliminated in Rack-O (read-only)

    def legal_action_mask(self, state: RackoState) -> np.ndarray:
        # R4: the legal actions depend on the phase only (both piles are never empty when
        # needed: K >= 2 cards outside the racks, R1/R6). Rows are gathered as 16-byte words.
        return self._mask_words.take(state.phase, axis=0).view(bool)[:, :NUM_ACTIONS]

    def sample_legal(self, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """A uniformly random legal action per row, exactly uniform: ``(B,)`` int64.

        ``mask``: a ``(B, 13)`` mask of this core (``legal_action_mask``; R4: its legal
        actions are 0-1, 2-11 or 2-12, told apart by columns 0 and 12). One uint16 draw per
        row from ``rng`` (uniform on [0, 110), 110 = lcm(2, 10, 11)) and a table lookup: about
        a tenth of ``argmax(rng.random((B, 13)) * mask, axis=1)``.
        """
        u = rng.integers(0, _SAMPLE_SPAN, size=mask.shape[0], dtype=np.uint16)
        key = np.multiply(mask[:, 0], _SAMPLE_SPAN, dtype=np.intp)
        key += np.multiply(mask[:, DISCARD_DRAWN], 2 * _SAMPLE_SPAN, dtype=np.intp)
        key += u
        return self._sample_table.take(key)

    def step(self, state: RackoState, actions: np.ndarray) -> StepResult:
        # Hot path: a few dozen whole-batch array calls, table lookups by ``code`` and flat
        # 1-D take/put (several times faster than 2-D fancy indexing); no branch per game.
        st = state
        K = self.pile_size
        if st.disc_n.shape[0] == 1:
            return self._step_one(st, int(np.asarray(actions).reshape(-1)[0]))
        c = self._cache(st.disc_n.shape[0])
        code = st.phase * NUM_ACTIONS + actions
        empty = st.disc_n == K  # the draw pile is empty (only possible in the choose phase)
        if np.count_nonzero(empty):
            need = self._t_draw.take(code) & empty  # R6: reshuffle when drawing from it
            if np.count_nonzero(need):
                self._reshuffle(st, np.flatnonzero(need))
        # Per-code table lookups, each into its own contiguous array (strided record fields
        # or int->bool casts in a fancy assignment cost 3-5x more).
        # One pile index serves every phase: the draw-pile top (draw), the discard top
        # (take) or the gap holding the card in hand (place), see the module docstring.
        pf = st.piles.reshape(-1)
        pidx = c.base_pile - st.disc_n
        pidx += self._t_take.take(code)
        card = pf[pidx]
        p = st.player
        seat_idx = c.base_seat + p
        ridx = seat_idx * 10
        ridx += self._t_slot.take(code)
        rf = st.racks.reshape(-1)
        old = rf[ridx]  # signed (negative = public)
        is_slot = self._t_isslot.take(code)
        # R5: the card goes into the slot (negative if it came from the discard pile: public)
        # and the old card onto the discard pile; other actions write the old values back.
        rf[ridx] = np.where(is_slot, self._t_sign.take(code) * card, old)
        out = np.where(is_slot, np.abs(old), card)
        pf[pidx] = out
        # Public flags (two planes of ``pub``): a card put on the discard pile is seen and in
        # it, a taken one stays seen and leaves it; a drawn one is untouched (index 0 dummy).
        touch = self._t_touch.take(code)
        fidx = c.base_pub0 + out * touch
        pubf = st.pub.reshape(-1)
        pubf[fidx] = touch
        fidx += self.deck_size + 1
        place = self._t_place.take(code)
        pubf[fidx] = place
        st.disc_n += self._t_ds.take(code)
        self._t_next_phase.take(code, out=st.phase, mode="clip")
        st.turn += place
        if self.num_players == 2:  # (a new array: ``p`` is still the player who just played)
            st.player = np.bitwise_xor(p, place)
        else:
            st.player = self._next_seat.take(p + self._t_place_p.take(code))
        # R7: Rack-O of the player who just played? First "is the rack increasing": its 10
        # cards are copied into a flat buffer, adjacent differences > 0 are 10 bool bytes per
        # row (the 10th, crossing rows, forced True) read as one uint64 + one uint16.
        rf.view(self._void10).take(seat_idx, out=c.row_void, mode="clip")
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
        res = StepResult(
            rewards=np.zeros((b, P), np.float32), terminated=np.zeros(b, bool), truncated=np.zeros(b, bool),
            round_over=end, round_points=np.zeros((b, P), np.int32), total_points=np.zeros((b, P), np.int32),
            winners=np.zeros((b, P), bool),
            extra={"own_points": np.zeros((b, P), np.int32), "went_out": np.zeros((b, P), bool),
                   "run_bonus": np.zeros((b, P), np.int32)},
        )
        self._end_rounds(st, np.flatnonzero(end), p, went, res)
        return res

    def _step_one(self, st: RackoState, a: int) -> StepResult:
        """``step`` for a batch of one game (the AEC env) with Python scalars: the same rules,
        the same state (tests compare it with the batched path step by step), a tenth of the
        numpy calls."""
        K, P = self.pile_size, self.num_players
        c = self._cache(1)
        ph, p, s = int(st.phase[0]), int(st.player[0]), int(st.disc_n[0])
        if ph == CHOOSE:
            if a == DRAW:
                if s == K:  # R6: the draw pile is empty
                    self._reshuffle(st, c.rows)
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
        res = StepResult(
            rewards=np.zeros((1, P), np.float32), terminated=np.zeros(1, bool), truncated=np.zeros(1, bool),
            round_over=np.ones(1, bool), round_points=np.zeros((1, P), np.int32),
            total_points=np.zeros((1, P), np.int32), winners=np.zeros((1, P), bool),
            extra={"own_points": np.zeros((1, P), np.int32), "went_out": np.zeros((1, P), bool),
                   "run_bonus": np.zeros((1, P), np.int32)},
        )
        self._end_rounds(st, c.rows, np.array([p]), np.array([went]), res)
        return res

    def _end_rounds(self, st: RackoState, e: np.ndarray, p: np.ndarray, went: np.ndarray, res: StepResult) -> None:
        """R8–R12 for the games ``e`` whose round just ended (``p``: who played)."""
        P, n = self.num_players, len(e)
        racks = np.abs(st.racks[e].astype(np.int16))
        codes = rack_codes(racks)  # (n, P)
        went_e = went[e]
        went_p = np.zeros((n, P), bool)
        went_p[np.arange(n), p[e]] = went_e
        bonus = np.where(went_p, self._bonus_by_run[LONGEST_RUN[codes]], 0)  # R10 / R11
        own = np.where(went_p, 75, 5 * PREFIX_LEN[codes].astype(np.int64)) + bonus  # R8
        if self.rules.partners:  # R11: team score = sum, both members carry it
            pts = own[:, [0, 1, 0, 1]] + own[:, [2, 3, 2, 3]]
            round_win = went_p | went_p[:, [2, 3, 0, 1]]
        else:
            pts = own
            round_win = went_p
        # R9: no Rack-O: the most round points win (ties share).
        round_win = np.where(went_e[:, None], round_win, pts == pts.max(axis=1, keepdims=True))
        totals = st.totals[e].astype(np.int64) + pts
        st.totals[e] = totals
        res.round_points[e] = pts
        res.total_points[e] = totals
        res.extra["own_points"][e] = own
        res.extra["went_out"][e] = went_p
        res.extra["run_bonus"][e] = bonus
        if self.episode == "round":
            res.terminated[e] = went_e
            res.truncated[e] = ~went_e
            winners = round_win
            ended = e
        else:  # R12: the match ends once a player (team) reaches the target
            over = (totals >= self.rules.target_score).any(axis=1)
            res.terminated[e] = over
            winners = (totals == totals.max(axis=1, keepdims=True))[over]
            ended = e[over]
            nxt = e[~over]
            if len(nxt):  # next round, the deal passes to the left (R3)
                self._deal_rows(st, nxt, (st.dealer[nxt].astype(np.int64) + 1) % P)
        res.winners[ended] = winners
        if self.reward == "win":
            res.rewards[ended] = zero_sum_win_rewards(winners)
        else:
            res.rewards[e] = pts

    # -- observation --------------------------------------------------------------------------
    def observe(self, state: RackoState, seat: np.ndarray | int, out: np.ndarray | None = None) -> np.ndarray:
        """``(B, obs_size)`` float32 ego-centric observations (layout in ``racko_env.env``).

        ``out``: an optional C-contiguous float32 buffer to write into (saves the allocation
        and its page faults when the caller reuses one buffer, e.g. a vector env)."""
        st = state
        K, P = self.pile_size, self.num_players
        if st.disc_n.shape[0] == 1 and out is None:
            return self._observe_one(st, int(np.asarray(seat).reshape(-1)[0]))
        b, N = st.disc_n.shape[0], self.deck_size
        c = self._cache(b)
        if not isinstance(seat, (int, np.integer)):
            seat = np.asarray(seat)
        # Every block is written as one 1-D copy of n-byte items (``_BatchTables`` views):
        # a 2-D column-block write would pay one inner loop per row. Cards and counts are
        # assembled as uint8 codes, then cast / scaled in contiguous passes.
        rv = st.racks.reshape(-1).view(self._void10)  # one item per (game, seat) rack
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
        obs = np.empty((b, self.obs_size), np.float32) if out is None else out
        np.copyto(obs, c.obs_code)
        np.multiply(c.head_code_k, c.head_scale, out=c.head_f_k)
        np.multiply(st.turn, self._obs_turn_scale, out=c.turn_col)
        tf = st.totals.reshape(-1)
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
        totals = st.totals[0].tolist()
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
        """Named, decoded fields of a batch of observations ``(B, obs_size)`` (layout v1)."""
        obs = np.atleast_2d(np.asarray(obs, dtype=np.float32))
        if obs.shape[1] != self.obs_size:
            raise ValueError(f"observations must have {self.obs_size} columns, got {obs.shape[1]}")
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

    # -- readable state -----------------------------------------------------------------------
    def racks(self, state: RackoState) -> np.ndarray:
        """``(B, P, 10)`` card values (slot 1 first)."""
        return np.abs(state.racks.astype(np.int64))

    def piles(self, state: RackoState, b: int = 0) -> tuple[list[int], list[int], int]:
        """Game ``b``'s draw pile (top first), discard pile (bottom first) and card in hand (0 = none)."""
        K = self.pile_size
        s = int(state.disc_n[b])
        h = int(state.phase[b] != CHOOSE)
        pl = state.piles[b].astype(int)
        draw = pl[: K - s - h][::-1].tolist()
        discard = pl[K - s : K][::-1].tolist()
        hand = int(pl[K - s - 1]) if h else 0
        return draw, discard, hand

    def state_dict(self, state: RackoState, b: int = 0) -> dict[str, Any]:
        draw, discard, hand = self.piles(state, b)
        racks = state.racks[b].astype(int)
        return {
            "rules": self.rules,
            "racks": np.abs(racks).tolist(),
            "known_slots": [[i + 1 for i in range(10) if racks[p, i] < 0] for p in range(self.num_players)],
            "draw_pile": draw,
            "discard_pile": discard,
            "hand": hand,
            "phase": PHASE_NAMES[int(state.phase[b])],
            "player": int(state.player[b]),
            "dealer": int(state.dealer[b]),
            "turn": int(state.turn[b]),
            "seen": [c for c in np.flatnonzero(state.pub[b, 0]).tolist() if c],
            "totals": state.totals[b].astype(int).tolist(),
            "rng_key": int(state.rng_key[b]),
            "rng_counter": int(state.rng_counter[b]),
        }

    # -- explicit deals -----------------------------------------------------------------------
    _DEAL_KEYS = ("racks", "draw_pile", "discard_pile", "first_player", "scores")

    def deal(self, seed: int, options: dict) -> RackoState:
        """One game from an explicit deal (see ``racko_env.env`` docs, "Explicit deals").

        ``options``: ``racks`` (P lists of 10 cards, slot 1 first), ``draw_pile`` (top
        first), ``discard_pile`` (bottom first, top last), ``first_player`` (seat), ``scores``
        (match totals, per seat). Every key is optional; unlisted cards are shuffled with
        ``seed`` and dealt to the racks (if not given) then put beneath the listed draw-pile
        cards; without a discard pile the top draw-pile card is turned up (R3).
        """
        if not isinstance(options, dict):
            raise ValueError(f"options must be a dict, got {type(options).__name__}")
        for k in options:
            if k not in self._DEAL_KEYS:
                raise ValueError(f"unknown option key {k!r}; valid keys: {', '.join(self._DEAL_KEYS)}")
        P, N, K = self.num_players, self.deck_size, self.pile_size
        used: dict[int, str] = {}

        def cards(name: str, value: Any) -> list[int]:
            if isinstance(value, np.ndarray):
                value = value.tolist()
            if not isinstance(value, (list, tuple)):
                raise ValueError(f"{name} must be a list of cards, got {type(value).__name__}")
            out = []
            for c in value:
                if isinstance(c, (bool, np.bool_)) or not isinstance(c, (int, np.integer)):
                    raise ValueError(f"{name}: card {c!r} is not an int")
                c = int(c)
                if not 1 <= c <= N:
                    raise ValueError(f"{name}: card {c} out of range 1..{N}")
                if c in used:
                    raise ValueError(f"{name}: card {c} given twice (also in {used[c]})")
                used[c] = name
                out.append(c)
            return out

        racks = None
        if "racks" in options:
            rk = options["racks"]
            if isinstance(rk, np.ndarray):
                rk = rk.tolist()
            if not isinstance(rk, (list, tuple)) or len(rk) != P:
                n = len(rk) if isinstance(rk, (list, tuple)) else type(rk).__name__
                raise ValueError(f"racks: need {P} racks (one per seat), got {n}")
            racks = []
            for i, r in enumerate(rk):
                rr = cards(f"racks[{i}]", r)
                if len(rr) != 10:
                    raise ValueError(f"racks[{i}]: a rack has 10 cards, got {len(rr)}")
                racks.append(rr)
        draw = cards("draw_pile", options.get("draw_pile", []))
        discard = None
        if "discard_pile" in options:
            discard = cards("discard_pile", options["discard_pile"])
            if not discard:
                raise ValueError("discard_pile: must hold at least one card (R3 turns one up)")
        if "first_player" in options:
            fp = options["first_player"]
            if isinstance(fp, (bool, np.bool_)) or not isinstance(fp, (int, np.integer)) or not 0 <= fp < P:
                raise ValueError(f"first_player must be a seat in 0..{P - 1}, got {fp!r}")
        scores = None
        if "scores" in options:
            sc = options["scores"]
            if isinstance(sc, np.ndarray):
                sc = sc.tolist()
            if (not isinstance(sc, (list, tuple)) or len(sc) != P
                    or not all(isinstance(x, (int, np.integer)) and not isinstance(x, bool) and 0 <= x <= 30000 for x in sc)):
                raise ValueError(f"scores: need {P} ints in 0..30000 (one total per seat), got {sc!r}")
            scores = [int(x) for x in sc]
        pile_cards = len(draw) + (len(discard) if discard is not None else 0)
        if pile_cards > K:
            raise ValueError(f"draw_pile/discard_pile: {pile_cards} cards listed but only {K} are outside the racks")

        st = self._empty(1)
        st.rng_key[:] = make_keys(int(seed), np.zeros(1, dtype=np.int64))
        ctr = st.rng_counter
        if "first_player" in options:
            dealer = (int(options["first_player"]) - 1) % P
        else:
            dealer = int(random_below(st.rng_key, ctr, P)[0])
        unlisted = np.array([c for c in range(1, N + 1) if c not in used], dtype=np.int64)
        if len(unlisted):
            order = np.argsort(permutation_keys(st.rng_key, ctr, len(unlisted))[0], kind="stable")
            unlisted = unlisted[order]
        rest = unlisted.tolist()
        if racks is None:
            deck = rest[: 10 * P]
            rest = rest[10 * P:]
            racks = [[deck[j] for j in self._deal_idx[dealer][s * 10:(s + 1) * 10]] for s in range(P)]
        draw = draw + rest
        if discard is None:
            discard, draw = [draw[0]], draw[1:]
        s, d = len(discard), len(draw)
        assert s + d == K
        piles = np.zeros(K + 1, np.int64)
        piles[K - s : K] = discard[::-1]
        piles[:d] = draw[::-1]
        st.racks[0] = np.array(racks, dtype=np.int8)
        st.piles[0] = piles
        st.disc_n[0] = s
        st.dealer[0] = dealer
        st.player[0] = (dealer + 1) % P
        st.pub[0, :, discard] = True
        if scores is not None:
            st.totals[0] = scores
        return st
