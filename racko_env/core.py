"""The batched Rack-O core: ``B`` games as numpy arrays, no Python loop over games.

See ``docs/CONTRACT.md`` for the interface and ``docs/RULES.md`` for the rules (R1–R12);
:mod:`racko_env.rules` holds the rule options and the decisions taken on ambiguous points.
:class:`RackoCore` is made of parts, one module per concept, that it holds and names:

* ``core.dealing`` (:mod:`racko_env.dealing`): deals (R3) and explicit deals;
* ``core.turns`` (:mod:`racko_env.turn`): legal actions and the turn (R4–R7, R9);
* ``core.scoring`` (:mod:`racko_env.scoring`): round and match ends (R8–R12);
* ``core.observation`` (:mod:`racko_env.observation`, or :mod:`racko_env.infostate` with
  ``obs="infostate"``): observations and ``obs_view``;
* ``core.history`` (:mod:`racko_env.infostate`, ``obs="infostate"`` only, else None): the
  public history each move adds to the state;
* ``core.sampling`` (:mod:`racko_env.sampling`): uniformly random legal actions.

Its public methods (the ``Core`` protocol of :mod:`deckgym.core`) delegate to them;
:mod:`racko_env.state` holds the state layout, :mod:`racko_env.tables` the rack lookup tables.

The full state as one flat float32 vector (``state_array``, the PettingZoo env's ``state()``,
for centralised critics: every card, hidden or not), absolute seats, ``state_slices`` giving
each field's place (``P`` players, ``N`` cards, ``K = N − 10·P``):

==============  =====  =============================================================
field           size   encoding
==============  =====  =============================================================
``racks``       P·10   seat 0's rack first, slot 1 first: card / N
``known``       P·10   1 if that card is publicly known to be there (R5)
``draw_pile``   K      the draw pile, top first: card / N (0 past its end)
``discard``     K      the discard pile, top first: card / N (0 past its end)
``hand``        1      the card in hand (a place phase) / N, else 0
``phase``       3      one-hot: choose, place_discard, place_drawn
``player``      P      one-hot: the seat to move
``dealer``      P      one-hot: the round's dealer (R3)
``turn``        1      completed turns this round / max_turns (R9)
``scores``      P      match totals / target_score (R12; a total may pass the target by one
                       round's points, so ``state_high`` is above 1 there)
``seen``        N      card c−1: 1 if card c was face up this round
==============  =====  =============================================================
"""

from __future__ import annotations

from typing import Any

import numpy as np

from deckgym.core import (RebuiltWhenUnpickled, StepResult, bind_hot_paths, check_core_options, check_game_index,
                          check_info_state, check_obs_option, infostate_twin, methods_as_defined, pair_infostate_twin)
from racko_env.dealing import RackoDealing
from racko_env.infostate import RackoHistory, RackoInfoObservation
from racko_env.observation import RackoObservation
from racko_env.rules import RackoRules
from racko_env.sampling import RackoSampling
from racko_env.scoring import RackoScoring
from racko_env.state import ACTION_NAMES, CHOOSE, NUM_ACTIONS, PHASE_NAMES, RackoInfoState, RackoState
from racko_env.turn import RackoTurns, result_zeros

__all__ = ["RackoCore"]


class RackoCore(RebuiltWhenUnpickled):
    """Batched Rack-O (``docs/CONTRACT.md``). ``episode``: one ``"round"`` or a ``"match"``
    (R12); ``reward``: ``"win"`` (zero-sum at the episode end) or ``"points"`` (the round
    points when a round ends; team points with R11); ``obs``: ``"default"`` (layout v1,
    :mod:`racko_env.env`) or ``"infostate"`` (perfect recall, :mod:`racko_env.infostate`:
    the states then record the public history)."""

    obs_version = 1
    _constructor_args = ("rules", "episode", "reward", "obs")
    action_names = ACTION_NAMES
    phase_names = PHASE_NAMES
    num_actions = NUM_ACTIONS

    def __init__(self, rules: RackoRules | None = None, episode: str = "round", reward: str = "win",
                 obs: str = "default") -> None:
        check_obs_option(obs)
        if rules is None:
            rules = RackoRules()
        if not isinstance(rules, RackoRules):
            raise TypeError(f"rules must be a RackoRules, got {type(rules).__name__}")
        check_core_options(episode, reward)
        self.rules, self.episode, self.reward, self.obs = rules, episode, reward, obs
        self.num_players = rules.num_players
        self.deck_size = int(rules.deck_size)
        self.pile_size = rules.pile_size
        infostate = obs == "infostate"

        self.dealing = RackoDealing(rules, history=infostate)
        self.scoring = RackoScoring(rules, episode, reward, self.dealing)
        self.turns = RackoTurns(rules, self.scoring)
        self.sampling = RackoSampling()
        default = RackoObservation(rules)
        self.observation: RackoObservation | RackoInfoObservation = (
            RackoInfoObservation(rules, default) if infostate else default)
        self.history = RackoHistory(rules) if infostate else None

        o = self.observation  # its layout, read by every adapter
        self.obs_size, self.base_obs_size, self.obs_slices = o.obs_size, o.base_obs_size, o.obs_slices
        self.obs_low, self.obs_high = o.obs_low, o.obs_high
        if infostate:
            self.infostate_version = o.infostate_version
        self._twin: RackoCore | None = None  # infostate_core() / pair_infostate()
        self._init_state_array()
        # The AEC env calls these once or more per move of one game: bound here, they cost one
        # call instead of two (the methods of the same names below say what they do).
        hot = dict(legal_action_mask=self.turns.legal_action_mask, observe=o.observe,
                   sample_legal=self.sampling.sample_legal)
        if not infostate:
            hot["step"] = self.turns.step
        bind_hot_paths(self, _AS_DEFINED, **hot)

    # -- the Core protocol, delegated to the parts ----------------------------------------------
    def init(self, batch: int, seed: int, game_ids: np.ndarray | None = None) -> RackoState:
        """``batch`` (>= 1) freshly dealt games (R3); game ``i`` uses the random stream
        ``(seed, game_ids[i])`` (default ``game_ids = arange(batch)``), whatever the batch."""
        return self.dealing.init(batch, seed, game_ids)

    def reset_where(self, state: RackoState, mask: np.ndarray) -> None:
        """A fresh episode in place for the games where ``mask`` (a ``(B,)`` bool array),
        each continuing its own random stream."""
        self.dealing.reset_where(state, mask)

    def deal(self, seed: int, options: dict) -> RackoState:
        """One game from an explicit deal (:meth:`racko_env.dealing.RackoDealing.deal`)."""
        return self.dealing.deal(seed, options)

    def legal_action_mask(self, state: RackoState) -> np.ndarray:  # (bound to turns' at construction)
        """``(B, 13)`` bool: the legal actions of the player to act in each game (R4), a
        read-only view: copy it before writing into it."""
        return self.turns.legal_action_mask(state)

    def check_actions(self, state: RackoState, actions: np.ndarray) -> np.ndarray:
        """``actions`` as a ``(B,)`` int array if each is legal in its game (R4), else a
        ValueError naming the rows, their actions, phases and legal actions."""
        return self.turns.check_actions(state, actions)

    def step(self, state: RackoState, actions: np.ndarray, check: bool = True) -> StepResult:  # (bound, default obs)
        """Play one action per game, in place (:meth:`racko_env.turn.RackoTurns.step`); with
        ``obs="infostate"`` the move's public part is recorded first (a refused step records nothing)."""
        if self.history is None:
            return self.turns.step(state, actions, check)
        st = check_info_state(state, RackoInfoState)
        if check:
            actions = self.turns.check_actions(st, actions)
        self.history.record(st, np.asarray(actions, dtype=np.intp))
        return self.turns.step(st, actions, check=False)

    def sample_legal(self, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:  # (bound at construction)
        """A uniformly random legal action per row of ``mask``, exactly uniform: ``(B,)`` int64."""
        return self.sampling.sample_legal(mask, rng)

    def observe(self, state: RackoState, seat: np.ndarray | int, out: np.ndarray | None = None) -> np.ndarray:
        """``(B, obs_size)`` float32 observations ego-centric for ``seat`` (an int or ``(B,)``
        ints), of this core's kind (``obs``), into ``out`` if given.  (bound at construction)"""
        return self.observation.observe(state, seat, out)

    def observe_default(self, state: RackoState, seat: np.ndarray | int, out: np.ndarray | None = None) -> np.ndarray:
        """The default observation (layout v1), whatever this core's ``obs``."""
        if self.history is None:
            return self.observation.observe(state, seat, out)
        return self.observation.observe_default(state, seat, out)

    def obs_view(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        """Named, decoded fields of a batch of observations (an infostate core decodes both layouts)."""
        return self.observation.obs_view(obs)

    def with_history(self, state: RackoState) -> RackoInfoState:
        """``state``'s games with an empty public history, for an ``obs="infostate"`` core
        (:meth:`racko_env.infostate.RackoHistory.with_history`)."""
        if self.history is None:
            raise ValueError("with_history needs a core built with obs='infostate' (see infostate_core())")
        return self.history.with_history(state)

    # -- the information-state twin -------------------------------------------------------------
    def infostate_core(self) -> "RackoCore":
        """This core's information-state twin (the same rules and options, ``obs="infostate"``),
        built once; the core itself if it gives information states."""
        return infostate_twin(self, RackoCore)

    def pair_infostate(self, twin: "RackoCore") -> None:
        """Make ``twin`` (an ``obs="infostate"`` core of the same rules and options) the one
        :meth:`infostate_core` returns, so that states of one are the states of the other."""
        pair_infostate_twin(self, twin, RackoCore)

    def current_player(self, state: RackoState) -> np.ndarray:
        """``(B,)`` int64: the seat to act in each game."""
        return state.player.astype(np.int64)

    def phase(self, state: RackoState) -> np.ndarray:
        """``(B,)`` int64: the decision to make, an index into ``phase_names`` (R4)."""
        return state.phase.astype(np.int64)

    def alive(self, state: RackoState) -> np.ndarray:
        """``(B, P)`` bool, all True: nobody is eliminated in Rack-O (a read-only array)."""
        return self.turns.step_buffers.get(state.disc_n.shape[0]).alive

    # -- readable state -----------------------------------------------------------------------
    def racks(self, state: RackoState) -> np.ndarray:
        """``(B, P, 10)`` card values (slot 1 first)."""
        return np.abs(state.racks.astype(np.int64))

    def piles(self, state: RackoState, b: int = 0) -> tuple[list[int], list[int], int]:
        """Game ``b``'s draw pile (top first), discard pile (bottom first) and card in hand (0 = none)."""
        K = self.pile_size
        b = check_game_index(b, state.disc_n.shape[0])
        s = int(state.disc_n[b])
        h = int(state.phase[b] != CHOOSE)
        pl = state.piles[b].astype(int)
        draw = pl[: K - s - h][::-1].tolist()
        discard = pl[K - s : K][::-1].tolist()
        hand = int(pl[K - s - 1]) if h else 0
        return draw, discard, hand

    def _empty(self, b: int) -> RackoState:  # (the belief agents build sampled states with it)
        return self.dealing.empty(b)

    def empty_result(self, state: RackoState) -> StepResult:
        """What a step that ended nothing reports for ``state``'s games: zeros and False, but
        ``total_points``, the totals the games hold (the AEC env's round infos before a round ends)."""
        res = result_zeros(state.disc_n.shape[0], self.num_players)
        res.total_points[:] = state.scores
        return res

    def _init_state_array(self) -> None:
        P, N, K, r = self.num_players, self.deck_size, self.pile_size, self.rules
        sizes = (("racks", 10 * P), ("known", 10 * P), ("draw_pile", K), ("discard", K), ("hand", 1), ("phase", 3),
                 ("player", P), ("dealer", P), ("turn", 1), ("scores", P), ("seen", N))
        self.state_slices, off = {}, 0
        for name, n in sizes:
            self.state_slices[name] = slice(off, off + n)
            off += n
        self.state_size = off
        max_round = (75 + (400 if r.run_bonus_active else 0)) * (2 if r.partners else 1)  # R8, R10, R11
        self.state_low = np.zeros(off, np.float32)
        self.state_high = np.ones(off, np.float32)
        self.state_high[self.state_slices["scores"]] = (r.target_score - 1 + max_round) / r.target_score
        self._pile_j = np.arange(K)

    def state_array(self, state: RackoState) -> np.ndarray:
        """``(B, state_size)`` float32: the full state of every game, hidden cards included
        (layout in the module docstring; ``state_slices``). No loop over games."""
        B, N, K = state.disc_n.shape[0], self.deck_size, self.pile_size
        out = np.zeros((B, self.state_size), np.float32)
        sl, rows, j = self.state_slices, np.arange(B)[:, None], self._pile_j[None, :]
        out[:, sl["racks"]] = np.abs(state.racks.reshape(B, -1).astype(np.float32)) / N
        out[:, sl["known"]] = state.racks.reshape(B, -1) < 0
        s = state.disc_n.astype(np.int64)[:, None]
        draw_n = K - s - (state.phase != CHOOSE)[:, None]
        draw = state.piles[rows, np.clip(draw_n - 1 - j, 0, K)]  # top (last) first
        out[:, sl["draw_pile"]] = np.where(j < draw_n, draw, 0) / N
        disc = state.piles[rows, np.clip(K - s + j, 0, K)]  # top (piles[K-s]) first
        out[:, sl["discard"]] = np.where(j < s, disc, 0) / N
        hand = state.piles[rows[:, 0], np.clip(K - s[:, 0] - 1, 0, K)]
        out[:, sl["hand"]] = (np.where(state.phase != CHOOSE, hand, 0) / N)[:, None]
        for name, idx in (("phase", state.phase), ("player", state.player), ("dealer", state.dealer)):
            out[rows[:, 0], sl[name].start + idx.astype(np.int64)] = 1.0
        out[:, sl["turn"]] = (state.turn / self.rules.max_turns)[:, None]
        out[:, sl["scores"]] = state.scores / self.rules.target_score
        out[:, sl["seen"]] = state.pub[:, 0, 1:]
        return out

    def state_dict(self, state: RackoState, b: int = 0) -> dict[str, Any]:
        """The full state of game ``b`` in readable form, hidden cards included (``env.state()``)."""
        b = check_game_index(b, state.disc_n.shape[0])
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
            "totals": state.scores[b].astype(int).tolist(),
            "rng_key": int(state.rng_key[b]),
            "rng_counter": int(state.rng_counter[b]),
        }


_AS_DEFINED = methods_as_defined(RackoCore)  # what bind_hot_paths compares with
