"""``LearnerEngine``: the learner-against-opponents loop that every learner-facing view drives.

    from deckgym.learner import LearnerEngine
    from deckgym.learner_options import LearnerOptions
    engine = LearnerEngine("racko", 64, LearnerOptions(opponents=[agent]), make_agent=factory)
    engine.start(seed=0, seat=None)
    rewards, done, finished = engine.play(actions)        # (64,) legal actions

It is named for what it holds: the *learner's* seat in ``N`` games of one batched core state,
and the engine that plays every other seat. The Gymnasium env, the Gymnasium vector env, the
SB3 ``VecEnv`` and the TorchRL env are thin adapters of it; none reaches a private name.

- **Opponents**: a weighted pool of agent objects (``act(observations, masks)``,
  ``seed(seed)``); one is drawn per game at each new episode and plays every other seat. An
  agent *spec* (``"racko:sequence"``) is turned into an agent by the ``make_agent`` factory the
  layer above passes in (the engine sits below the agents and never imports them).
- **The loop**: after the learner's batched action the opponents move until the learner is to
  move again in every game (:func:`deckgym.playout.play_out`): a loop over *steps*, never over
  games. An ended game is recorded (:class:`deckgym.vector_infos.Finished`) and dealt again at
  once; its new game waits for the learner's move (the views choose how to show it: autoreset).
- **Seat**, **episode and reward modes**, **shaping**, **features**, **information states**,
  **illegal actions**: the fields of :class:`deckgym.learner_options.LearnerOptions`.
- **Seeding**: ``start(seed)`` deals game ``i`` from the core's random stream ``(seed, i)``;
  learner seats, opponent draws and the opponents' own randomness come from generators seeded
  by ``seed``.
"""

from __future__ import annotations

import math
import time
from typing import Any, Callable, Iterable

import numpy as np

from deckgym.core import is_int
from deckgym.illegal import IllegalActionLog, illegal_action_message
from deckgym.learner_options import LearnerOptions
from deckgym.playout import infostate_core, observe_for, play_out, wants_infostate
from deckgym.registration import game as game_entry
from deckgym.rng import seed_of
from deckgym.vector_infos import Finished

__all__ = ["LearnerEngine", "AgentFactory", "check_opponent_weights", "engine_attribute"]

#: ``make_agent(spec, core, seed=..., game=...)``: what the layer above gives to build agents from specs
AgentFactory = Callable[..., Any]


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


def engine_attribute(name: str) -> property:
    """A view's property that reads and writes its engine's ``name`` (a setting a user may change)."""
    return property(lambda self: getattr(self.engine, name), lambda self, value: setattr(self.engine, name, value),
                     doc=f"The engine's ``{name}``.")


class LearnerEngine:
    """The learner in one seat of ``num_envs`` games, opponents inside (see the module docstring).

    Args:
        game: a registered game's name.
        num_envs: N, games played at once.
        options: the learner's game (:class:`~deckgym.learner_options.LearnerOptions`).
        make_agent: builds an agent from a spec, ``make_agent(spec, core, seed=, game=)``
            (needed only for opponents given as specs).
    """

    def __init__(self, game: str, num_envs: int, options: LearnerOptions | None = None,
                 make_agent: AgentFactory | None = None) -> None:
        opt = options or LearnerOptions()
        entry = game_entry(game)
        if not is_int(num_envs) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        rules = entry.rules_of(opt.rules, opt.num_players, **opt.rule_fields)
        self.options = opt
        self.game = entry.name
        self.rules = rules
        obs = opt.obs
        self.core = entry.make_core(rules, episode=opt.episode, reward=opt.reward,
                                    **({"obs": obs} if obs != "default" else {}))
        # Opponents are built on the default-observation core, whatever the learner sees: the
        # play-out loop gives them default observations (an information-state agent finds its
        # twin itself), and an agent sized by the information-state core would misread them.
        self.agent_core = self.core
        if obs != "default":
            self.agent_core = entry.make_core(rules, episode=opt.episode, reward=opt.reward)
            # the core's own pairing: its infostate_core() is the learner's core (one state for both)
            self.agent_core.pair_infostate(self.core)
        self.num_envs = int(num_envs)
        self.num_players = self.core.num_players
        self.episode, self.reward_mode = opt.episode, opt.reward
        self.shaping = float(opt.shaping)
        self.use_features = bool(opt.features)
        self.illegal_action = opt.illegal_action
        self.illegal_log = IllegalActionLog(self.num_envs)
        self.seat = self.check_seat(opt.seat, "seat")
        self._make_agent = make_agent
        self._feat = None
        self.features_version = None
        if self.use_features:
            fv = opt.features_version
            self.features_version = self.features_module.FEATURES_VERSION if fv is None else int(fv)
            flow, fhigh = self.features_module.feature_bounds(self.core, version=self.features_version)
        else:
            flow = fhigh = np.zeros(0, np.float32)
        n_obs = self.core.obs_size
        low = np.broadcast_to(np.asarray(getattr(self.core, "obs_low", -1.0), np.float32), (n_obs,))
        high = np.broadcast_to(np.asarray(getattr(self.core, "obs_high", np.inf), np.float32), (n_obs,))
        #: the bounds of one observation row (the core's, then the features')
        self.observation_low = np.concatenate([low, flow]).astype(np.float32)
        self.observation_high = np.concatenate([high, fhigh]).astype(np.float32)

        self.last_seed = 0 if opt.seed is None else int(opt.seed)  # the last game seed; seeds agents built later
        opponents = opt.opponents
        if opponents is None:
            opponents = entry.descriptor.default_opponents
        elif isinstance(opponents, str) or callable(getattr(opponents, "act", None)):
            opponents = [opponents]
        try:
            opponents = list(opponents)
        except TypeError:
            raise ValueError(f"opponents must be a list of agent specs or Agents, got {opponents!r}") from None
        if not opponents:
            raise ValueError("give at least one opponent")
        weights = check_opponent_weights([1.0] * len(opponents) if opt.opponent_weights is None
                                         else opt.opponent_weights, len(opponents))
        self.opponents: list[Any] = []
        self.opponent_names: list[str] = []
        self._weights = np.zeros(0)
        self.play_core: Any = None  # chosen once the first pool is known (add_opponent checks later entries)
        for o, w in zip(opponents, weights):
            self.add_opponent(o, weight=float(w))
        #: the core that plays: the one the learner observes, or its twin that records the history
        self.history = bool(opt.history) or obs == "infostate" or any(wants_infostate(a) for a in self.opponents)
        self.play_core = infostate_core(self.core) if self.history else self.core
        # a name, not a bound method: a core's methods are its parts', which pickle only with the core
        self._observe_name = "observe" if obs == "infostate" or not self.history else "observe_default"
        self.keep_finished = False  # keep the last finished game's state (the single-agent view renders it)
        self.finished_state: Any = None
        self.state: Any = None
        self.inner_steps = 0  # opponent decisions played (all games), for the benchmark
        self._obs: np.ndarray | None = None
        self._masks: np.ndarray | None = None
        self._ended_state: Any = None

    # -- the opponent pool ------------------------------------------------------------------
    def add_opponent(self, opponent: Any, weight: float = 1.0, name: str | None = None) -> int:
        """Add an agent (or agent spec) to the pool with draw weight ``weight``; returns its index."""
        k = len(self.opponents)
        if isinstance(opponent, str):
            if self._make_agent is None:
                raise ValueError(f"opponent {opponent!r} is an agent spec, and this engine was given no "
                                 "make_agent factory: pass agent objects or make_agent=")
            agent = self._make_agent(opponent, self.agent_core, seed=seed_of(self.last_seed, 7919, k), game=self.game)
            label = opponent
        elif callable(getattr(opponent, "act", None)) and callable(getattr(opponent, "seed", None)):
            agent = opponent
            label = getattr(opponent, "spec", type(opponent).__name__)
        else:
            raise ValueError(f"opponent {k} must be an agent spec such as 'random' or an Agent "
                             f"(with act() and seed()), got {opponent!r} ({type(opponent).__name__})")
        if not isinstance(weight, (int, float, np.number)) or not math.isfinite(weight) or weight < 0:
            raise ValueError(f"an opponent's weight must be a finite number >= 0, got {weight!r}")
        if wants_infostate(agent) and self.play_core is not None and not self.history:
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
        """The pool's draw probabilities."""
        return self._weights / self._weights.sum()

    # -- what the views read ----------------------------------------------------------------
    @property
    def obs(self) -> np.ndarray:
        """``(N, D)`` float32: the learner's observation in every game (its next move's)."""
        return self._obs

    @property
    def masks(self) -> np.ndarray:
        """``(N, A)`` bool: the learner's legal actions in every game (may be the core's own array)."""
        return self._masks

    @property
    def features_module(self) -> Any:
        """The game's derived-features module (``<game>_env.planning.features``)."""
        if self._feat is None:
            self._feat = game_entry(self.game).features()
        return self._feat

    def finished_masks(self) -> np.ndarray:
        """``(k, A)`` bool: the legal-action masks of the games the last :meth:`play` ended, as
        they ended (the rows of its :class:`Finished`)."""
        if self._ended_state is None:
            raise RuntimeError("the last play() ended no game")
        return self.play_core.legal_action_mask(self._ended_state)

    def observe_for(self, agent: Any) -> np.ndarray:
        """What ``agent`` observes of the learner's seat in every game now (``(N, D)``, no
        features): its information state if it wants one, else the default observation.
        ``ValueError`` if it wants information states and this engine records no history."""
        if wants_infostate(agent) and not self.history:
            raise ValueError(f"agent {getattr(agent, 'spec', type(agent).__name__)!r} acts on information states: "
                             "build the vector env with history=True so that it records them")
        if self.state is None:
            raise RuntimeError("call reset() before observe_for()")
        return observe_for(agent, self.play_core, self.state, self.learner_seat)

    def check_seat(self, seat: Any, what: str = "seat") -> int | None:
        """``seat`` if it is ``None`` or a seat of the table; a ``ValueError`` naming ``what`` otherwise."""
        if seat is not None and not (is_int(seat) and 0 <= seat < self.num_players):
            raise ValueError(f"{what} must be None or a seat in 0..{self.num_players - 1}, got {seat!r}")
        return None if seat is None else int(seat)

    def seat_of_options(self, options: Any) -> int | None:
        """The learner's seat a view's ``reset(options=...)`` asks for (``{"seat": k}`` or ``None``)."""
        if options is None:
            return self.seat
        if not isinstance(options, dict):
            raise ValueError(f"options must be a dict such as {{'seat': 0}} or None, got {options!r}")
        unknown = set(options) - {"seat"}
        if unknown:
            raise ValueError(f"unknown reset option(s) {sorted(unknown)}; valid: 'seat'")
        return self.check_seat(options.get("seat", self.seat), "options['seat']")

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_feat"] = None  # a module: looked up again after unpickling
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)  # the core rebuilds its own work buffers (deckgym.core)

    # -- the loop ---------------------------------------------------------------------------
    def start(self, seed: int, seat: int | None) -> None:
        """Deal every game from ``seed`` and play the opponents up to the learner's first move."""
        B = self.num_envs
        self.last_seed = seed
        self._fixed_seat = seat
        self.rng = np.random.default_rng(seed_of(seed, 1))
        for k, agent in enumerate(self.opponents):
            agent.seed(seed_of(seed, 7919, k))
        self.state = self.play_core.init(B, seed, game_ids=np.arange(B))
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
        self._fin: list[dict[str, np.ndarray]] = []
        self._advance(np.zeros(B, np.float32), np.zeros(B, bool))  # opponents who sit before the learner
        self._fin = []  # a game the opponents ended before the learner's first move reports nothing
        self._obs, raw, _, _ = self._learner_obs()
        self._phi = self._potential(raw)
        self._masks = self.play_core.legal_action_mask(self.state)
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

    def play(self, actions: Any, active: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, Finished | None]:
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
            res = self.play_core.step(self.state, a, check=False)  # checked above against the same mask
            self._collect(res, np.arange(B), rew, done)
        else:
            rows = np.flatnonzero(active)
            self.ep_len[rows] += 1
            if rows.size:
                sub = self.state.take(rows)
                res = self.play_core.step(sub, a[rows], check=False)
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
        self._masks = self.play_core.legal_action_mask(self.state)
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
        raw = getattr(self.play_core, self._observe_name)(self.state, self.learner_seat)
        term = None
        self._ended_state = None
        if self._fin:  # the games as they ended, observed in one call
            states = [c["state"] for c in self._fin]
            ended = type(states[0]).concat(states)
            self._ended_state = ended
            term = getattr(self.play_core, self._observe_name)(ended, np.concatenate([c["seat"] for c in self._fin]))
        if not self.use_features:
            return raw, raw, term, term
        rows = raw if term is None else np.concatenate([raw, term])
        feats = self.features_module.derived_features(self.core, rows, version=self.features_version)
        obs = np.concatenate([rows, feats], axis=1)
        return obs[:B], raw, (None if term is None else obs[B:]), term

    def _potential(self, raw: np.ndarray) -> np.ndarray:
        if not self.shaping:
            return np.zeros(raw.shape[0], np.float32)
        return self.features_module.shaping_potential(self.core, raw).astype(np.float32)

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
        self.play_core.reset_where(self.state, mask)
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
        for turn in play_out(self.play_core, self.state, self.opponents, self._owner, names=self.opponent_names,
                             drop_finished=False):
            self.inner_steps += len(turn.games)
            self._collect(turn.result, turn.games, rew, done)

