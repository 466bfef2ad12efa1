"""``CoreVecEnv``: an SB3 ``VecEnv`` over a batched game core, opponents played inside.

The learner plays one seat in each of ``B`` games held by one batched core state. Every
other seat is played *inside* the env by an opponent drawn (per game, at each reset) from
a weighted pool of agents (specs such as ``"racko:sequence"``, ``"random"``, or
:class:`agents.base.Agent` objects such as frozen PPO snapshots). After the learner's
batched action, the env advances the opponents until the learner is to move again in
every game: a loop over *steps*, never over games; at each inner step all games whose
mover is an opponent move at once, one ``act`` call per opponent in the pool.

Conventions (SB3):

- ``step`` returns ``(obs, rewards, dones, infos)`` with ``B`` rows; a finished game is
  reset at once and its row holds the first observation of the next game; the last
  observation of the finished one is ``infos[i]["terminal_observation"]``, and
  ``infos[i]["episode"] = {"r", "l", "t"}`` (return, learner decisions, wall time), plus
  ``"won"`` (1 win, 0.5 shared, 0 loss), ``"opponent"`` (the pool entry's name),
  ``"seat"`` and ``"round_points"``.
- ``action_masks()`` returns the ``(B, A)`` bool mask of the learner's legal actions in one
  call (MaskablePPO's ``get_action_masks`` calls ``env_method("action_masks")``, which
  returns that same array).
- Rewards: ``reward="win"`` (the core's zero-sum win/loss at the episode end) or
  ``"points"``; plus optional potential-based shaping ``shaping * (Φ(next) − Φ(now))``
  with the game's ``shaping_potential`` from ``<game>_env.features`` (Rack-O: the
  rack's longest increasing subsequence / 10; Least Score: − hand total / 50).
- The round cap (R9/L10) is a rule that ends the game with a result (and the turn is in
  the observation), so it is *not* reported as a ``TimeLimit.truncated`` (no bootstrap).
- Observation = ``core.observe`` of the learner's seat, plus (``features=True``) the
  game's derived features (``<game>_env.features.derived_features``, own information).

Seeding: game ``i`` uses the core's random stream ``(seed, i)``; learner seats, opponent
draws and the opponents' own randomness come from generators seeded by ``seed``. The same
seed and actions give the same trajectory, whatever else runs.
"""

from __future__ import annotations

import time
from typing import Any, Iterable, Sequence

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv

from agents.base import Agent
from agents.ppo import features_module  # also what training.train_bench and the tests import from here
from agents.registry import make_agent
from deckgym.registration import game as game_entry


def _seed_of(*parts: int) -> int:
    return int(np.random.SeedSequence([int(p) & 0xFFFFFFFF for p in parts]).generate_state(1)[0])


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
    ) -> None:
        self.game = game
        entry = game_entry(game)
        if rules is None:
            kw = dict(rules_kwargs or {})
            if players is not None:
                kw["num_players"] = players
            rules = entry.make_rules(**kw)
        self.core = entry.make_core(rules, episode=episode, reward=reward)
        self.rules = rules
        self.episode, self.reward_mode = episode, reward
        self.num_players = self.core.num_players
        self.shaping = float(shaping)
        self.use_features = bool(features)
        self.feat = features_module(game) if (features or shaping) else None
        self.features_version = None
        if self.use_features:
            v = self.feat.FEATURES_VERSION if features_version is None else int(features_version)
            self.features_version = v
            flow, fhigh = self.feat.feature_bounds(self.core, version=v)
        else:
            flow = fhigh = np.zeros(0, np.float32)
        n_obs = self.core.obs_size
        low = np.broadcast_to(np.asarray(getattr(self.core, "obs_low", -1.0), np.float32), (n_obs,))
        high = np.broadcast_to(np.asarray(getattr(self.core, "obs_high", np.inf), np.float32), (n_obs,))
        obs_space = spaces.Box(np.concatenate([low, flow]).astype(np.float32),
                               np.concatenate([high, fhigh]).astype(np.float32), dtype=np.float32)
        self.render_mode = None
        super().__init__(num_envs, obs_space, spaces.Discrete(self.core.num_actions))
        self._seed = int(seed)
        self.opponents: list[Agent] = []
        self.opponent_names: list[str] = []
        self._weights = np.zeros(0)
        for i, o in enumerate(opponents):
            self.add_opponent(o, weight=1.0 if opponent_weights is None else float(opponent_weights[i]))
        if not self.opponents:
            raise ValueError("give at least one opponent")
        self.state = None
        self._actions: np.ndarray | None = None
        self._masks: np.ndarray | None = None
        self._obs: np.ndarray | None = None
        self.inner_steps = 0  # opponent decisions played (all games), for the benchmark

    # -- the opponent pool ------------------------------------------------------------------
    def add_opponent(self, opponent: str | Agent, weight: float = 1.0, name: str | None = None) -> int:
        """Add an agent (or spec) to the pool; returns its index."""
        k = len(self.opponents)
        if isinstance(opponent, str):
            agent = make_agent(opponent, self.core, seed=_seed_of(self._seed, 7919, k), game=self.game)
            label = opponent
        else:
            agent = opponent
            label = getattr(opponent, "spec", type(opponent).__name__)
        self.opponents.append(agent)
        self.opponent_names.append(name or label)
        self._weights = np.append(self._weights, float(weight))
        return k

    def set_opponent_weights(self, weights: Iterable[float]) -> None:
        w = np.asarray(list(weights), dtype=float)
        if w.shape != (len(self.opponents),) or (w < 0).any() or w.sum() <= 0:
            raise ValueError(f"need {len(self.opponents)} non-negative weights with a positive sum, got {w.tolist()}")
        self._weights = w

    @property
    def opponent_probs(self) -> np.ndarray:
        return self._weights / self._weights.sum()

    # -- observation helpers ----------------------------------------------------------------
    def _learner_obs(self, rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(observation with features, raw core observation) of the learner's seat."""
        st = self.state if rows is None else self.state.take(rows)
        seat = self.learner_seat if rows is None else self.learner_seat[rows]
        raw = self.core.observe(st, seat)
        if self.use_features:
            feats = self.feat.derived_features(self.core, raw, version=self.features_version)
            return np.concatenate([raw, feats], axis=1), raw
        return raw, raw

    def _potential(self, raw: np.ndarray) -> np.ndarray:
        if not self.shaping:
            return np.zeros(raw.shape[0], np.float32)
        return self.feat.shaping_potential(self.core, raw).astype(np.float32)

    def _draw(self, rows: np.ndarray) -> None:
        """New learner seat and opponent for games ``rows`` (a fresh episode)."""
        n = len(rows)
        self.learner_seat[rows] = self.rng.integers(0, self.num_players, n)
        self.opp_of[rows] = self.rng.choice(len(self.opponents), size=n, p=self.opponent_probs)
        self.ep_ret[rows] = 0.0
        self.ep_len[rows] = 0
        self.ep_start[rows] = time.perf_counter()

    # -- VecEnv API -------------------------------------------------------------------------
    def reset(self) -> np.ndarray:
        seed = self._seeds[0] if self._seeds[0] is not None else self._seed
        self._seed = int(seed)
        self._reset_seeds()
        B = self.num_envs
        self.rng = np.random.default_rng(_seed_of(self._seed, 1))
        for k, agent in enumerate(self.opponents):
            agent.seed(_seed_of(self._seed, 7919, k))
        self.state = self.core.init(B, self._seed, game_ids=np.arange(B))
        self.learner_seat = np.zeros(B, np.int64)
        self.opp_of = np.zeros(B, np.int64)
        self.ep_ret = np.zeros(B, np.float64)
        self.ep_len = np.zeros(B, np.int64)
        self.ep_start = np.zeros(B, np.float64)
        self._draw(np.arange(B))
        self._phi = np.zeros(B, np.float32)
        self._phi_terminal = np.zeros(B, np.float32)
        rew = np.zeros(B, np.float32)
        done = np.zeros(B, bool)
        infos: list[dict[str, Any]] = [{} for _ in range(B)]
        self._advance(rew, done, infos)  # opponents who sit before the learner play first
        self._obs, raw = self._learner_obs()
        self._phi = self._potential(raw)
        self._masks = self.core.legal_action_mask(self.state)
        self.reset_infos = [{} for _ in range(B)]
        return self._obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions, dtype=np.int64).reshape(self.num_envs)

    def step_wait(self):
        B = self.num_envs
        a = self._actions
        legal = self._masks[np.arange(B), a]
        if not legal.all():
            bad = int(np.flatnonzero(~legal)[0])
            raise ValueError(f"illegal learner action {int(a[bad])} ({self.core.action_names[int(a[bad])]}) in game {bad}")
        rew = np.zeros(B, np.float32)
        done = np.zeros(B, bool)
        infos: list[dict[str, Any]] = [{} for _ in range(B)]
        self.ep_len += 1
        res = self.core.step(self.state, a)
        self._collect(res, np.arange(B), rew, done, infos)
        self._advance(rew, done, infos)
        obs, raw = self._learner_obs()
        if self.shaping:
            # potential-based: shaping * (Φ(next obs of this episode) − Φ(this obs)); the next
            # obs of a finished episode is its terminal observation (recorded by _finish).
            phi = self._potential(raw)
            nxt = np.where(done, self._phi_terminal, phi)
            rew += (self.shaping * (nxt - self._phi)).astype(np.float32)
            self._phi = phi
        self._obs = obs
        self._masks = self.core.legal_action_mask(self.state)
        return obs, rew, done, infos

    def _collect(self, res: Any, rows: np.ndarray, rew: np.ndarray, done: np.ndarray, infos: list[dict]) -> None:
        """Learner rewards of ``core.step`` on games ``rows``; finish and reset ended games."""
        # A game that already finished in this env step (and was reset) gets no more reward:
        # its new episode had no learner decision yet (rare: an opponent going out at once).
        fresh = ~done[rows]
        r = np.where(fresh, res.rewards[np.arange(len(rows)), self.learner_seat[rows]], 0.0)
        rew[rows] += r
        self.ep_ret[rows] += r
        ended = res.terminated | res.truncated
        if ended.any():
            e = np.flatnonzero(ended)
            f = fresh[e]
            if f.any():
                self._finish(rows[e[f]], res, e[f], done, infos)
            if (~f).any():
                self._restart(rows[e[~f]])

    def _restart(self, games: np.ndarray) -> None:
        mask = np.zeros(self.num_envs, bool)
        mask[games] = True
        self.core.reset_where(self.state, mask)
        self._draw(games)

    def _finish(self, games: np.ndarray, res: Any, idx: np.ndarray, done: np.ndarray, infos: list[dict]) -> None:
        """Games ``games`` (rows ``idx`` of ``res``) ended: infos, terminal obs, auto-reset."""
        term_obs, term_raw = self._learner_obs(games)
        if self.shaping:
            self._phi_terminal[games] = self._potential(term_raw)
        seat = self.learner_seat[games]
        won = res.winners[idx].astype(np.float64)
        share = won[np.arange(len(idx)), seat] / np.maximum(won.sum(axis=1), 1)
        pts = res.round_points[idx, seat]
        now = time.perf_counter()
        for j, g in enumerate(games.tolist()):  # only the few games that ended, for their info dicts
            info = infos[g]
            info["terminal_observation"] = term_obs[j]
            info["TimeLimit.truncated"] = False
            # "r": the game's reward (without shaping); "l": learner decisions
            info["episode"] = {"r": float(self.ep_ret[g]), "l": int(self.ep_len[g]), "t": round(now - self.ep_start[g], 6)}
            info["won"] = float(share[j])
            info["round_points"] = int(pts[j])
            info["seat"] = int(seat[j])
            info["opponent"] = self.opponent_names[int(self.opp_of[g])]
            info["capped"] = bool(res.truncated[idx[j]])
        done[games] = True
        self._restart(games)

    def _advance(self, rew: np.ndarray, done: np.ndarray, infos: list[dict]) -> None:
        """Play opponents' moves (batched) until the learner is to move in every game."""
        core = self.core
        while True:
            cur = core.current_player(self.state)
            rows = np.flatnonzero(cur != self.learner_seat)
            if rows.size == 0:
                return
            whole = rows.size == self.num_envs
            sub = self.state if whole else self.state.take(rows)
            seats = cur[rows]
            obs = core.observe(sub, seats)
            masks = core.legal_action_mask(sub)
            actions = np.empty(rows.size, np.int64)
            owner = self.opp_of[rows]
            for k in np.unique(owner):  # one batched call per opponent in the pool
                sel = np.flatnonzero(owner == k)
                actions[sel] = self.opponents[k].act(obs[sel], masks[sel])
            if not masks[np.arange(rows.size), actions].all():
                i = int(np.flatnonzero(~masks[np.arange(rows.size), actions])[0])
                raise RuntimeError(f"opponent {self.opponent_names[int(owner[i])]!r} chose illegal action {int(actions[i])}")
            res = core.step(sub, actions)
            if not whole:
                self.state.put(rows, sub)
            self.inner_steps += rows.size
            self._collect(res, rows, rew, done, infos)

    def action_masks(self) -> np.ndarray:
        """``(B, A)`` bool: the learner's legal actions in every game (one call)."""
        return self._masks

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
