"""``DeckGymVectorEnv``: a Gymnasium vector env of N games of one batched core, opponents inside.

    import gymnasium, deckgym                       # importing deckgym registers the ids
    envs = gymnasium.make_vec("deckgym/RackO-v0", num_envs=64, vectorization_mode="vector_entry_point",
                              num_players=2, opponents=["racko:sequence", "random"])
    obs, infos = envs.reset(seed=0)
    obs, rewards, terminated, truncated, infos = envs.step(actions)   # (64,) legal actions

The learner plays one seat in each of ``N`` games held by one batched core state. Every other
seat is played *inside* the env by an opponent drawn (per game, at each new episode) from a
weighted pool: agent specs (``"random"``, ``"racko:sequence"``, ``"ppo:PATH"``, ...) or agent
objects with ``act(observations, masks)`` and ``seed(seed)`` (:class:`deckgym.agents.base.Agent`).
After the learner's batched action the opponents move until the learner is to move again in
every game (:func:`deckgym.playout.play_out`): a loop over *steps*, never over games; each
inner step is one ``act`` call per opponent in the pool for all the games it plays.

- **Spaces**: ``single_observation_space`` is ``Box(float32)``, the core's observation of the
  learner's seat (``core.observe``) plus, with ``features=True``, the game's derived features
  (``<game>_env.planning.features``); ``single_action_space`` is ``Discrete(core.num_actions)``.
  ``observation_space`` / ``action_space`` are their batches (``(N, D)`` Box, MultiDiscrete).
- **Masks**: :meth:`~DeckGymVectorEnv.action_masks` is the ``(N, A)`` bool mask of the
  learner's legal actions; ``infos["action_mask"]`` holds the same as int8 (as the
  single-agent view does).
- **Illegal actions** (:mod:`deckgym.illegal`), as the single-agent view: ``"terminate"``
  (default) ends that game's episode, reward −1, a loss (``won`` 0, ``round_points`` 0),
  ``infos["illegal_action"]`` the action, ``infos["illegal_actions"]`` the row's count since
  the last seeded reset; the first in each phase is logged. ``"raise"``: ``ValueError``.
- **Autoreset** (``metadata["autoreset_mode"]``, Gymnasium's
  :class:`~gymnasium.vector.AutoresetMode`): ``NEXT_STEP`` (default) returns the finished
  game's last observation; the next ``step`` ignores that game's action and returns the first
  observation of its next game, with reward 0. (The new game's mask is already in
  ``action_masks()`` on the finishing step, so a masked policy always has a legal action.)
  ``SAME_STEP`` returns the next game's first observation at once, the finished one's in
  ``infos["final_obs"]`` and its infos in ``infos["final_info"]``.
- **Infos**: every step ``action_mask``, ``seat`` (the learner's) and ``opponent`` (the pool
  entry's name); at an episode's end ``won`` (1 win, 0.5 shared, 0 loss), ``round_points``
  and ``capped``, each with Gymnasium's ``_key`` mask of the games that hold it.
- **Rewards**: ``reward="win"`` (the core's zero-sum win/loss at the episode end) or
  ``"points"``; plus potential-based shaping ``shaping * (Φ(next) − Φ(now))`` with the game's
  ``shaping_potential`` (Rack-O: the rack's longest increasing subsequence / 10; Least Score:
  − hand total / 50). An episode ended by the round cap (R9/L10) is ``truncated``; by the
  rules its highest round score wins in Rack-O (R9), nobody wins in Least Score (L10, all 0).
- **Seeding**: ``reset(seed=s)`` deals game ``i`` from the core's random stream ``(s, i)``;
  learner seats, opponent draws and the opponents' own randomness come from generators
  seeded by ``s``. ``reset()`` without a seed continues from the last seeded one.
- **Seat**: ``seat=None`` draws the learner's seat per episode; an int fixes it;
  ``reset(options={"seat": k})`` fixes it until the next reset.

The loop itself is :class:`deckgym.learner.LearnerEngine` (``env.engine``); the keywords are
the fields of :class:`deckgym.learner_options.LearnerOptions` (or ``options=``), and any other
keyword is a field of the game's rules (``bonus=True``, ``max_turns=``...).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from deckgym.learner import LearnerEngine, engine_attribute
from deckgym.learner_options import LearnerOptions
from deckgym.registration import game as game_entry
from deckgym.rng import check_seed
from deckgym.vector_infos import Finished, step_infos

__all__ = ["DeckGymVectorEnv", "league_weights", "make_agent_from_spec"]

def make_agent_from_spec(spec: str, core: Any, seed: int, game: str) -> Any:
    """The agent factory the front ends give the engine (the agents registry, which sits above
    the engine; imported only when a spec is to be built)."""
    from deckgym.agents.registry import make_agent

    return make_agent(spec, core, seed=seed, game=game)


def league_weights(base: Sequence[float], n_snapshots: int, snapshot_weight: float) -> np.ndarray:
    """A league's draw weights: the base pool's, scaled to ``1 - snapshot_weight``, then
    ``snapshot_weight`` shared by ``n_snapshots`` snapshots (none: the base pool as it is)."""
    b = np.asarray(base, dtype=float)
    if n_snapshots == 0:
        return b
    return np.concatenate([b * (1 - snapshot_weight), np.full(n_snapshots, snapshot_weight / n_snapshots)])


class DeckGymVectorEnv(VectorEnv):
    """N games of a deckgym game, the learner in one seat of each (see the module docstring).

    Args:
        game: a registered game's name.
        num_envs: N, games played at once.
        autoreset_mode: ``AutoresetMode.NEXT_STEP`` (default) or ``SAME_STEP`` (or their values).
        render_mode: ``"ansi"`` or ``"rgb_array"``: :meth:`render` gives one frame per game.
        options: a :class:`~deckgym.learner_options.LearnerOptions`; its fields may also be
            given as keywords (over it), and any other keyword is a rules field.
    """

    # what a user may change on a built env: the engine's settings
    illegal_action = engine_attribute("illegal_action")
    seat = engine_attribute("seat")
    shaping = engine_attribute("shaping")

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": ["ansi", "rgb_array"]}

    def __init__(self, game: str = "racko", num_envs: int = 1, *,
                 autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP, render_mode: str | None = None,
                 options: LearnerOptions | None = None, **kwargs: Any) -> None:
        opt = LearnerOptions.from_kwargs(options, **kwargs)
        try:
            mode = AutoresetMode(autoreset_mode)
        except ValueError:
            raise ValueError(f"autoreset_mode must be AutoresetMode.NEXT_STEP or SAME_STEP, got {autoreset_mode!r}") from None
        if mode not in (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP):
            raise ValueError(f"autoreset_mode {mode} is not supported; use NEXT_STEP or SAME_STEP")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        self._attach(LearnerEngine(game, num_envs, opt, make_agent=make_agent_from_spec), mode, render_mode)

    @classmethod
    def on_engine(cls, engine: LearnerEngine, autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP) -> DeckGymVectorEnv:
        """A Gymnasium vector view of an engine another view holds (the SB3 env's, for the
        teacher of a warm start): both play the same games."""
        env = cls.__new__(cls)
        env._attach(engine, AutoresetMode(autoreset_mode), None)
        return env

    def _attach(self, engine: LearnerEngine, mode: AutoresetMode, render_mode: str | None) -> None:
        self.engine = engine
        self.num_envs = engine.num_envs
        self.metadata = {**type(self).metadata, "autoreset_mode": mode}
        self.autoreset_mode = mode
        self.render_mode = render_mode
        self.single_observation_space = spaces.Box(engine.observation_low, engine.observation_high, dtype=np.float32)
        self.single_action_space = spaces.Discrete(engine.core.num_actions)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._first_seed = engine.options.seed
        self._pending = np.zeros(self.num_envs, bool)  # NEXT_STEP: games that show a finished episode

    def __getattr__(self, name: str) -> Any:
        # only reached when the env has no such attribute: the engine's public ones are the env's
        if not name.startswith("_") and "engine" in self.__dict__:
            return getattr(self.__dict__["engine"], name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    # -- Gymnasium API ----------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        """Deal ``num_envs`` new games (game ``i`` from the core's stream ``(seed, i)``)."""
        check_seed(seed)
        seat = self.engine.seat_of_options(options)
        if seed is not None:  # a seeded reset starts the counts again (so that it replays exactly)
            self.engine.illegal_log.counts[:] = 0
        if seed is None:
            seed = self._first_seed  # the constructor's seed, once
        self._first_seed = None
        super().reset(seed=seed)
        if seed is None:  # continue from the last seeded reset (fresh entropy if there was none)
            seed = int(self.np_random.integers(2**31 - 1))
        self.engine.start(int(seed), seat)
        self._pending = np.zeros(self.num_envs, bool)
        return self.engine.obs.copy(), self._step_infos(None)

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        """One learner decision in every game (see the module docstring for the autoreset)."""
        if self.engine.state is None:
            raise RuntimeError("call reset() before step()")
        pending = self._pending.copy()
        rew, done, fin = self.engine.play(actions, ~pending if pending.any() else None)
        obs = self.engine.obs.copy()
        terminated = np.zeros(self.num_envs, bool)
        truncated = np.zeros(self.num_envs, bool)
        if fin is not None:
            truncated[fin.games] = fin.capped
            terminated[fin.games] = ~fin.capped
        if self.autoreset_mode == AutoresetMode.NEXT_STEP:
            self._pending = done
            if fin is not None:
                obs[fin.games] = fin.obs
            return obs, rew, terminated, truncated, self._step_infos(fin)
        infos = self._step_infos(None)
        if fin is not None:
            final_obs = np.full(self.num_envs, None, dtype=object)
            for j, g in enumerate(fin.games.tolist()):
                final_obs[g] = fin.obs[j]
            infos["final_obs"], infos["_final_obs"] = final_obs, done.copy()
            infos["final_info"], infos["_final_info"] = self._step_infos(fin, final=True), done.copy()
        return obs, rew, terminated, truncated, infos

    def action_masks(self) -> np.ndarray:
        """``(N, A)`` bool: the learner's legal actions in every game (one call)."""
        return self.engine.masks

    def render(self) -> tuple[Any, ...] | None:
        """One frame per game (``render_mode``): the spectator view, every hand shown."""
        if self.render_mode is None:
            return None
        if self.engine.state is None:
            raise RuntimeError("call reset() before render()")
        mod = game_entry(self.engine.game).descriptor.render
        draw = mod.ansi if self.render_mode == "ansi" else mod.rgb_array
        return tuple(draw(self.engine.core, self.engine.state, i) for i in range(self.num_envs))

    def _step_infos(self, fin: Finished | None, final: bool = False) -> dict[str, Any]:
        """Gymnasium's dict of per-game arrays (:func:`deckgym.vector_infos.step_infos`); a
        subclass may report other infos."""
        return step_infos(self.engine, fin, final)
