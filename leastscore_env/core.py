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
``legal_action_mask`` is a single ``unpackbits``. :class:`LeastScoreCore` is made of parts,
one module per concept, that it holds and names:

* ``core.tables`` (:mod:`leastscore_env.core_tables`): the legal-discard and seat tables every
  part reads;
* ``core.dealing`` (:mod:`leastscore_env.dealing`): deals (L3), the reshuffle (L6) and
  explicit deals;
* ``core.turns`` (:mod:`leastscore_env.turn`): legal actions and the turn (L4, L7's
  declaration, L10's cap);
* ``core.scoring`` (:mod:`leastscore_env.scoring`): round and match ends (L8–L10);
* ``core.observation`` (:mod:`leastscore_env.observation`, or :mod:`leastscore_env.infostate`
  with ``obs="infostate"``): observations and ``obs_view``;
* ``core.history`` (:mod:`leastscore_env.infostate`, ``obs="infostate"`` only, else None): the
  public history each move adds to the state;
* ``core.sampling`` (:mod:`leastscore_env.sampling`): uniformly random legal actions.

Its public methods (the ``Core`` protocol of :mod:`deckgym.core`) delegate to them;
:mod:`leastscore_env.state` holds the state layout and the card-word representation,
:mod:`leastscore_env.tables` the lookup tables on card words, :mod:`leastscore_env.legality`
the legal discard groups (L5).

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

from deckgym.core import (RebuiltWhenUnpickled, StepResult, bind_hot_paths, check_core_options, check_game_index,
                          check_obs_option, infostate_twin, methods_as_defined, pair_infostate_twin)
from leastscore_env.cards import NUM_CARDS, PAD, card_str
from leastscore_env.core_tables import CoreTables
from leastscore_env.dealing import LeastScoreDealing
from leastscore_env.infostate import LeastScoreHistory, LeastScoreInfoObservation
from leastscore_env.observation import LeastScoreObservation
from leastscore_env.rules import LeastScoreRules
from leastscore_env.sampling import LeastScoreSampling
from leastscore_env.scoring import LeastScoreScoring
from leastscore_env.state import ACTION_NAMES, HAND_MAX, NUM_ACTIONS, PHASE_NAMES, LeastScoreInfoState, LeastScoreState
from leastscore_env.tables import BYTE_VALUE, N_ALIVE
from leastscore_env.turn import LeastScoreTurns, result_zeros

__all__ = ["LeastScoreCore"]

_I64 = np.int64


class LeastScoreCore(RebuiltWhenUnpickled):
    """Batched Least Score (see the module docstring and ``docs/CONTRACT.md``). ``obs``:
    ``"default"`` or ``"infostate"`` (:mod:`leastscore_env.infostate`: the states then record
    the public history)."""

    num_actions = NUM_ACTIONS
    action_names = ACTION_NAMES
    phase_names = PHASE_NAMES
    obs_version = 1
    _constructor_args = ("rules", "episode", "reward", "obs")

    def __init__(self, rules: LeastScoreRules | None = None, episode: str = "round", reward: str = "win",
                 obs: str = "default") -> None:
        check_obs_option(obs)
        rules = LeastScoreRules() if rules is None else rules
        if not isinstance(rules, LeastScoreRules):
            raise TypeError(f"rules must be a LeastScoreRules, got {type(rules).__name__}")
        check_core_options(episode, reward)
        self.rules, self.episode, self.reward, self.obs = rules, episode, reward, obs
        self.num_players = rules.num_players
        infostate = obs == "infostate"

        self.tables = tables = CoreTables(rules)
        self.dealing = LeastScoreDealing(rules, tables, episode, history=infostate)
        self.scoring = LeastScoreScoring(rules, tables, episode, reward, self.dealing)
        self.turns = LeastScoreTurns(rules, tables, self.dealing, self.scoring)
        self.sampling = LeastScoreSampling(self.turns)
        default = LeastScoreObservation(rules, tables)
        self.observation: LeastScoreObservation | LeastScoreInfoObservation = (
            LeastScoreInfoObservation(rules, default) if infostate else default)
        self.history = LeastScoreHistory(self.turns) if infostate else None

        o = self.observation  # its layout, read by every adapter
        self.obs_size, self.base_obs_size, self.obs_slices = o.obs_size, o.base_obs_size, o.obs_slices
        self.obs_low, self.obs_high = o.obs_low, o.obs_high
        if infostate:
            self.infostate_version = o.infostate_version
        self._alive_bool = tables.alive_bool
        self._twin: LeastScoreCore | None = None  # infostate_core() / pair_infostate()
        self._init_state_array()
        # The AEC env calls these once or more per move of one game: bound here, they cost one
        # call instead of two (the methods of the same names below say what they do).
        bind_hot_paths(self, _AS_DEFINED, legal_action_mask=self.turns.legal_action_mask, observe=o.observe,
                       sample_legal=self.sampling.sample_legal,
                       step=self.history.step if self.history is not None else self.turns.step)

    # ------------------------------------------------------------------ contract: the parts' work
    def init(self, batch: int, seed: int, game_ids: np.ndarray | None = None) -> LeastScoreState:
        """``batch`` (>= 1) freshly dealt games (L3); game ``i`` uses the random stream
        ``(seed, game_ids[i])`` (default ``game_ids = arange(batch)``), whatever the batch."""
        return self.dealing.init(batch, seed, game_ids)

    def reset_where(self, state: LeastScoreState, mask: np.ndarray) -> None:
        """A fresh episode in place for the games where ``mask`` (a ``(B,)`` bool array),
        each continuing its own random stream."""
        self.dealing.reset_where(state, mask)

    def deal(self, seed: int, options: dict) -> LeastScoreState:
        """One game (B = 1) from an explicit deal (:meth:`leastscore_env.dealing.LeastScoreDealing.deal`)."""
        return self.dealing.deal(seed, options)

    def legal_action_mask(self, state: LeastScoreState) -> np.ndarray:  # (bound to turns' at construction)
        """(B, 38) bool: the legal actions of the seat to act (L4, L5, L7)."""
        return self.turns.legal_action_mask(state)

    def check_actions(self, state: LeastScoreState, actions: np.ndarray) -> np.ndarray:
        """``actions`` as a ``(B,)`` int array if each is legal in its game (L4, L5, L7),
        else a ValueError naming the rows, their actions, phases and legal actions."""
        return self.turns.check_actions(state, actions)

    def step(self, state: LeastScoreState, actions: np.ndarray, check: bool = True) -> StepResult:  # (bound)
        """Play one action per game, in place (:meth:`leastscore_env.turn.LeastScoreTurns.step`);
        with ``obs="infostate"`` the move's public part is recorded too (a refused step records nothing)."""
        return (self.turns if self.history is None else self.history).step(state, actions, check)

    def sample_legal(self, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:  # (bound at construction)
        """A uniformly random legal action per row of ``mask``, exactly uniform: ``(B,)`` int64."""
        return self.sampling.sample_legal(mask, rng)

    def observe(self, state: LeastScoreState, seat, out: np.ndarray | None = None) -> np.ndarray:  # (bound)
        """``(B, obs_size)`` float32 observations ego-centric for ``seat`` (an int or ``(B,)``
        ints), of this core's kind (``obs``), into ``out`` if given."""
        return self.observation.observe(state, seat, out)

    def observe_default(self, state: LeastScoreState, seat, out: np.ndarray | None = None) -> np.ndarray:
        """The default observation, whatever this core's ``obs``."""
        if self.history is None:
            return self.observation.observe(state, seat, out)
        return self.observation.observe_default(state, seat, out)

    def obs_view(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        """Named, decoded fields of a batch of observations (an infostate core decodes both layouts)."""
        return self.observation.obs_view(obs)

    def with_history(self, state: LeastScoreState) -> LeastScoreInfoState:
        """``state``'s games with an empty public history, for an ``obs="infostate"`` core
        (:meth:`leastscore_env.infostate.LeastScoreHistory.with_history`)."""
        if self.history is None:
            raise ValueError("with_history needs a core built with obs='infostate' (see infostate_core())")
        return self.history.with_history(state)

    def infostate_core(self) -> "LeastScoreCore":
        """This core's information-state twin (the same rules and options, ``obs="infostate"``),
        built once; the core itself if it gives information states."""
        return infostate_twin(self, LeastScoreCore)

    def pair_infostate(self, twin: "LeastScoreCore") -> None:
        """Make ``twin`` (an ``obs="infostate"`` core of the same rules and options) the one
        :meth:`infostate_core` returns, so that states of one are the states of the other."""
        pair_infostate_twin(self, twin, LeastScoreCore)

    # (the belief agents build and fill sampled states with these two)
    def _legal_of(self, w: np.ndarray) -> np.ndarray:
        return self.tables.legal_of(w)

    def _empty(self, B: int) -> LeastScoreState:
        return self.dealing.empty(B)

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


_AS_DEFINED = methods_as_defined(LeastScoreCore)  # what bind_hot_paths compares with
