"""The vectorised Least Score core (rules L1–L10 of ``docs/RULES.md``).

One :class:`LeastScoreCore` plays ``B`` games at once; the state is a
:class:`LeastScoreState` of fixed-shape numpy arrays (first axis = game). Nothing loops
over games in Python: the games that need a rare transition (a round end, a new deal,
an L6 reshuffle) are handled together with fancy indexing on their indices. Work arrays
are laid out so that numpy's inner loops run over games (per-player arrays as (P, n),
hand bytes as 1-D strided views), since a 2-D op with a short inner axis pays numpy's
per-row overhead.

Each seat's legal-discard mask (L5) is recomputed only when its hand changes (after its
draw), and the 38-bit mask of the player to move is kept in the state, so
``legal_action_mask`` is a single ``unpackbits``. :class:`LeastScoreCore` ties together
the pieces, one module per concept:

* :mod:`leastscore_env.state`: the state layout, the card-word representation, action ids;
* :mod:`leastscore_env.tables`: lookup tables on card words, seats and actions;
* :mod:`leastscore_env.legality`: the legal discard groups (L5);
* :mod:`leastscore_env.dealing`: deals (L3), the reshuffle (L6) and explicit deals;
* :mod:`leastscore_env.turn`: the turn (L4, L7's declaration, L10's cap);
* :mod:`leastscore_env.scoring`: round and match ends (L8–L10);
* :mod:`leastscore_env.observation`: observations and ``obs_view``;
* :mod:`leastscore_env.sampling`: uniformly random legal actions.

The full state as one flat float32 vector (``state_array``, the PettingZoo env's ``state()``,
for centralised critics: every card, hidden or not), absolute seats, ``state_slices`` giving
each field's place (``P`` players; card sets are 52 flags indexed by card id,
:mod:`leastscore_env.cards`):

============  =====  ===============================================================
field         size   encoding
============  =====  ===============================================================
``hands``     P·52   seat 0 first: 1 if the seat holds that card
``known``     P·52   1 if the seat is publicly known to hold it (taken from the floor)
``floor``     52     the floor of the player to move (the previous player's discards)
``pending``   52     the mover's discards this turn (draw phase; the next floor)
``deck``      52     the deck, top first: (card id + 1) / 52 (0 past its end)
``dead``      52     the dead pile (L4, L6)
``seen``      52     every card face up this round
``scores``    P      totals / elimination_score (L9; a total may pass it by one round's
                     points, so ``state_high`` is above 1 there)
``alive``     P      1 if the seat is still in the game (L9)
``player``    P      one-hot: the seat to move
``first``     P      one-hot: the seat that started the round
``phase``     2      one-hot: discard (or declare), draw (L4)
``turn``      1      completed turns this round / max_turns (L10)
============  =====  ===============================================================
"""

from __future__ import annotations

import numpy as np

from deckgym.core import ObsChoice, RebuiltWhenUnpickled, SizeCache, StepResult, check_core_options, check_game_index
from leastscore_env.cards import NUM_CARDS, PAD, card_str
from leastscore_env.dealing import LeastScoreDealing
from leastscore_env.legality import dense_legal_lists, dense_legal_tables, legal_of
from leastscore_env.observation import LeastScoreObservation
from leastscore_env.rules import LeastScoreRules
from leastscore_env.sampling import LeastScoreSampling
from leastscore_env.scoring import LeastScoreScoring
from leastscore_env.state import ACTION_NAMES, HAND_MAX, NUM_ACTIONS, PHASE_NAMES, LeastScoreState, empty_state
from leastscore_env.tables import ALIVE_SEATS, BYTE_BITS, BYTE_VALUE, N_ALIVE
from leastscore_env.turn import LeastScoreTurns, result_zeros

__all__ = ["LeastScoreCore"]

_I64 = np.int64


class LeastScoreCore(ObsChoice, LeastScoreDealing, LeastScoreTurns, LeastScoreScoring, LeastScoreObservation, LeastScoreSampling,
                     RebuiltWhenUnpickled):
    """Batched Least Score (see the module docstring and ``docs/CONTRACT.md``)."""

    num_actions = NUM_ACTIONS
    action_names = ACTION_NAMES
    phase_names = PHASE_NAMES
    obs_version = 1

    #: ``"default"`` or ``"infostate"`` (:mod:`leastscore_env.infostate`: a ``LeastScoreInfoCore``)
    obs = "default"
    _constructor_args = ("rules", "episode", "reward", "obs")

    _infostate_core = "leastscore_env.infostate:LeastScoreInfoCore"

    def __init__(self, rules: LeastScoreRules | None = None, episode: str = "round", reward: str = "win",
                 obs: str = "default") -> None:
        if obs != self.obs:
            raise ValueError(f"{type(self).__name__} gives obs={self.obs!r} observations, not {obs!r}")
        rules = LeastScoreRules() if rules is None else rules
        if not isinstance(rules, LeastScoreRules):
            raise TypeError(f"rules must be a LeastScoreRules, got {type(rules).__name__}")
        check_core_options(episode, reward)
        self.rules = rules
        self.episode = episode
        self.reward = reward
        P = self.num_players = rules.num_players
        self._legal_tables = dense_legal_tables(tuple(rules.sequence_lengths), bool(rules.sequence_same_suit))
        self._legal_lists = dense_legal_lists(tuple(rules.sequence_lengths), bool(rules.sequence_same_suit))
        self._full_alive = (1 << P) - 1
        self._alive_bool = np.ascontiguousarray(ALIVE_SEATS[:, :P])
        self._alive_weights = (1 << np.arange(P)).astype(np.int64)
        self._ego = (np.arange(P)[:, None] + np.arange(P)[None, :]) % P  # ego[e] = seats seen from e
        self._eye = np.eye(P, dtype=bool)
        self._arangeP = np.arange(P, dtype=_I64)
        self._arangeP_col = self._arangeP[:, None].copy()
        self._alive_bool_T = np.ascontiguousarray(self._alive_bool.T)  # (P, 256)
        self._step_buffers = SizeCache(self._make_bases)
        self._mask_rows: dict[int, np.ndarray] = {}
        self._last_mask: tuple[np.ndarray, np.ndarray] | None = None  # (mask, its (B*64,) base)
        self._nothing = result_zeros(1, P, writeable=False)
        self._init_deal_tables()
        self._init_scoring_tables()
        self._init_observation()
        self._init_state_array()

    # ------------------------------------------------------------------ helpers
    def _make_bases(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The step's per-batch-size bases: (arange(n), arange(n) * P, arange(n) * 53)."""
        ar = np.arange(n, dtype=_I64)
        return ar, ar * self.num_players, ar * (NUM_CARDS + 1)

    def _flat_rows(self, g: np.ndarray) -> np.ndarray:
        """The rows of games ``g`` in a flattened (B, P) array: ``(len(g) * P,)`` intp."""
        fi = g[:, None] * self.num_players
        fi = fi + self._arangeP
        return fi.reshape(-1)

    def _flat_rows_T(self, g: np.ndarray) -> np.ndarray:
        """The rows of games ``g`` in a flattened (B, P) array, as (P, len(g)) intp."""
        fi = g * self.num_players
        return fi + self._arangeP_col

    def _legal_of(self, w: np.ndarray) -> np.ndarray:
        """L5: the legal-discard bits (int64) of sorted hand words ``w`` (any shape)."""
        return legal_of(self._legal_tables, w)

    def _empty(self, B: int) -> LeastScoreState:
        return empty_state(B, self.num_players)

    # ------------------------------------------------------------------ contract: queries
    def current_player(self, state: LeastScoreState) -> np.ndarray:
        """``(B,)`` int64: the seat to act in each game."""
        return state.player.astype(_I64)

    def phase(self, state: LeastScoreState) -> np.ndarray:
        """``(B,)`` int64: 0 = discard or declare, 1 = draw (L4): an index into ``phase_names``."""
        return state.phase.astype(_I64)

    def alive(self, state: LeastScoreState) -> np.ndarray:
        """``(B, P)`` bool: the seats still in the game (L9 eliminates)."""
        al = state.alive
        if al.shape[0] == 1:  # B = 1: a copy of one table row (a slice, no fancy indexing)
            k = int(al[0])
            return self._alive_bool[k : k + 1].copy()
        return self._alive_bool[al]

    def hand_cards(self, state: LeastScoreState) -> np.ndarray:
        """(B, P, 5) int64 card ids in canonical order, -1 = empty slot."""
        h = state.hands.view(np.uint8).reshape(state.hands.shape + (8,))[..., :HAND_MAX].astype(_I64)
        h[h == PAD] = -1
        return h

    def hand_totals(self, state: LeastScoreState) -> np.ndarray:
        """(B, P) L1 hand totals."""
        return BYTE_VALUE[state.hands.view(np.uint8).reshape(state.hands.shape + (8,))].sum(axis=2)

    def can_declare(self, state: LeastScoreState) -> np.ndarray:
        """(B,) bool: L7 -- every player still in the game has played a turn this round."""
        return state.turn >= N_ALIVE[state.alive]

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
        bits = np.unpackbits(np.ascontiguousarray(m, dtype=_I64).view(np.uint8), bitorder="little")
        mask = bits.view(bool).reshape(B, 64)[:, :NUM_ACTIONS]
        self._last_mask = (mask, bits)  # sample_legal packs such a mask back in one call
        return mask

    # ------------------------------------------------------------------ readable state
    def empty_result(self, state: LeastScoreState) -> StepResult:
        """What a step that ended nothing reports for ``state``'s games: zeros and False, but
        ``total_points``, the totals the games hold (the AEC env's round infos before a round ends)."""
        res = result_zeros(state.phase.shape[0], self.num_players)
        res.total_points[:] = state.scores
        return res

    def _init_state_array(self) -> None:
        P, r, C = self.num_players, self.rules, NUM_CARDS
        sizes = (("hands", P * C), ("known", P * C), ("floor", C), ("pending", C), ("deck", C), ("dead", C),
                 ("seen", C), ("scores", P), ("alive", P), ("player", P), ("first", P), ("phase", 2), ("turn", 1))
        self.state_slices, off = {}, 0
        for name, n in sizes:
            self.state_slices[name] = slice(off, off + n)
            off += n
        self.state_size = off
        self.state_low = np.zeros(off, np.float32)
        self.state_high = np.ones(off, np.float32)
        self.state_high[self.state_slices["scores"]] = (r.elimination_score - 1 + r.penalty + 50) / r.elimination_score

    def state_array(self, state: LeastScoreState) -> np.ndarray:
        """``(B, state_size)`` float32: the full state of every game, hidden cards included
        (layout in the module docstring; ``state_slices``). No loop over games."""
        B, C = state.phase.shape[0], NUM_CARDS
        out = np.zeros((B, self.state_size), np.float32)
        sl, rows = self.state_slices, np.arange(B)

        def flags(sets: np.ndarray) -> np.ndarray:  # 52-bit int64 sets → (..., 52) 0/1
            b = np.unpackbits(np.ascontiguousarray(sets, dtype="<i8").view(np.uint8), bitorder="little")
            return b.reshape(sets.shape + (64,))[..., :C]

        out[:, sl["hands"]] = flags(state.hand_bits).reshape(B, -1)
        out[:, sl["known"]] = flags(state.known).reshape(B, -1)
        for name, sets in (("floor", state.floor_bits), ("pending", state.pending_bits), ("dead", state.dead),
                           ("seen", state.seen)):
            out[:, sl[name]] = flags(sets)
        j = np.arange(C)[None, :] + state.top.astype(_I64)[:, None]  # deck[top:52], top first
        deck = state.deck[rows[:, None], np.minimum(j, C)].astype(np.float32)
        out[:, sl["deck"]] = np.where(j < C, deck + 1, 0) / C
        out[:, sl["scores"]] = state.scores / self.rules.elimination_score
        out[:, sl["alive"]] = self.alive(state)
        for name, idx in (("player", state.player), ("first", state.first), ("phase", state.phase)):
            out[rows, sl[name].start + idx.astype(_I64)] = 1.0
        out[:, sl["turn"]] = (state.turn / self.rules.max_turns)[:, None]
        return out

    def state_dict(self, state: LeastScoreState, b: int = 0) -> dict:
        """The full state of game ``b`` (hidden cards included): for critics and debugging."""
        b = check_game_index(b, state.phase.shape[0])
        s, P = state, self.num_players

        def cards(word) -> list[str]:
            return [card_str(c) for c in np.array([word], dtype=_I64).view(np.uint8) if c < NUM_CARDS]

        def cardset(bits) -> list[str]:
            v = int(bits)
            return [card_str(c) for c in range(NUM_CARDS) if v >> c & 1]

        return {
            "hands": [cards(s.hands[b, p]) for p in range(P)],
            "hand_totals": [int(x) for x in self.hand_totals(s.take(slice(b, b + 1)))[0]],
            "known": [cardset(s.known[b, p]) for p in range(P)],
            "floor": cards(s.floor[b]),
            "discard": cards(s.pending[b]),
            "deck": [card_str(c) for c in s.deck[b, int(s.top[b]) : NUM_CARDS]],
            "dead": cardset(s.dead[b]),
            "seen": cardset(s.seen[b]),
            "scores": [int(x) for x in s.scores[b]],
            "alive": [bool(x) for x in self._alive_bool[s.alive[b]]],
            "current_player": int(s.player[b]),
            "first_player": int(s.first[b]),
            "phase": self.phase_names[int(s.phase[b])],
            "turn": int(s.turn[b]),
            "round": int(s.round[b]),
            "can_declare": bool(s.turn[b] >= N_ALIVE[s.alive[b]]),
            "over": bool(s.over[b]),
            "legal_actions": [self.action_names[a] for a in range(NUM_ACTIONS) if int(s.mask[b]) >> a & 1],
            "rng_key": int(s.rng_key[b]),
            "rng_counter": int(s.rng_counter[b]),
        }
