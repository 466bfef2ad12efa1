"""``CoreVecEnv``: an SB3 ``VecEnv`` over a batched game core, opponents played inside.

A thin SB3 adapter of :class:`deckgym.vector_env.DeckGymVectorEnv` (which holds the games,
the opponent pool, the features, the shaping and the rewards): the learner plays one seat in
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

from typing import Any, Iterable, Sequence

import numpy as np
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.vec_env import VecEnv

from deckgym.agents.base import Agent
from deckgym.vector_env import DeckGymVectorEnv


class CoreVecEnv(VecEnv):
    """SB3 vector env: the learner in one seat of ``num_envs`` games of one batched core.

    Args:
        game: ``"racko"`` or ``"leastscore"``.
        num_envs: B, games played at once.
        opponents: pool entries, agent specs or :class:`Agent` objects (built for this
            env's core); ``opponent_weights``: their draw probabilities (default equal).
        players: table size (default: the rules' default); ``rules_kwargs``: other rules
            fields; or pass ``rules`` directly.
        episode: ``"round"`` or ``"match"``; ``reward``: ``"win"`` or ``"points"``.
        shaping: coefficient of the potential-based shaping reward (0: none).
        features: append the game's derived features to the observation;
            ``features_version``: which layout (default: the newest).
        seed: seeds everything (games, seats, opponents).
        history: record the public history (``DeckGymVectorEnv(history=True)``), for a teacher
            or opponents that act on information states.
    """

    def __init__(
        self,
        game: str,
        num_envs: int = 64,
        opponents: Sequence[str | Agent] = ("random",),
        opponent_weights: Sequence[float] | None = None,
        players: int | None = None,
        rules: Any = None,
        rules_kwargs: dict[str, Any] | None = None,
        episode: str = "round",
        reward: str = "win",
        shaping: float = 0.0,
        features: bool = True,
        seed: int = 0,
        features_version: int | None = None,
        history: bool = False,
    ) -> None:
        rule_fields = dict(rules_kwargs or {}) if rules is None else {}
        self.venv = DeckGymVectorEnv(
            game, num_envs=num_envs, num_players=players if rules is None else None, opponents=opponents,
            opponent_weights=opponent_weights, episode=episode, reward=reward, shaping=shaping, features=features,
            features_version=features_version, autoreset_mode=AutoresetMode.SAME_STEP, rules=rules, seed=seed,
            history=history, illegal_action="raise", **rule_fields,  # a masked learner's illegal action is a bug
        )
        self.render_mode = None
        super().__init__(num_envs, self.venv.single_observation_space, self.venv.single_action_space)
        self._seed = int(seed)

    # -- what training and the tests read from the env: the vector env's ------------------------
    game = property(lambda self: self.venv.game)
    core = property(lambda self: self.venv.core)
    rules = property(lambda self: self.venv.rules)
    num_players = property(lambda self: self.venv.num_players)
    episode = property(lambda self: self.venv.episode)
    reward_mode = property(lambda self: self.venv.reward_mode)
    shaping = property(lambda self: self.venv.shaping)
    use_features = property(lambda self: self.venv.use_features)
    features_version = property(lambda self: self.venv.features_version)
    opponents = property(lambda self: self.venv.opponents)
    opponent_names = property(lambda self: self.venv.opponent_names)
    opponent_probs = property(lambda self: self.venv.opponent_probs)
    state = property(lambda self: self.venv.state)
    learner_seat = property(lambda self: self.venv.learner_seat)
    opp_of = property(lambda self: self.venv.opp_of)
    inner_steps = property(lambda self: self.venv.inner_steps)

    def add_opponent(self, opponent: str | Agent, weight: float = 1.0, name: str | None = None) -> int:
        """Add an agent (or spec) to the pool; returns its index."""
        return self.venv.add_opponent(opponent, weight=weight, name=name)

    def set_opponent_weights(self, weights: Iterable[float]) -> None:
        self.venv.set_opponent_weights(weights)

    # -- VecEnv API -------------------------------------------------------------------------
    def reset(self) -> np.ndarray:
        seed = self._seeds[0] if self._seeds[0] is not None else self._seed
        self._seed = int(seed)
        self._reset_seeds()
        obs, _ = self.venv.reset(seed=self._seed)
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions, dtype=np.int64).reshape(self.num_envs)

    def step_wait(self):
        rew, done, fin = self.venv._play(self._actions)
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if fin is not None:
            names = self.venv.opponent_names
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
        return self.venv._obs, rew, done, infos

    def action_masks(self) -> np.ndarray:
        """``(B, A)`` bool: the learner's legal actions in every game (one call)."""
        return self.venv.action_masks()

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
