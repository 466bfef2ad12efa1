"""Single-agent Gymnasium views of the games: the learner plays one seat, opponents inside.

    import gymnasium, deckgym                       # importing deckgym registers the ids
    env = gymnasium.make("deckgym/RackO-v0", num_players=2, opponents=["racko:sequence"])
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(env.action_space.sample())

The ids ``deckgym/RackO-v0`` and ``deckgym/LeastScore-v0`` are registered once, in
:func:`deckgym.registration.register_gymnasium`; ``gymnasium.make`` builds
:class:`DeckGymEnv`, ``gymnasium.make_vec`` the batched
:class:`~deckgym.vector_env.DeckGymVectorEnv`. Neither needs Stable-Baselines3.

This view is that vector env with one game (N = 1), so it, the vectorised training env, the
AEC env and the arena play the same game for the same seed: ``reset(seed=s)`` deals game 0
of seed ``s`` (the deal of ``racko_env.env().reset(seed=s)``).

- **Observation**: ``Box(float32)``, the core's observation of the learner's seat
  (``core.observe``; decode it with ``env.unwrapped.core.obs_view(obs)``; ``obs="infostate"``:
  the information state, the core's perfect-recall view), plus the
  game's derived features with ``features=True`` (what ``deckgym train`` models use).
- **Action**: ``Discrete(core.num_actions)``, the core's action ids
  (``core.action_names``). :meth:`DeckGymEnv.action_masks` gives the legal ones (for
  sb3-contrib's ``MaskablePPO``); ``info["action_mask"]`` holds the same as int8.
  ``env.action_space.sample()`` without a mask draws a *legal* action of the current
  decision (the space knows the env's mask); ``sample(mask=...)`` works as usual.
- **Illegal actions** (:mod:`deckgym.illegal`): ``illegal_action="terminate"`` (default)
  ends the episode with reward −1, a loss, and ``info["illegal_action"]`` the action:
  PettingZoo classic's ``TerminateIllegalWrapper`` convention, and what Gymnasium's
  ``check_env`` needs (its determinism check replays an action sampled before ``reset``,
  which may be illegal in the new deal). The first illegal action in each phase is logged
  as a warning naming the action, the phase and the legal actions; later ones are counted
  in ``info["illegal_actions"]`` (this env's total since the last ``reset(seed=...)``). ``"raise"`` raises ``ValueError``
  with that message instead. (The PettingZoo env raises by default.)
- **Opponents**: ``opponents`` is a pool of agent specs (``"random"``,
  ``"racko:sequence"``, ``"ppo:PATH"``, ...) or :class:`deckgym.agents.base.Agent` objects; at each
  reset one is drawn (``opponent_weights``) and plays every other seat.
- **Seat**: ``seat=None`` draws the learner's seat at random each episode; an int fixes
  it; ``reset(options={"seat": k})`` fixes it for one episode.
- **Episode and reward**: ``episode="round"|"match"``, ``reward="win"|"points"``,
  ``shaping`` as in :mod:`deckgym.vector_env`. An episode that ends by the round cap
  (R9/L10) is reported as ``truncated``; otherwise ``terminated``.
- **Info**: every step ``action_mask``, ``seat``, ``opponent``, ``illegal_actions`` and the
  end-of-episode keys, which hold neutral values (``won`` 0.0, ``round_points`` 0,
  ``capped`` False, ``illegal_action`` −1) until the last step gives them: ``won`` (1, 0.5
  shared, 0), ``round_points`` (the learner's), ``capped``, ``illegal_action``. Every key is
  there from ``reset`` on (clients such as TorchRL fix their info spec at reset).
- **Render**: ``render_mode="ansi"`` (text) or ``"rgb_array"`` (picture), the games'
  spectator renderers (every rack/hand is shown: for watching, not for the agent).

The keywords are the fields of :class:`deckgym.learner_options.LearnerOptions` (or
``options=``), the same defaults as every other view; any other keyword is a field of the
game's rules (``bonus=True``, ``max_turns=``...).
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from deckgym.learner import LearnerEngine
from deckgym.learner_options import LearnerOptions
from deckgym.registration import game as game_entry
from deckgym.rng import check_seed
from deckgym.vector_env import make_agent_from_spec

__all__ = ["DeckGymEnv", "MaskedDiscrete"]


class MaskedDiscrete(spaces.Discrete):
    """``Discrete(n)`` whose ``sample()`` without a mask draws a legal action of the env's
    current decision. Equal to (and pickled as) a plain ``Discrete(n)``."""

    def __init__(self, n: int, mask_fn: Any = None, seed: int | None = None) -> None:
        super().__init__(n, seed=seed)
        self._mask_fn = mask_fn

    def sample(self, mask: Any = None, probability: Any = None) -> np.int64:
        if mask is None and probability is None and self._mask_fn is not None:
            m = np.asarray(self._mask_fn(), dtype=np.int8)
            if m.any():
                mask = m
        return super().sample(mask=mask, probability=probability)

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_mask_fn"] = None  # a saved model's space must not drag the env along
        return state


class DeckGymEnv(gymnasium.Env):
    """The learner in one seat of a deckgym game (see the module docstring).

    Args:
        game: a registered game's name (``"racko"``, ``"leastscore"``).
        render_mode: ``"ansi"`` (text) or ``"rgb_array"`` (an image of the learner's view).
        options: a :class:`~deckgym.learner_options.LearnerOptions`; its fields may also be
            given as keywords (over it), and any other keyword is a rules field.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 1}

    def __init__(self, game: str = "racko", *, render_mode: str | None = None,
                 options: LearnerOptions | None = None, **kwargs: Any) -> None:
        opt = LearnerOptions.from_kwargs(options, **kwargs)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        # one game of the engine; agents built now are seeded from ``seed`` (0 if none), which
        # is also the first reset's seed when that reset is given none
        self._first_seed = opt.seed
        self.options = opt
        self.engine = LearnerEngine(game, 1, opt if opt.seed is not None else opt.replace(seed=0),
                                    make_agent=make_agent_from_spec)
        self.engine.keep_finished = True  # render() shows the finished game, not the one dealt behind it
        self.game = self.engine.game
        self.illegal_action = opt.illegal_action
        self.render_mode = render_mode
        self.core = self.engine.core
        self.rules = self.engine.rules
        self.num_players = self.core.num_players
        self.seat = self.engine.seat
        self.observation_space = spaces.Box(self.engine.observation_low, self.engine.observation_high, dtype=np.float32)
        self.action_space = MaskedDiscrete(self.core.num_actions, mask_fn=self.action_masks)
        self._mask = np.zeros(self.core.num_actions, bool)
        self._done = True
        self._started = False

    # -- Gymnasium API -----------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        check_seed(seed)
        seat = self.engine.seat_of_options(options)  # checked before anything changes
        if seed is None:
            seed = self._first_seed  # the constructor's seed, once
        self._first_seed = None
        super().reset(seed=seed)
        # A seed deals game 0 of that seed (as the AEC env); without one the next game's seed
        # comes from np_random, which the last seeded reset seeded.
        game_seed = int(seed) if seed is not None else int(self.np_random.integers(2**31 - 1))
        if seed is not None:  # only the user's seed starts the count again
            self.engine.illegal_log.counts[:] = 0
        self.engine.start(game_seed, seat)
        self._mask = self.engine.masks[0].copy()
        self._done = False
        self._started = True
        return self.engine.obs[0].copy(), self._info()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        if self._done:
            raise RuntimeError("the episode is over (or never started): call reset() first")
        a = self._check_action(action)
        # the engine raises on an illegal action, or ends the episode (and logs or counts it)
        rew, _, fin = self.engine.play(np.array([a], dtype=np.int64))
        if fin is not None:
            truncated = bool(fin.capped[0])
            self._done = True
            self._mask = np.zeros_like(self._mask)
            info = {**self._info(), "won": float(fin.won[0]), "round_points": int(fin.round_points[0]),
                    "seat": int(fin.seat[0]), "opponent": self.engine.opponent_names[int(fin.opponent[0])],
                    "capped": truncated, "illegal_action": int(fin.illegal[0])}
            return np.asarray(fin.obs[0], dtype=np.float32).copy(), float(rew[0]), not truncated, truncated, info
        self._mask = self.engine.masks[0].copy()
        return self.engine.obs[0].copy(), float(rew[0]), False, False, self._info()

    def action_masks(self) -> np.ndarray:
        """``(num_actions,)`` bool: the learner's legal actions now (all False once the episode is over)."""
        return self._mask.copy()

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; pass render_mode='ansi' or 'rgb_array'")
            return None
        if not self._started:
            raise RuntimeError("call reset() before render()")
        v = self.engine
        state = v.finished_state if self._done and v.finished_state is not None else v.state
        mod = game_entry(self.game).descriptor.render
        if self.render_mode == "ansi":
            return mod.ansi(self.core, state, 0)
        return mod.rgb_array(self.core, state, 0)

    def close(self) -> None:
        pass

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.action_space._mask_fn = self.action_masks  # the space pickles without its env

    # -- helpers -----------------------------------------------------------------------------
    @property
    def learner_seat(self) -> int:
        """The seat the learner plays in the current episode."""
        return int(self.engine.learner_seat[0]) if self._started else -1

    @property
    def opponent(self) -> str:
        """The name of the opponent drawn for the current episode."""
        return self.engine.opponent_names[int(self.engine.opp_of[0])] if self._started else ""

    def _info(self) -> dict[str, Any]:
        """Every step's info: the end-of-episode keys hold neutral values until the episode ends."""
        return {"action_mask": self._mask.astype(np.int8), "seat": self.learner_seat, "opponent": self.opponent,
                "won": 0.0, "round_points": 0, "capped": False, "illegal_action": -1,
                "illegal_actions": int(self.engine.illegal_log.counts[0])}

    def _check_action(self, action: Any) -> int:
        a = np.asarray(action)
        if a.size != 1 or not np.issubdtype(a.dtype, np.integer):
            raise ValueError(f"action must be one integer in 0..{self.core.num_actions - 1}, got {action!r}")
        a = int(a.reshape(-1)[0])
        if not 0 <= a < self.core.num_actions:
            raise ValueError(f"action {a} is out of range 0..{self.core.num_actions - 1}")
        return a
