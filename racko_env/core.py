"""The batched Rack-O core: ``B`` games as numpy arrays, no Python loop over games.

See ``docs/CONTRACT.md`` for the interface and ``docs/RULES.md`` for the rules (R1–R12);
:mod:`racko_env.rules` holds the rule options and the decisions taken on ambiguous points.
:class:`RackoCore` ties together the pieces, one module per concept:

* :mod:`racko_env.state`: the state layout (:class:`RackoState`), action and phase ids;
* :mod:`racko_env.tables`: the rack lookup tables (R7, R8, R10);
* :mod:`racko_env.dealing`: deals (R3) and explicit deals;
* :mod:`racko_env.turn`: legal actions and the turn (R4–R7, R9);
* :mod:`racko_env.sampling`: uniformly random legal actions;
* :mod:`racko_env.scoring`: round and match ends (R8–R12);
* :mod:`racko_env.observation`: observations and ``obs_view``.

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

from deckgym.core import ObsChoice, RebuiltWhenUnpickled, StepResult, check_core_options, check_game_index
from racko_env.dealing import RackoDealing
from racko_env.observation import RackoObservation
from racko_env.rules import RackoRules
from racko_env.sampling import RackoSampling
from racko_env.scoring import RackoScoring
from racko_env.state import ACTION_NAMES, CHOOSE, NUM_ACTIONS, PHASE_NAMES, RackoState
from racko_env.turn import RackoTurns, result_zeros

__all__ = ["RackoCore"]


class RackoCore(ObsChoice, RackoDealing, RackoTurns, RackoScoring, RackoObservation, RackoSampling,
                RebuiltWhenUnpickled):
    """Batched Rack-O (``docs/CONTRACT.md``). ``episode``: one ``"round"`` or a ``"match"``
    (R12); ``reward``: ``"win"`` (zero-sum at the episode end) or ``"points"`` (the round
    points when a round ends; team points with R11); ``obs``: ``"default"`` (layout v1,
    :mod:`racko_env.env`) or ``"infostate"`` (perfect recall, :mod:`racko_env.infostate`)."""

    obs_version = 1
    #: ``"default"`` or ``"infostate"`` (:mod:`racko_env.infostate`: a :class:`RackoInfoCore`)
    obs = "default"
    _constructor_args = ("rules", "episode", "reward", "obs")
    action_names = ACTION_NAMES
    phase_names = PHASE_NAMES
    num_actions = NUM_ACTIONS

    _infostate_core = "racko_env.infostate:RackoInfoCore"

    def __init__(self, rules: RackoRules | None = None, episode: str = "round", reward: str = "win",
                 obs: str = "default") -> None:
        if obs != self.obs:
            raise ValueError(f"{type(self).__name__} gives obs={self.obs!r} observations, not {obs!r}")
        if rules is None:
            rules = RackoRules()
        if not isinstance(rules, RackoRules):
            raise TypeError(f"rules must be a RackoRules, got {type(rules).__name__}")
        check_core_options(episode, reward)
        self.rules = rules
        self.episode = episode
        self.reward = reward
        self.num_players = rules.num_players
        self.deck_size = int(rules.deck_size)
        self.pile_size = rules.pile_size

        self._init_turn_tables()
        self._init_scoring_tables()
        self._init_deal_tables()
        self._init_observation()
        self._init_state_array()

    def _rows(self, b: int) -> np.ndarray:
        return self._step_buffers.get(b).rows

    def current_player(self, state: RackoState) -> np.ndarray:
        """``(B,)`` int64: the seat to act in each game."""
        return state.player.astype(np.int64)

    def phase(self, state: RackoState) -> np.ndarray:
        """``(B,)`` int64: the decision to make, an index into ``phase_names`` (R4)."""
        return state.phase.astype(np.int64)

    def alive(self, state: RackoState) -> np.ndarray:
        """``(B, P)`` bool, all True: nobody is eliminated in Rack-O (a read-only array)."""
        return self._step_buffers.get(state.disc_n.shape[0]).alive  # nobody is eliminated in Rack-O (read-only)

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

