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

Other keyword arguments are fields of the game's rules (``bonus=True``, ``max_turns=``...).
"""

from __future__ import annotations

import math
import time
from typing import Any, Iterable, Sequence

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from deckgym.illegal import IllegalActionLog, check_illegal_action_mode, illegal_action_message
from deckgym.core import check_core_options, check_obs_option, is_int
from deckgym.playout import infostate_core, observe_for, play_out, wants_infostate
from deckgym.registration import game as game_entry
from deckgym.rng import check_seed, seed_of
from deckgym.vector_infos import Finished, step_infos

__all__ = ["DeckGymVectorEnv", "check_opponent_weights", "league_weights"]


def check_opponent_weights(weights: Iterable[float], n: int) -> np.ndarray:
    """``weights`` as a float array: ``n`` finite, non-negative numbers with a positive sum."""
    try:
        w = np.asarray(list(weights), dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"opponent weights must be numbers, got {weights!r}") from None
    if w.shape != (n,):
        raise ValueError(f"need one weight per opponent ({n}), got {w.size}: {w.tolist()}")
    if not np.isfinite(w).all() or (w < 0).any() or w.sum() <= 0:
        raise ValueError(f"opponent weights must be finite and non-negative with a positive sum, got {w.tolist()}")
    return w


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
        game: ``"racko"`` or ``"leastscore"``; ``num_envs``: N, games played at once.
        num_players: table size (default: the rules' default); other rule fields as keywords,
            or a ready ``rules`` object.
        opponents: the pool, agent specs or agent objects (built for this env's core);
            ``opponent_weights``: their draw probabilities (default equal).
        seat: ``None`` (drawn per episode) or the learner's fixed seat.
        episode: ``"round"`` or ``"match"``; ``reward``: ``"win"`` or ``"points"``.
        shaping: coefficient of the potential-based shaping reward (0: none).
        features: append the game's derived features; ``features_version``: their layout.
        obs: ``"default"`` or ``"infostate"`` (the learner observes information states; the
            core is built with ``obs="infostate"``; not with ``features``).
        history: record every game's public history (the games are played on the core's
            information-state twin) while the learner keeps the observation ``obs`` says, so
            that :meth:`observe_for` can give an information-state agent its view of the
            learner's seat (a search teacher in expert iteration), and information-state
            agents can sit in the pool. Implied by ``obs="infostate"`` and by such an agent in
            ``opponents``.
        autoreset_mode: ``AutoresetMode.NEXT_STEP`` (default) or ``SAME_STEP`` (or their values).
        illegal_action: ``"terminate"`` (default) or ``"raise"`` (module docstring).
        render_mode: ``"ansi"`` or ``"rgb_array"``: :meth:`render` gives one frame per game.
        seed: the seed of the first ``reset()`` that is given none (default: fresh entropy).
    """

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": ["ansi", "rgb_array"]}

    def __init__(
        self,
        game: str = "racko",
        num_envs: int = 1,
        num_players: int | None = None,
        opponents: Sequence[Any] | str | None = None,
        opponent_weights: Sequence[float] | None = None,
        seat: int | None = None,
        episode: str = "round",
        reward: str = "win",
        shaping: float = 0.0,
        features: bool = False,
        features_version: int | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        render_mode: str | None = None,
        rules: Any = None,
        seed: int | None = None,
        obs: str = "default",
        history: bool = False,
        illegal_action: str = "terminate",
        **rule_kwargs: Any,
    ) -> None:
        entry = game_entry(game)
        check_obs_option(obs, features)
        check_illegal_action_mode(illegal_action)
        if not is_int(num_envs) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        check_core_options(episode, reward)  # before the rules, whose errors are about the game
        try:
            mode = AutoresetMode(autoreset_mode)
        except ValueError:
            raise ValueError(f"autoreset_mode must be AutoresetMode.NEXT_STEP or SAME_STEP, got {autoreset_mode!r}") from None
        if mode not in (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP):
            raise ValueError(f"autoreset_mode {mode} is not supported; use NEXT_STEP or SAME_STEP")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        check_seed(seed)
        if not isinstance(shaping, (int, float, np.number)) or isinstance(shaping, bool) or not math.isfinite(shaping):
            raise ValueError(f"shaping must be a finite number, got {shaping!r}")
        rules = entry.rules_of(rules, num_players, **rule_kwargs)
        self.game = entry.name
        self.rules = rules
        self.core = entry.make_core(rules, episode=episode, reward=reward, **({"obs": obs} if obs != "default" else {}))
        # Opponents are built on the default-observation core, whatever the learner sees: the
        # play-out loop gives them default observations (an information-state agent finds its
        # twin itself), and an agent sized by the information-state core would misread them.
        self._agent_core = self.core
        if obs != "default":
            self._agent_core = entry.make_core(rules, episode=episode, reward=reward)
            self._agent_core.pair_infostate(self.core)  # what infostate_core() of it returns: this core
        self.num_envs = int(num_envs)
        self.num_players = self.core.num_players
        self.episode, self.reward_mode = episode, reward
        self.shaping = float(shaping)
        self.use_features = bool(features)
        self.metadata = {**type(self).metadata, "autoreset_mode": mode}
        self.autoreset_mode = mode
        self.render_mode = render_mode
        self.illegal_action = illegal_action
        self.illegal_log = IllegalActionLog(self.num_envs)
        self.seat = self._check_seat(seat, "seat")
        self._feat = None
        self.features_version = None
        if self.use_features:
            self.features_version = self._features.FEATURES_VERSION if features_version is None else int(features_version)
            flow, fhigh = self._features.feature_bounds(self.core, version=self.features_version)
        else:
            flow = fhigh = np.zeros(0, np.float32)
        n_obs = self.core.obs_size
        low = np.broadcast_to(np.asarray(getattr(self.core, "obs_low", -1.0), np.float32), (n_obs,))
        high = np.broadcast_to(np.asarray(getattr(self.core, "obs_high", np.inf), np.float32), (n_obs,))
        self.single_observation_space = spaces.Box(np.concatenate([low, flow]).astype(np.float32),
                                                   np.concatenate([high, fhigh]).astype(np.float32), dtype=np.float32)
        self.single_action_space = spaces.Discrete(self.core.num_actions)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)

        self._seed = 0 if seed is None else int(seed)  # the last game seed; seeds agents built later
        self._first_seed = seed
        if opponents is None:
            opponents = entry.spec.default_opponents
        elif isinstance(opponents, str) or callable(getattr(opponents, "act", None)):
            opponents = [opponents]
        try:
            opponents = list(opponents)
        except TypeError:
            raise ValueError(f"opponents must be a list of agent specs or Agents, got {opponents!r}") from None
        if not opponents:
            raise ValueError("give at least one opponent")
        weights = check_opponent_weights([1.0] * len(opponents) if opponent_weights is None else opponent_weights,
                                         len(opponents))
        self.opponents: list[Any] = []
        self.opponent_names: list[str] = []
        self._weights = np.zeros(0)
        self._play_core: Any = None  # chosen once the first pool is known (add_opponent checks later entries)
        for o, w in zip(opponents, weights):
            self.add_opponent(o, weight=float(w))
        # the core that plays: the one the learner observes, or its twin that records the history
        self.history = bool(history) or obs == "infostate" or any(wants_infostate(a) for a in self.opponents)
        self._play_core = infostate_core(self.core) if self.history else self.core
        self._observe = self._play_core.observe if obs == "infostate" or not self.history else self._play_core.observe_default
        self.keep_finished = False  # keep the last finished game's state (the single-agent view renders it)
        self.finished_state: Any = None
        self.state: Any = None
        self.inner_steps = 0  # opponent decisions played (all games), for the benchmark
        self._obs: np.ndarray | None = None
        self._masks: np.ndarray | None = None
        self._pending = np.zeros(self.num_envs, bool)  # NEXT_STEP: games that show a finished episode

    # -- the opponent pool ------------------------------------------------------------------
    def add_opponent(self, opponent: Any, weight: float = 1.0, name: str | None = None) -> int:
        """Add an agent (or agent spec) to the pool with draw weight ``weight``; returns its index."""
        k = len(self.opponents)
        if isinstance(opponent, str):
            from deckgym.agents.registry import make_agent  # agents sit above deckgym: resolved only when asked

            agent = make_agent(opponent, self._agent_core, seed=seed_of(self._seed, 7919, k), game=self.game)
            label = opponent
        elif callable(getattr(opponent, "act", None)) and callable(getattr(opponent, "seed", None)):
            agent = opponent
            label = getattr(opponent, "spec", type(opponent).__name__)
        else:
            raise ValueError(f"opponent {k} must be an agent spec such as 'random' or an Agent "
                             f"(with act() and seed()), got {opponent!r} ({type(opponent).__name__})")
        if not isinstance(weight, (int, float, np.number)) or not math.isfinite(weight) or weight < 0:
            raise ValueError(f"an opponent's weight must be a finite number >= 0, got {weight!r}")
        if wants_infostate(agent) and self._play_core is not None and not self.history:
            raise ValueError(f"opponent {label!r} acts on information states: build the vector env with "
                             "history=True (or with such an agent among its first opponents) so that the games record them")
        self.opponents.append(agent)
        self.opponent_names.append(name or label)
        self._weights = np.append(self._weights, float(weight))
        return k

    def set_opponent_weights(self, weights: Iterable[float]) -> None:
        """New draw weights, one per pool entry (used from the next episode of each game)."""
        self._weights = check_opponent_weights(weights, len(self.opponents))

    @property
    def opponent_probs(self) -> np.ndarray:
        return self._weights / self._weights.sum()

    # -- Gymnasium API ----------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        """Deal ``num_envs`` new games (game ``i`` from the core's stream ``(seed, i)``)."""
        check_seed(seed)
        seat = self._reset_options(options)
        if seed is not None:  # a seeded reset starts the counts again (so that it replays exactly)
            self.illegal_log.counts[:] = 0
        if seed is None:
            seed = self._first_seed  # the constructor's seed, once
        self._first_seed = None
        super().reset(seed=seed)
        if seed is None:  # continue from the last seeded reset (fresh entropy if there was none)
            seed = int(self.np_random.integers(2**31 - 1))
        self._start(int(seed), seat)
        return self._obs.copy(), self._step_infos(None)

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        """One learner decision in every game (see the module docstring for the autoreset)."""
        pending = self._pending.copy()
        rew, done, fin = self._play(actions, ~pending if pending.any() else None)
        obs = self._obs.copy()
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

    def observe_for(self, agent: Any) -> np.ndarray:
        """What ``agent`` observes of the learner's seat in every game now (``(N, D)``, no
        features): its information state if it wants one, else the default observation.
        ``ValueError`` if it wants information states and this env records no history. (With
        ``NEXT_STEP``, a game that shows its finished episode is already dealt again: its row
        is the next game's.)"""
        if wants_infostate(agent) and not self.history:
            raise ValueError(f"agent {getattr(agent, 'spec', type(agent).__name__)!r} acts on information states: "
                             "build the vector env with history=True so that it records them")
        if self.state is None:
            raise RuntimeError("call reset() before observe_for()")
        return observe_for(agent, self._play_core, self.state, self.learner_seat)

    def action_masks(self) -> np.ndarray:
        """``(N, A)`` bool: the learner's legal actions in every game (one call)."""
        return self._masks

    def render(self) -> tuple[Any, ...] | None:
        """One frame per game (``render_mode``): the spectator view, every hand shown."""
        if self.render_mode is None:
            return None
        if self.state is None:
            raise RuntimeError("call reset() before render()")
        mod = game_entry(self.game).spec.render
        draw = mod.ansi if self.render_mode == "ansi" else mod.rgb_array
        return tuple(draw(self.core, self.state, i) for i in range(self.num_envs))

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_feat"] = None  # a module: looked up again after unpickling
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)  # the core rebuilds its own work buffers (deckgym.core)

    # -- the shared engine (also used by the SB3 and single-agent adapters) -----------------
    @property
    def _features(self) -> Any:
        if self._feat is None:
            self._feat = game_entry(self.game).features()
        return self._feat

    def _check_seat(self, seat: Any, what: str) -> int | None:
        if seat is not None and not (is_int(seat) and 0 <= seat < self.num_players):
            raise ValueError(f"{what} must be None or a seat in 0..{self.num_players - 1}, got {seat!r}")
        return None if seat is None else int(seat)

    def _reset_options(self, options: Any) -> int | None:
        if options is None:
            return self.seat
        if not isinstance(options, dict):
            raise ValueError(f"options must be a dict such as {{'seat': 0}} or None, got {options!r}")
        unknown = set(options) - {"seat"}
        if unknown:
            raise ValueError(f"unknown reset option(s) {sorted(unknown)}; valid: 'seat'")
        return self._check_seat(options.get("seat", self.seat), "options['seat']")

    def _start(self, seed: int, seat: int | None) -> None:
        """Deal every game from ``seed`` and play the opponents up to the learner's first move."""
        B = self.num_envs
        self._seed = seed
        self._fixed_seat = seat
        self.rng = np.random.default_rng(seed_of(seed, 1))
        for k, agent in enumerate(self.opponents):
            agent.seed(seed_of(seed, 7919, k))
        self.state = self._play_core.init(B, seed, game_ids=np.arange(B))
        self.finished_state = None
        self.learner_seat = np.zeros(B, np.int64)
        self.opp_of = np.zeros(B, np.int64)
        self._owner = np.zeros((B, self.num_players), np.int64)
        self.ep_ret = np.zeros(B, np.float64)
        self.ep_len = np.zeros(B, np.int64)
        self.ep_start = np.zeros(B, np.float64)
        self._draw(np.arange(B))
        self._phi = np.zeros(B, np.float32)
        self._phi_terminal = np.zeros(B, np.float32)
        self._pending = np.zeros(B, bool)
        self._fin: list[dict[str, np.ndarray]] = []
        self._advance(np.zeros(B, np.float32), np.zeros(B, bool))  # opponents who sit before the learner
        self._fin = []  # a game the opponents ended before the learner's first move reports nothing
        self._obs, raw, _, _ = self._learner_obs()
        self._phi = self._potential(raw)
        self._masks = self._play_core.legal_action_mask(self.state)

    def _check_actions(self, actions: Any, active: np.ndarray | None) -> tuple[np.ndarray, np.ndarray | None]:
        """The actions as int64 and the ``(B,)`` rows whose action is illegal (``None``: none);
        ``ValueError`` for a wrong shape or dtype, an action out of range, or (``"raise"``) an
        illegal one."""
        a = np.asarray(actions)
        if a.shape != (self.num_envs,) or not np.issubdtype(a.dtype, np.integer):
            raise ValueError(f"actions must be {self.num_envs} integers (shape ({self.num_envs},)), "
                             f"got {a.dtype} of shape {a.shape}")
        a = a.astype(np.int64, copy=False)
        rows = np.arange(self.num_envs) if active is None else np.flatnonzero(active)
        out = (a[rows] < 0) | (a[rows] >= self.core.num_actions)
        if out.any():
            bad = rows[np.flatnonzero(out)]
            raise ValueError(f"actions {a[bad][:10].tolist()} in games {bad[:10].tolist()} are out of range "
                             f"0..{self.core.num_actions - 1}")
        legal = self._masks[rows, a[rows]]
        if legal.all():
            return a, None
        if self.illegal_action == "raise":
            g = int(rows[np.flatnonzero(~legal)[0]])
            raise ValueError(self._illegal_message(g, int(a[g])))
        illegal = np.zeros(self.num_envs, bool)
        illegal[rows[~legal]] = True
        return a, illegal

    def _illegal_message(self, g: int, action: int) -> str:
        return illegal_action_message(self.core, self.state.take(np.array([g])), action, self._masks[g], learner=True,
                                      game=None if self.num_envs == 1 else g)

    def _end_illegal(self, a: np.ndarray, illegal: np.ndarray, rew: np.ndarray, done: np.ndarray) -> None:
        """``illegal_action="terminate"``: the games ``illegal`` end at once, reward −1 to the
        learner, a loss; a warning the first time in each phase, then only counted."""
        games = np.flatnonzero(illegal)
        self.illegal_log.record(self.core.phase_names, games, self.core.phase(self.state)[games],
                                lambda g: self._illegal_message(g, int(a[g])))
        rew[games] = -1.0
        self.ep_ret[games] -= 1.0
        self.ep_len[games] += 1
        seat = self.learner_seat[games]
        n = len(games)
        self._fin.append(dict(
            games=games, state=self.state.take(games), won=np.zeros(n), round_points=np.zeros(n, np.int64),
            seat=seat.copy(), opponent=self.opp_of[games].copy(), ret=self.ep_ret[games].copy(),
            length=self.ep_len[games].copy(), seconds=time.perf_counter() - self.ep_start[games],
            capped=np.zeros(n, bool), illegal=a[games].copy()))
        done[games] = True
        self._restart(games)

    def _play(self, actions: Any, active: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, Finished | None]:
        """The learner's action in the ``active`` games (default all), then the opponents'.

        Returns the learner's rewards, which games ended, and what ended (``None``: nothing).
        Ended games are dealt again at once; their new games wait for the learner's move.
        """
        if self.state is None:
            raise RuntimeError("call reset() before step()")
        B = self.num_envs
        a, illegal = self._check_actions(actions, active)
        rew = np.zeros(B, np.float32)
        done = np.zeros(B, bool)
        self._fin = []
        if illegal is not None:  # illegal_action="terminate": those games end here, the others play on
            self._end_illegal(a, illegal, rew, done)
            active = ~illegal if active is None else active & ~illegal
        if active is None:
            self.ep_len += 1
            res = self._play_core.step(self.state, a, check=False)  # checked above against the same mask
            self._collect(res, np.arange(B), rew, done)
        else:
            rows = np.flatnonzero(active)
            self.ep_len[rows] += 1
            if rows.size:
                sub = self.state.take(rows)
                res = self._play_core.step(sub, a[rows], check=False)
                self.state.put(rows, sub)
                self._collect(res, rows, rew, done)
        self._advance(rew, done)
        obs, raw, term_obs, term_raw = self._learner_obs()
        if self.shaping:
            # potential-based: shaping * (Φ(next obs of this episode) − Φ(this obs)); the next
            # obs of a finished episode is its terminal observation (recorded by _finish).
            phi = self._potential(raw)
            if self._fin:
                self._phi_terminal[np.concatenate([c["games"] for c in self._fin])] = self._potential(term_raw)
            nxt = np.where(done, self._phi_terminal, phi)
            rew += (self.shaping * (nxt - self._phi)).astype(np.float32)
            if active is not None:
                rew[~active] = 0.0
            self._phi = phi
        self._obs = obs
        self._masks = self._play_core.legal_action_mask(self.state)
        fin = None
        if self._fin:
            ends = {k: np.concatenate([c[k] for c in self._fin]) for k in self._fin[0] if k != "state"}
            fin = Finished(obs=term_obs, **ends)
        return rew, done, fin

    def _learner_obs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
        """The learner's observations (with features, raw), then the same of the games
        ``_finish`` recorded (``None`` if none ended).

        One ``observe`` and one features call serve them all: both cost per call as much as
        per row, and a few games end in most steps.
        """
        B = self.num_envs
        raw = self._observe(self.state, self.learner_seat)
        term = None
        if self._fin:  # the games as they ended, observed in one call
            states = [c["state"] for c in self._fin]
            ended = type(states[0]).concat(states)
            term = self._observe(ended, np.concatenate([c["seat"] for c in self._fin]))
        if not self.use_features:
            return raw, raw, term, term
        rows = raw if term is None else np.concatenate([raw, term])
        feats = self._features.derived_features(self.core, rows, version=self.features_version)
        obs = np.concatenate([rows, feats], axis=1)
        return obs[:B], raw, (None if term is None else obs[B:]), term

    def _potential(self, raw: np.ndarray) -> np.ndarray:
        if not self.shaping:
            return np.zeros(raw.shape[0], np.float32)
        return self._features.shaping_potential(self.core, raw).astype(np.float32)

    def _draw(self, rows: np.ndarray) -> None:
        """New learner seat and opponent for games ``rows`` (a fresh episode)."""
        n = len(rows)
        self.learner_seat[rows] = self.rng.integers(0, self.num_players, n)
        if self._fixed_seat is not None:  # drawn all the same, so a fixed seat leaves the other draws alone
            self.learner_seat[rows] = self._fixed_seat
        self.opp_of[rows] = self.rng.choice(len(self.opponents), size=n, p=self.opponent_probs)
        self._owner[rows] = self.opp_of[rows, None]  # who plays each seat; -1: the learner's, left to step()
        self._owner[rows, self.learner_seat[rows]] = -1
        self.ep_ret[rows] = 0.0
        self.ep_len[rows] = 0
        self.ep_start[rows] = time.perf_counter()

    def _collect(self, res: Any, rows: np.ndarray, rew: np.ndarray, done: np.ndarray) -> None:
        """Learner rewards of ``core.step`` on games ``rows``; finish and deal again ended games."""
        # A game that already finished in this env step (and was dealt again) gets no more
        # reward: its new episode had no learner decision yet (rare: an opponent going out at once).
        fresh = ~done[rows]
        r = np.where(fresh, res.rewards[np.arange(len(rows)), self.learner_seat[rows]], 0.0)
        rew[rows] += r
        self.ep_ret[rows] += r
        ended = res.terminated | res.truncated
        if ended.any():
            e = np.flatnonzero(ended)
            f = fresh[e]
            if f.any():
                self._finish(rows[e[f]], res, e[f], done)
            if (~f).any():
                self._restart(rows[e[~f]])

    def _restart(self, games: np.ndarray) -> None:
        if self.keep_finished:
            self.finished_state = self.state.copy()
        mask = np.zeros(self.num_envs, bool)
        mask[games] = True
        self._play_core.reset_where(self.state, mask)
        self._draw(games)

    def _finish(self, games: np.ndarray, res: Any, idx: np.ndarray, done: np.ndarray) -> None:
        """Games ``games`` (rows ``idx`` of ``res``) ended: record them, then deal them again.

        Their last state is kept; ``_learner_obs`` observes it at the end of the step, with
        the other rows.
        """
        seat = self.learner_seat[games]
        won = res.winners[idx].astype(np.float64)
        share = won[np.arange(len(idx)), seat] / np.maximum(won.sum(axis=1), 1)
        self._fin.append(dict(
            games=games, state=self.state.take(games), won=share, round_points=res.round_points[idx, seat], seat=seat.copy(),
            opponent=self.opp_of[games].copy(), ret=self.ep_ret[games].copy(), length=self.ep_len[games].copy(),
            seconds=time.perf_counter() - self.ep_start[games], capped=np.asarray(res.truncated[idx], bool),
            illegal=np.full(len(games), -1, np.int64)))
        done[games] = True
        self._restart(games)

    def _advance(self, rew: np.ndarray, done: np.ndarray) -> None:
        """Play opponents' moves (batched) until the learner is to move in every game."""
        # drop_finished=False: an ended game is dealt again in place (by _collect, which also
        # rewrites its row of the owner table), and the loop goes on with it.
        for turn in play_out(self._play_core, self.state, self.opponents, self._owner, names=self.opponent_names,
                             drop_finished=False):
            self.inner_steps += len(turn.games)
            self._collect(turn.result, turn.games, rew, done)

    def _step_infos(self, fin: Finished | None, final: bool = False) -> dict[str, Any]:
        """Gymnasium's dict of per-game arrays (:func:`deckgym.vector_infos.step_infos`)."""
        return step_infos(self, fin, final)
