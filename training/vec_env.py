"""``CoreVecEnv``: an SB3 ``VecEnv`` over a batched game core, opponents played inside.

A thin SB3 adapter of :class:`deckgym.learner.LearnerEngine` (which holds the games, the
opponent pool, the features, the shaping and the rewards), built from the same
:class:`deckgym.learner_options.LearnerOptions` as every other view: the learner plays one seat in
each of ``B`` games of one batched core state; every other seat is played inside the env by
an opponent drawn per game, at each new episode, from a weighted pool of agents (specs such
as ``"racko:sequence"`` or :class:`deckgym.agents.base.Agent` objects such as frozen PPO snapshots).

Conventions (SB3):

- ``step`` returns ``(obs, rewards, dones, infos)`` with ``B`` rows; a finished game is
  reset at once and its row holds the first observation of the next game; the last
  observation of the finished one is ``infos[i]["terminal_observation"]``, and
  ``infos[i]["episode"] = {"r", "l", "t"}`` (return, learner decisions, wall time), plus
  ``"won"`` (1 win, 0.5 shared, 0 loss), ``"opponent"`` (the pool entry's name),
  ``"seat"``, ``"round_points"`` and ``"capped"``.
- ``action_masks()`` returns the ``(B, A)`` bool mask of the learner's legal actions in one
  call (MaskablePPO's ``get_action_masks`` calls ``env_method("action_masks")``, which
  returns that same array).
- Rewards: ``reward="win"`` or ``"points"``, plus optional potential-based shaping (see
  :mod:`deckgym.vector_env`). The round cap (R9/L10) is a rule that ends the game with a
  result (and the turn is in the observation), so it is *not* reported as a
  ``TimeLimit.truncated`` (no bootstrap).

Seeding: game ``i`` uses the core's random stream ``(seed, i)``; learner seats, opponent
draws and the opponents' own randomness come from generators seeded by ``seed``. The same
seed and actions give the same trajectory, whatever else runs.
"""

from __future__ import annotations

from typing import Any, Iterable

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.vec_env import VecEnv

from deckgym.agents.base import Agent
from deckgym.agents.registry import make_agent
from deckgym.learner import LearnerEngine, engine_attribute
from deckgym.learner_options import LearnerOptions
from deckgym.vector_env import DeckGymVectorEnv


class CoreVecEnv(VecEnv):
    """SB3 vector env: the learner in one seat of ``num_envs`` games of one batched core.

    Args:
        game: a registered game's name.
        num_envs: B, games played at once.
        options: a :class:`~deckgym.learner_options.LearnerOptions`; its fields may also be
            given as keywords (over it), and any other keyword is a rules field. ``players``
            and ``rules_kwargs`` are deprecated names of ``num_players`` and the rules keywords.

    SB3's differences from the other views (``docs/frontends/defaults.md``): ``num_envs`` 64, ``seed`` 0
    (SB3's ``reset()`` takes no seed), ``illegal_action="raise"`` (a masked learner's illegal
    action is a bug), the finished game shown SAME_STEP with its last
    observation in ``infos[i]["terminal_observation"]``.
    """

    # what a user may change on a built env: the engine's settings
    illegal_action = engine_attribute("illegal_action")
    seat = engine_attribute("seat")
    shaping = engine_attribute("shaping")

    #: where SB3's conventions make this view differ from LearnerOptions' defaults (docs/frontends/defaults.md)
    DEFAULTS = {"seed": 0, "illegal_action": "raise"}

    def __init__(self, game: str, num_envs: int = 64, *, options: LearnerOptions | None = None,
                 **kwargs: Any) -> None:
        if options is None:  # an options object says everything itself
            kwargs = {**self.DEFAULTS, **kwargs}
        opt = LearnerOptions.from_kwargs(options, **kwargs)
        self.engine = LearnerEngine(game, num_envs, opt, make_agent=make_agent)
        self.render_mode = None
        space = spaces.Box(self.engine.observation_low, self.engine.observation_high, dtype=np.float32)
        super().__init__(num_envs, space, spaces.Discrete(self.engine.core.num_actions))
        self._seed = int(opt.seed)

    @property
    def venv(self) -> DeckGymVectorEnv:
        """The same games as a Gymnasium vector env (``SAME_STEP``): what a warm start's teacher plays."""
        if self.__dict__.get("_venv") is None:
            self._venv = DeckGymVectorEnv.on_engine(self.engine, AutoresetMode.SAME_STEP)
        return self._venv

    def __getattr__(self, name: str) -> Any:
        # only reached when the env has no such attribute: the engine's public ones are the env's
        if not name.startswith("_") and "engine" in self.__dict__:
            return getattr(self.__dict__["engine"], name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def add_opponent(self, opponent: str | Agent, weight: float = 1.0, name: str | None = None) -> int:
        """Add an agent (or spec) to the pool; returns its index."""
        return self.engine.add_opponent(opponent, weight=weight, name=name)

    def set_opponent_weights(self, weights: Iterable[float]) -> None:
        """New draw weights, one per pool entry (used from each game's next episode)."""
        self.engine.set_opponent_weights(weights)

    # -- VecEnv API -------------------------------------------------------------------------
    def reset(self) -> np.ndarray:
        seed = self._seeds[0] if self._seeds[0] is not None else self._seed
        self._seed = int(seed)
        self._reset_seeds()
        self.engine.illegal_log.counts[:] = 0
        self.engine.start(self._seed, self.engine.seat)
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return self.engine.obs.copy()

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions, dtype=np.int64).reshape(self.num_envs)

    def step_wait(self):
        rew, done, fin = self.engine.play(self._actions)
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if fin is not None:
            names = self.engine.opponent_names
            for j, g in enumerate(fin.games.tolist()):  # only the few games that ended
                infos[g] = {
                    "terminal_observation": fin.obs[j],
                    "TimeLimit.truncated": False,
                    # "r": the game's reward (without shaping); "l": learner decisions
                    "episode": {"r": float(fin.ret[j]), "l": int(fin.length[j]), "t": round(float(fin.seconds[j]), 6)},
                    "won": float(fin.won[j]),
                    "round_points": int(fin.round_points[j]),
                    "seat": int(fin.seat[j]),
                    "opponent": names[int(fin.opponent[j])],
                    "capped": bool(fin.capped[j]),
                }
                if fin.illegal[j] >= 0:  # illegal_action="terminate" ended it
                    infos[g]["illegal_action"] = int(fin.illegal[j])
        return self.engine.obs, rew, done, infos

    def action_masks(self) -> np.ndarray:
        """``(B, A)`` bool: the learner's legal actions in every game (one call)."""
        return self.engine.masks

    # -- the rest of the VecEnv interface ---------------------------------------------------
    def close(self) -> None:
        pass

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        return [getattr(self, attr_name)] * len(list(self._get_indices(indices)))

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        setattr(self, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices: Any = None, **method_kwargs) -> Any:
        if method_name == "action_masks":
            # MaskablePPO stacks what this returns: the (B, A) array is a sequence of B rows.
            m = self.action_masks()
            return m if indices is None else m[list(self._get_indices(indices))]
        out = getattr(self, method_name)(*method_args, **method_kwargs)
        return [out] * len(list(self._get_indices(indices)))

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [False] * len(list(self._get_indices(indices)))

    def has_attr(self, attr_name: str) -> bool:
        return hasattr(self, attr_name)

    def seed(self, seed: int | None = None) -> list[int | None]:
        if seed is not None:
            self._seeds = [int(seed)] * self.num_envs
        return [seed] * self.num_envs
