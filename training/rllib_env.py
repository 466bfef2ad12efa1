"""The batched core as RLlib's single-agent env runners sample it (``gym_env_vectorize_mode="vector_entry_point"``).

    config.environment(ENV_NAME, env_config={...}).env_runners(num_envs_per_env_runner=256,
                                                               gym_env_vectorize_mode="vector_entry_point")

:class:`RLlibVectorEnv` is :class:`deckgym.vector_env.DeckGymVectorEnv` (``N`` games of one
batched core state, the learner in one seat of each, every other seat played inside the env
by the opponent pool) shaped for RLlib:

- **observations**: ``{"observations": core observation + derived features, "action_mask":
  float32 (A,)}`` per game, what :class:`deckgym.agents.rllib_module.MaskedPPOModule` reads;
- **autoreset** ``NEXT_STEP`` (what RLlib's runner expects: the finished game's last
  observation, then the next game's first on the following step);
- **lean infos**: ``{}`` on most steps; at an episode's end ``won`` (1 win, 0.5 shared, 0
  loss) and ``opponent`` (the pool index), read by :func:`record_episode`.

**Opponents** (``--opponents``): the pool's agents. **Self-play** (no opponents): the other
seats are played by a frozen copy of the learner (``self``, sampling its actions), whose
weights the trainer refreshes on a schedule (:meth:`RLlibVectorEnv.refresh_self`, on every
env runner at once). **League**: a snapshot of the learner joins the pool when it beats the
pool often enough (:meth:`RLlibVectorEnv.add_snapshot`), as with ``--engine sb3``; the pool
is the vector env's own (``add_opponent``, ``set_opponent_weights``,
:func:`deckgym.vector_env.league_weights`). No game is ever stepped alone.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from deckgym.rng import seed_of
from deckgym.vector_env import DeckGymVectorEnv, league_weights
from deckgym.vector_infos import Finished

ENV_NAME = "deckgym_vector"
SELF = "self"  # the pool entry that plays the learner's current weights (self-play)
OBS_KEY, MASK_KEY = "observations", "action_mask"  # deckgym.agents.rllib_module's keys (it needs Ray to import)


class RLlibVectorEnv(DeckGymVectorEnv):
    """``num_envs`` games of ``game`` for an RLlib env runner (see the module doc).

    Args:
        opponents: ``[(spec, weight), ...]``; empty for self-play.
        module_spec: the learner's ``RLModuleSpec`` (self-play and league snapshots are built from it).
        meta: the model metadata of :func:`deckgym.agents.rllib_agent.model_metadata_rllib` (the snapshots' agents).
        rules_kwargs: the fields of the game's rules (``{"bonus": True}``).
        The other arguments are :class:`DeckGymVectorEnv`'s and its options'; here ``features``
        defaults to True (RLlib's learners train on them) and an illegal action raises (the
        learner samples from the mask, so one is a bug).
    """

    def __init__(self, game: str = "racko", num_envs: int = 1, opponents: Any = (), rules_kwargs: dict | None = None,
                 episode: str = "round", reward: str = "win", features: bool = True,
                 features_version: int | None = None, module_spec: Any = None, meta: dict | None = None,
                 seed: int | None = None, shaping: float = 0.0) -> None:
        pool = [(str(s), float(w)) for s, w in opponents]
        self.self_play = not pool
        if self.self_play and (module_spec is None or meta is None):
            raise ValueError("self-play needs the learner's module spec and metadata (module_spec=, meta=)")
        self._spec, self._meta = module_spec, meta
        super().__init__(game, num_envs=num_envs, opponents=[s for s, _ in pool] or ["random"],
                         opponent_weights=[w for _, w in pool] or None, episode=episode, reward=reward,
                         shaping=shaping, features=features, features_version=features_version,
                         autoreset_mode=AutoresetMode.NEXT_STEP, seed=seed, illegal_action="raise",  # masked: a bug
                         **dict(rules_kwargs or {}))
        if self.self_play:  # the placeholder above only built the env: the learner's copy replaces it
            self.opponents[0] = self._snapshot_agent(None, SELF, seed_of(self.engine.last_seed, 7919, 0))
            self.opponent_names[0] = SELF
        self.base_weights = self.opponent_probs.copy()  # league_weights scales a normalised pool
        self.snapshots: list[int] = []  # pool indices of the league's snapshots, oldest first
        n_act = self.core.num_actions
        self.single_observation_space = spaces.Dict({
            OBS_KEY: self.single_observation_space,
            MASK_KEY: spaces.Box(0.0, 1.0, (n_act,), dtype=np.float32)})
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)

    # -- the pool: the learner's copy and the league ------------------------------------------
    def _snapshot_agent(self, state: dict | None, name: str, seed: int) -> Any:
        from deckgym.agents.rllib_agent import RLlibAgent

        module = self._spec.build()
        if state is not None:
            module.set_state(state)
        module.eval()
        agent = RLlibAgent(self.core, module=module, meta=self._meta, game=self.game, deterministic=False, seed=seed)
        agent.spec = name
        return agent

    def refresh_self(self, state: dict) -> None:
        """Self-play: the ``self`` entry plays ``state`` (the learner's weights) from now on."""
        if self.self_play:
            self.opponents[0].module.set_state(state)

    def add_snapshot(self, state: dict, name: str, snapshot_weight: float, max_snapshots: int) -> None:
        """A frozen copy of ``state`` joins the pool; the snapshots share ``snapshot_weight`` of the
        draw probability, at most ``max_snapshots`` of them (the oldest leaves: weight 0)."""
        k = self.add_opponent(self._snapshot_agent(state, name, seed_of(self.engine.last_seed, 7919, len(self.opponents))),
                              weight=0.0, name=name)
        self.snapshots = [*self.snapshots, k][-max_snapshots:]
        w = league_weights(self.base_weights, len(self.snapshots), snapshot_weight)
        weights = np.zeros(len(self.opponents))
        weights[:len(self.base_weights)] = w[:len(self.base_weights)]
        weights[self.snapshots] = w[len(self.base_weights):]
        self.set_opponent_weights(weights)

    # -- what RLlib sees -------------------------------------------------------------------
    def _dict_obs(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        # NEXT_STEP: a finished game's row shows its last observation with its next game's
        # mask (the one its next action is checked against; a terminal row needs no mask)
        return {OBS_KEY: obs, MASK_KEY: self.action_masks().astype(np.float32)}

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        obs, infos = super().reset(seed=seed, options=options)
        return self._dict_obs(obs), infos

    def step(self, actions: Any) -> tuple[dict, np.ndarray, np.ndarray, np.ndarray, dict]:
        obs, rew, term, trunc, infos = super().step(np.asarray(actions).astype(np.int64, copy=False))
        return self._dict_obs(obs), rew, term, trunc, infos

    def _step_infos(self, fin: Finished | None, final: bool = False) -> dict[str, Any]:
        if fin is None:
            return {}
        has = np.zeros(self.num_envs, bool)
        has[fin.games] = True
        won = np.zeros(self.num_envs)
        won[fin.games] = fin.won
        opp = np.zeros(self.num_envs, np.int64)
        opp[fin.games] = fin.opponent
        return {"won": won, "_won": has, "opponent": opp, "_opponent": has.copy()}


def make_env(config: dict[str, Any]) -> RLlibVectorEnv:
    """RLlib's env creator (vector entry point): ``config`` is the env config plus ``num_envs``."""
    keys = ("game", "num_envs", "opponents", "rules_kwargs", "episode", "reward", "features", "features_version",
            "module_spec", "meta", "seed", "shaping")
    return RLlibVectorEnv(**{k: config[k] for k in keys if k in config})


def pool_of(env_runner: Any) -> RLlibVectorEnv | None:
    """The :class:`RLlibVectorEnv` of an env runner (None: a runner without an env, the driver's)."""
    env = getattr(env_runner, "env", None)
    return None if env is None else env.unwrapped


def record_episode(*, episode: Any, metrics_logger: Any = None, env_runner: Any = None, **_: Any) -> None:
    """``on_episode_end``: the episode's ``won`` into RLlib's results (``env_runners/win_rate``, a
    mean over the last 1,000 episodes) and per iteration: ``wins``/``episodes`` and by opponent."""
    info = episode.get_infos(-1)
    if metrics_logger is None or "won" not in info:
        return
    won = float(info["won"])
    metrics_logger.log_value("win_rate", won, reduce="mean", window=1000)
    metrics_logger.log_value("wins", won, reduce="sum")
    metrics_logger.log_value("episodes", 1, reduce="sum")
    env = pool_of(env_runner)
    if env is not None:
        name = env.opponent_names[int(info["opponent"])]
        metrics_logger.log_value(("wins_vs", name), won, reduce="sum")
        metrics_logger.log_value(("episodes_vs", name), 1, reduce="sum")
