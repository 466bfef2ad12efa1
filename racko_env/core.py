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
"""

from __future__ import annotations

from typing import Any

import numpy as np

from deckgym.core import ObsChoice, RebuiltWhenUnpickled, check_core_options, check_game_index
from racko_env.dealing import RackoDealing
from racko_env.observation import RackoObservation
from racko_env.rules import RackoRules
from racko_env.sampling import RackoSampling
from racko_env.scoring import RackoScoring
from racko_env.state import ACTION_NAMES, CHOOSE, NUM_ACTIONS, PHASE_NAMES, RackoState
from racko_env.turn import RackoTurns

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

