"""Least Score information-state observations (``LeastScoreCore(rules, obs="infostate")``):
what a player with perfect recall knows, as a fixed-size float32 vector, layout version 1.

It is the default observation followed by the public history of the round, per seat in ego
order (me first, then the seats after me in turn order). The layout (fields, offsets, sizes,
encodings) is written once, in :mod:`leastscore_env.env` (section "Information state"), and
built here by :class:`LeastScoreInfoObservation` in the same order (a test compares the two).

With the default observation's ``opp_known`` (the picked cards still held) this is what the
table has seen each player do. ``obs_view`` decodes the history as bool ``(B, P, 52)`` card
sets and int draw counts. Nothing hidden is in it: a card drawn from the deck is never named,
the deck order never. The history is kept in :class:`leastscore_env.state.LeastScoreInfoState`
and recorded by :class:`LeastScoreHistory` (the core's ``history`` part, around each step);
every deal (a new episode, the next round of a match) clears it
(:class:`leastscore_env.dealing.LeastScoreDealing`).
"""

from __future__ import annotations

import numpy as np

from deckgym.core import StepResult, check_info_state, check_out, check_seat
from leastscore_env.observation import LeastScoreObservation
from leastscore_env.rules import LeastScoreRules
from leastscore_env.state import DECLARE, DRAW_DECK, LeastScoreInfoState, LeastScoreState, with_history
from leastscore_env.turn import LeastScoreTurns

__all__ = ["LeastScoreInfoObservation", "LeastScoreHistory", "INFOSTATE_VERSION"]

INFOSTATE_VERSION = 1
_BITS = np.arange(52, dtype=np.int64)


def _onehot(bits: np.ndarray) -> np.ndarray:
    """52-bit sets ``(...)`` as ``(..., 52)`` 0/1 uint8."""
    return ((bits[..., None] >> _BITS) & 1).astype(np.uint8)


class LeastScoreHistory:
    """The ``history`` part of an ``obs="infostate"`` core: its ``step`` plays the move with
    ``turns`` and records its public part (module docstring)."""

    def __init__(self, turns: LeastScoreTurns) -> None:
        self.turns = turns

    def with_history(self, state: LeastScoreState) -> LeastScoreInfoState:
        """``state``'s games (sharing its arrays) with an empty history: games of a default
        core that have not made a move yet this round (a ValueError otherwise)."""
        if isinstance(state, LeastScoreInfoState):
            return state
        if not isinstance(state, LeastScoreState):
            raise ValueError(f"state must be a LeastScoreState, got {type(state).__name__}")
        started = np.flatnonzero((state.turn != 0) | (state.phase != 0))
        if len(started):
            raise ValueError(f"games {started[:8].tolist()} are in progress: their public history is unknown; "
                             "build the core with obs='infostate' from the deal")
        return with_history(state)

    def step(self, state: LeastScoreState, actions: np.ndarray, check: bool = True) -> StepResult:
        """``LeastScoreTurns.step``, then the move's public part recorded (a refused step records nothing)."""
        st = check_info_state(state, LeastScoreInfoState)
        if check:
            actions = self.turns.check_actions(st, actions)
        a = np.asarray(actions, dtype=np.int64).reshape(-1)
        rows = np.arange(len(a))
        p = st.player.astype(np.intp)
        phase = st.phase.copy()
        known = st.known[rows, p].copy()
        res = self.turns.step(st, a, check=False)
        live = ~res.round_over  # a finished round's history is gone with the next deal
        thrown = np.flatnonzero(live & (phase == 0) & (a != DECLARE))
        st.thrown[thrown, p[thrown]] |= st.pending_bits[thrown]
        drew = np.flatnonzero(live & (phase == 1) & (a == DRAW_DECK))
        st.draws[drew, p[drew]] += 1
        took = np.flatnonzero(live & (phase == 1) & (a > DRAW_DECK))
        st.picked[took, p[took]] |= st.known[took, p[took]] & ~known[took]
        return res


class LeastScoreInfoObservation:
    """Information-state observations (module docstring): the ``observation`` part of an
    ``obs="infostate"`` core, built on the default one (``base``), which ``observe_default``
    still gives; ``obs_view`` decodes both layouts (a row of the default size as the default)."""

    obs = "infostate"
    infostate_version = INFOSTATE_VERSION

    def __init__(self, rules: LeastScoreRules, base: LeastScoreObservation) -> None:
        self.rules, self.base = rules, base
        P = self.num_players = rules.num_players
        off = self.base_obs_size = base.base_obs_size
        self.obs_slices = dict(base.obs_slices)
        for name, n in (("thrown", 52 * P), ("picked", 52 * P), ("draws", P)):
            self.obs_slices[name] = slice(off, off + n)
            off += n
        self.obs_size = off
        extra = off - self.base_obs_size
        self.obs_low = np.concatenate([base.obs_low, np.zeros(extra, np.float32)])
        self.obs_high = np.concatenate([base.obs_high, np.ones(extra, np.float32)])

    def observe_default(self, state: LeastScoreState, seat: np.ndarray | int, out: np.ndarray | None = None) -> np.ndarray:
        """The default observation, as ``LeastScoreCore(rules).observe`` gives it."""
        return self.base.observe(state, seat, out)

    def observe(self, state: LeastScoreState, seat: np.ndarray | int, out: np.ndarray | None = None) -> np.ndarray:
        """``(B, obs_size)`` float32 information states for ``seat`` (module docstring)."""
        st = check_info_state(state, LeastScoreInfoState)
        B, P = st.hands.shape
        seat = check_seat(seat, B, P)
        if out is not None:
            check_out(out, B, self.obs_size)
        obs = np.empty((B, self.obs_size), np.float32) if out is None else out
        O = self.base_obs_size
        obs[:, :O] = self.base.observe(st, seat if B > 1 else int(np.asarray(seat).reshape(-1)[0]))
        ego = np.broadcast_to((np.asarray(seat).reshape(-1, 1) + np.arange(P)[None, :]) % P, (B, P))
        rows = np.arange(B)[:, None]
        lay = self.obs_slices
        obs[:, lay["thrown"]] = _onehot(st.thrown[rows, ego]).reshape(B, -1)
        obs[:, lay["picked"]] = _onehot(st.picked[rows, ego]).reshape(B, -1)
        obs[:, lay["draws"]] = st.draws[rows, ego] * np.float32(1.0 / 52)
        return obs

    def obs_view(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        """Named, decoded fields: the default observation's and, for information states, the
        history's (module docstring). A batch of the default size decodes as the default."""
        obs = np.atleast_2d(np.asarray(obs, dtype=np.float32))
        if obs.ndim == 2 and obs.shape[1] == self.base_obs_size:
            return self.base.obs_view(obs)
        if obs.ndim != 2 or obs.shape[1] != self.obs_size:
            raise ValueError(f"observations must have shape (B, {self.obs_size}) (information states) "
                             f"or (B, {self.base_obs_size}) (default), got {obs.shape}")
        view = self.base.obs_view(obs[:, : self.base_obs_size])
        B, P = obs.shape[0], self.num_players
        lay = self.obs_slices
        view["thrown"] = obs[:, lay["thrown"]].reshape(B, P, 52) > 0.5
        view["picked"] = obs[:, lay["picked"]].reshape(B, P, 52) > 0.5
        view["draws"] = np.rint(obs[:, lay["draws"]] * 52).astype(np.int64)
        return view
