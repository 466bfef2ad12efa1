"""``DeckGymTorchEnv``: a TorchRL ``EnvBase`` of ``B`` games of one batched core.

Two modes, TorchRL's conventions for turn-based games (``TicTacToeEnv``, ``ChessEnv``):

- **single learner** (default): the policy plays one seat of every game; the other seats are
  played *inside* the env by deckgym agents (specs such as ``"racko:ranges"`` or agent objects),
  drawn per game and episode from a weighted pool. This is the engine of every learner view
  (:class:`deckgym.learner.LearnerEngine`: opponents, seats, derived features, shaping,
  information states), built from the same :class:`deckgym.learner_options.LearnerOptions`
  and driven through TorchRL. ``reward`` is ``(B, 1)``: the learner's.
- **self-play** (``self_play=True``): every seat is the policy's; each step is one move of the
  seat to act in each game. ``reward`` is ``(B, P)``, column ``k`` is seat ``k``'s (absolute
  seats), as the core reports it.

Keys (batch ``[B]``): ``observation`` ``(D,)`` float32, the acting seat's ego-centric
observation (``core.observe``; ``obs="infostate"``: the information state), followed with
``features=True`` by the game's derived features (``<game>_env.planning.features``, as ``ppo:`` agents
compute them); ``action_mask`` ``(A,)`` bool, its legal actions; ``turn`` ``(1,)`` int64, the
acting seat; ``action`` ``()`` int64; ``reward``; ``done``, ``terminated``, ``truncated``
``(1,)`` bool (a round cap, R9/L10, is a truncation). A finished game waits: its ``next``
entries are its last observation; TorchRL's partial reset (``_reset`` mask, as its
collectors and ``rollout(break_when_any_done=False)`` send it) deals it again, continuing the
game's own random stream (``core.reset_where``).

Masks, TorchRL's way (as ``ChessEnv(mask_actions=True)`` and the ``ActionMask`` transform):
the action spec is a ``Categorical`` whose mask is the games' legal actions, updated at every
reset and step, so ``env.rand_action()``, ``action_spec.rand()``, ``RandomPolicy``,
``Collector(env, None, ...)`` and ``TransformedEnv(env, ActionMask())`` all draw legal actions.
A batched env (``SerialEnv``/``ParallelEnv``) holds its own copy of the spec: wrap it in
``TransformedEnv(..., ActionMask())`` (or use a masked policy) for legal random play.

Seeding: ``set_seed(s)`` (or ``seed=s``) then ``reset()`` deals game ``i`` from the core's stream
``(s, i)``; learner seats, opponent draws and their randomness come from generators seeded by
``s`` (the vector view's). A reset without a new seed continues with a seed drawn from the last.
Random actions (``rand_action``, a rollout without a policy) are TorchRL's, drawn from the
masked spec with torch's generator: seed it with ``torch.manual_seed`` to repeat them.

Speed: one ``core.step`` and one ``core.observe`` per env step, no Python loop over games; on
the CPU the core writes the observation straight into the tensor TorchRL returns (without
features: ``observe(out=)``; with them, the observation and the features are written once into
it), and the step's own arrays (seats, learner rewards, done flags) are seen as tensors
(``torch.from_numpy``). Only what the core may share between steps is copied, once: the mask
(a view of its per-phase table) and the self-play rewards and end flags (its read-only
"nothing happened" result). With ``device`` another device, each is copied there once.
"""

from __future__ import annotations

import warnings
from typing import Any, Sequence

import numpy as np
import torch
from tensordict import TensorDict, TensorDictBase
from torchrl.data import Categorical, Composite, Unbounded
from torchrl.envs import EnvBase

from deckgym.core import is_int
from deckgym.learner import LearnerEngine
from deckgym.learner_options import LearnerOptions
from deckgym.registration import GAMES, game as game_entry
from deckgym.rng import check_seed, seed_of
from deckgym.vector_env import make_agent_from_spec

__all__ = ["DeckGymTorchEnv", "GAME_ENVS", "check_device", "num_envs_of"]

#: what a self-play env cannot take (every seat is the policy's)
LEARNER_ONLY = ("opponents", "opponent_weights", "seat", "shaping", "illegal_action")


class LiveMaskCategorical(Categorical):
    """``Categorical`` whose mask is its env's current legal actions. A clone (what
    ``RandomPolicy`` and the collectors keep of the env's spec) shares that mask's storage,
    so it draws legal actions too after the env moves on."""

    def clone(self) -> LiveMaskCategorical:
        return self.__class__(n=self.space.n, shape=self.shape, device=self.device, dtype=self.dtype, mask=self.mask)


def check_device(device: Any) -> torch.device:
    """``device`` as a ``torch.device`` this torch can use; a one-line ``ValueError`` otherwise."""
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError, ValueError):
        raise ValueError(f"device must be a torch device such as 'cpu' or 'cuda:0', got {device!r}") from None
    if dev.type != "cpu":
        try:
            torch.empty(0, device=dev)
        except (AssertionError, RuntimeError) as e:
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise ValueError(f"device {str(dev)!r} is not available to this torch "
                             f"({torch.__version__}): {first}") from None
    return dev


def num_envs_of(num_envs: Any, batch_size: Any, default: int) -> int:
    """The number of games from ``num_envs`` or TorchRL's ``batch_size=[B]`` (its alias); a
    ``ValueError`` naming ``num_envs`` if they disagree or ``batch_size`` is not one dimension."""
    if batch_size is not None:
        dims = [batch_size] if is_int(batch_size) else list(batch_size) if isinstance(batch_size, (list, tuple, torch.Size)) else None
        if dims is None or len(dims) != 1 or not is_int(dims[0]):
            raise ValueError(f"batch_size must be [B], one dimension (the number of games; or pass num_envs=B), "
                             f"got {batch_size!r}")
        if num_envs is not None and int(num_envs) != int(dims[0]):
            raise ValueError(f"batch_size={list(dims)} and num_envs={num_envs!r} disagree: give num_envs=B alone")
        num_envs = int(dims[0])
    num_envs = default if num_envs is None else num_envs
    if not is_int(num_envs) or num_envs < 1:
        raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
    return int(num_envs)


class DeckGymTorchEnv(EnvBase):
    """``B`` games of a deckgym game as one TorchRL env (see the module docstring).

    Args:
        num_envs: ``B``, games played at once (the env's ``batch_size``; ``batch_size=[B]``, TorchRL's
            keyword, is its alias).
        batch_size: TorchRL's keyword, ``[B]``: an alias of ``num_envs``.
        game: a registered game's name (the per-game classes fix it).
        self_play: every seat is the policy's (no opponents inside; ``opponents``,
            ``opponent_weights``, ``seat``, ``shaping`` and ``illegal_action`` cannot be given).
        device: where the tensors live (default CPU); checked at once.
        check_actions: self-play: refuse an illegal action with a ``ValueError`` naming the game
            (``False``: unchecked, for policies that sample from the mask).
        options: a :class:`~deckgym.learner_options.LearnerOptions`; its fields may also be given
            as keywords (over it), with the defaults every view shares; any other keyword is a
            rules field.
    """

    batch_locked = True
    game: str | None = None  # the per-game classes (RackoEnv, ...) fix it
    #: TorchRL's batched envs are large: 1024 games unless told (docs/frontends/defaults.md)
    DEFAULT_NUM_ENVS = 1024

    def __init__(self, num_envs: int | None = None, *, game: str | None = None, self_play: bool = False,
                 device: Any = "cpu", check_actions: bool = True, batch_size: Any = None,
                 options: LearnerOptions | None = None, **kwargs: Any) -> None:
        if game is None and self.game is None:
            raise ValueError("DeckGymTorchEnv needs game= (a registered game's name), or use a game's class: "
                             + ", ".join(GAME_ENVS[n].__name__ for n in GAME_ENVS))
        entry = game_entry(game or self.game)
        B = num_envs_of(num_envs, batch_size, self.DEFAULT_NUM_ENVS)
        device = check_device(device)
        if not isinstance(self_play, (bool, np.bool_)):
            raise ValueError(f"self_play must be True or False, got {self_play!r}")
        opt = LearnerOptions.from_kwargs(options, **kwargs)
        if self_play:
            defaults = LearnerOptions()
            given = [k for k in LEARNER_ONLY[:-1] if getattr(opt, k) != getattr(defaults, k)]
            if kwargs.get("illegal_action", "raise") != "raise":  # self-play raises (check_actions)
                given.append("illegal_action")
            if given:
                raise ValueError(f"self_play=True: every seat is the policy's, so {', '.join(given)} cannot be given")
        rules = entry.rules_of(opt.rules, opt.num_players, **opt.rule_fields)
        super().__init__(device=device, batch_size=torch.Size([B]))
        self.game = entry.name
        self.self_play = bool(self_play)
        self.check_actions = bool(check_actions)
        self.options = opt
        features, obs = opt.features, opt.obs
        if self.self_play:
            self.engine = None
            self.core = entry.make_core(rules, episode=opt.episode, reward=opt.reward,
                                        **({"obs": obs} if obs != "default" else {}))
            self._feat = entry.features() if features else None
            self.features_version = (None if not features else int(
                self._feat.FEATURES_VERSION if opt.features_version is None else opt.features_version))
            if features:
                self._feat.feature_bounds(self.core, version=self.features_version)  # a bad version fails here
        else:
            # the engine holds the pool, seats, features and shaping; its checks run here
            self.engine = LearnerEngine(entry.name, B, opt.replace(rules=rules, num_players=None, rule_fields={}),
                                        make_agent=make_agent_from_spec)
            self.core = self.engine.core
            self.features_version = self.engine.features_version
        self.rules = rules
        self.episode, self.reward_mode, self.obs_kind = opt.episode, opt.reward, obs
        self.num_players = int(self.core.num_players)
        self.num_actions = int(self.core.num_actions)
        self.obs_size = int(self.core.obs_size)
        nfeat = 0 if self.features_version is None else int(
            entry.features().num_features(self.core, version=self.features_version))
        self.observation_size = self.obs_size + nfeat
        self._cpu = self.device is None or torch.device(self.device).type == "cpu"
        self.num_envs = B
        self._build_specs()
        seed = opt.seed
        self._seed: int | None = seed
        self._seed_rng: np.random.Generator | None = None
        self.state: Any = None
        self._ended = np.zeros(B, bool)  # games whose episode ended and that wait for their reset
        self._first_rows = np.zeros(B, bool)  # learner mode: games whose next game's first rows wait for the reset
        self._first_obs: np.ndarray | None = None
        self._first_mask: np.ndarray | None = None

    @property
    def venv(self) -> LearnerEngine | None:
        """The single-learner engine (``None`` in self-play); kept under its old name."""
        return self.engine

    # -- specs ------------------------------------------------------------------------------
    def _build_specs(self) -> None:
        B, D, A, P, dev = self.num_envs, self.observation_size, self.num_actions, self.num_players, self.device
        self.observation_spec = Composite(
            observation=Unbounded(shape=(B, D), dtype=torch.float32, device=dev),
            action_mask=Categorical(2, shape=(B, A), dtype=torch.bool, device=dev),
            turn=Categorical(P, shape=(B, 1), dtype=torch.int64, device=dev),
            shape=(B,), device=dev)
        # the games' legal actions, kept current (update_mask) at every reset and step
        self._mask = torch.ones((B, A), dtype=torch.bool, device=dev)  # every game's legal actions now
        self.action_spec = LiveMaskCategorical(A, shape=(B,), dtype=torch.int64, device=dev, mask=self._mask)
        self.reward_spec = Unbounded(shape=(B, P if self.self_play else 1), dtype=torch.float32, device=dev)
        flag = Categorical(2, shape=(B, 1), dtype=torch.bool, device=dev)
        self.full_done_spec = Composite(done=flag, terminated=flag.clone(), truncated=flag.clone(), shape=(B,), device=dev)

    # -- tensors from the core's arrays -----------------------------------------------------
    def _tensor(self, a: np.ndarray) -> torch.Tensor:
        """The array as a tensor: shared on the CPU (the array is the step's own), else copied once."""
        t = torch.from_numpy(a)
        return t if self._cpu else t.to(self.device, non_blocking=True)

    def _observation(self, state: Any, seat: np.ndarray) -> np.ndarray:
        """Self-play: the seats' observations, written once into a fresh ``(B, D)`` array."""
        out = np.empty((self.num_envs, self.observation_size), np.float32)
        if self._feat is None:
            self.core.observe(state, seat, out=out)
            return out
        raw = self.core.observe(state, seat)
        out[:, : self.obs_size] = raw
        out[:, self.obs_size :] = self._feat.derived_features(self.core, raw, version=self.features_version)
        return out

    def _td(self, obs: np.ndarray, mask: np.ndarray, turn: np.ndarray, **extra: torch.Tensor) -> TensorDict:
        mask_t = self._tensor(np.ascontiguousarray(mask))
        return TensorDict({"observation": self._tensor(obs), "action_mask": mask_t,
                           "turn": self._tensor(turn.reshape(-1, 1)), **extra},
                          batch_size=self.batch_size, device=self.device)

    def _show_mask(self, mask: torch.Tensor, rows: np.ndarray | None = None) -> None:
        """The action spec's mask becomes the games' legal actions now (``rows``: only those
        games changed; a finished game keeps its last mask until its reset)."""
        if rows is None:
            self._mask.copy_(mask)
        else:
            r = torch.from_numpy(rows).to(mask.device)
            self._mask[r] = mask[r]
        self.action_spec.update_mask(self._mask)  # in place: the spec's clones share this storage

    def _actions(self, tensordict: TensorDictBase) -> np.ndarray:
        a = tensordict.get("action")
        if a.shape != self.batch_size:
            a = a.reshape(self.batch_size)  # a (B, 1) action column
        return a.detach().to("cpu").numpy().astype(np.int64, copy=False)

    # -- seeding ----------------------------------------------------------------------------
    def _set_seed(self, seed: int | None) -> None:
        check_seed(seed)
        self._seed = None if seed is None else int(seed)
        self._seed_rng = None

    def _next_seed(self) -> int:
        """The seed of a full reset: the one set last, once; then one drawn from it."""
        if self._seed is not None:
            seed, self._seed = self._seed, None
            self._seed_rng = np.random.default_rng(seed_of(seed, 3))
            return seed
        if self._seed_rng is None:
            self._seed_rng = np.random.default_rng()
        return int(self._seed_rng.integers(2**31 - 1))

    # -- reset ------------------------------------------------------------------------------
    def _reset(self, tensordict: TensorDictBase | None = None, **kwargs: Any) -> TensorDictBase:
        reset = None if tensordict is None else tensordict.get("_reset", None)
        B = self.num_envs
        if reset is None or self.state is None:
            return self._full_reset()
        rows = reset.reshape(B).to("cpu").numpy().astype(bool)
        if self.self_play:
            self.core.reset_where(self.state, rows)
            self._ended &= ~rows
            seat = self.core.current_player(self.state)
            obs = self._observation(self.state, seat)
            td = self._td(obs, self.core.legal_action_mask(self.state), seat, **self._done_tensors())
            self._show_mask(td.get("action_mask"), rows)
            return td
        # learner mode: the games were dealt again when they ended (the opponents who sit
        # before the learner have moved); show their first observation now
        live = rows & ~self._first_rows
        if live.any():
            raise ValueError(f"games {np.flatnonzero(live)[:10].tolist()} are in progress: the single-learner mode "
                             "resets only games that ended (or all of them, without a '_reset' mask)")
        self._ended &= ~rows
        obs = np.zeros((B, self.observation_size), np.float32)
        mask = np.zeros((B, self.num_actions), bool)
        turn = self.engine.learner_seat.copy()
        if rows.any():
            obs[rows] = self._first_obs[rows[self._first_rows]]
            mask[rows] = self._first_mask[rows[self._first_rows]]
        self._keep_first(~rows)
        td = self._td(obs, mask, turn, **self._done_tensors())
        self._show_mask(td.get("action_mask"), rows)
        return td

    def _full_reset(self) -> TensorDictBase:
        seed = self._next_seed()
        self._ended[:] = False
        if self.self_play:
            self.state = self.core.init(self.num_envs, seed, game_ids=np.arange(self.num_envs))
            seat = self.core.current_player(self.state)
            obs, mask = self._observation(self.state, seat), self.core.legal_action_mask(self.state)
        else:
            self.engine.start(seed, self.engine.seat)
            self.state = self.engine.state
            obs, mask, seat = self.engine.obs, self.engine.masks, self.engine.learner_seat.copy()
            self._keep_first(np.zeros(self.num_envs, bool))
        td = self._td(obs, mask, seat, **self._done_tensors())
        self._show_mask(td.get("action_mask"))
        return td

    def _done_tensors(self) -> dict[str, torch.Tensor]:
        z = torch.zeros((self.num_envs, 1), dtype=torch.bool, device=self.device)
        return {"done": z, "terminated": z.clone(), "truncated": z.clone()}

    def _keep_first(self, rows: np.ndarray) -> None:
        """Learner mode: keep only the waiting first rows of games ``rows``."""
        if self._first_obs is None or not rows.any():
            self._first_rows = np.zeros(self.num_envs, bool)
            self._first_obs = self._first_mask = None
            return
        keep = rows & self._first_rows
        sel = keep[self._first_rows]
        self._first_obs, self._first_mask = self._first_obs[sel], self._first_mask[sel]
        self._first_rows = keep

    # -- step -------------------------------------------------------------------------------
    def _step(self, tensordict: TensorDictBase) -> TensorDictBase:
        if self.state is None:
            raise RuntimeError("call reset() before step()")
        if self._ended.any():
            raise ValueError(f"games {np.flatnonzero(self._ended)[:10].tolist()} ended: reset them (TorchRL's "
                             "'_reset' mask, as rollout(break_when_any_done=False) and the collectors do) before stepping")
        a = self._actions(tensordict)
        return self._step_self_play(a) if self.self_play else self._step_learner(a)

    def _step_self_play(self, a: np.ndarray) -> TensorDictBase:
        res = self.core.step(self.state, a, check=self.check_actions)
        term, trunc = res.terminated, res.truncated
        done = term | trunc
        self._ended = done.copy()
        seat = self.core.current_player(self.state)
        obs = self._observation(self.state, seat)
        td = self._td(obs, self.core.legal_action_mask(self.state), seat, reward=self._tensor(res.rewards.copy()),
                      done=self._tensor(done.reshape(-1, 1)), terminated=self._tensor(term.reshape(-1, 1).copy()),
                      truncated=self._tensor(trunc.reshape(-1, 1).copy()))
        self._show_mask(td.get("action_mask"), ~done)
        return td

    def _step_learner(self, a: np.ndarray) -> TensorDictBase:
        engine = self.engine
        rew, done, fin = engine.play(a)  # the learner's move, then the opponents' until its turn again
        obs, mask, seat = engine.obs, engine.masks, engine.learner_seat.copy()
        term = np.zeros(self.num_envs, bool)
        trunc = np.zeros(self.num_envs, bool)
        if fin is not None:
            g = fin.games
            term[g], trunc[g] = ~fin.capped, fin.capped
            # the next games are dealt already: keep their first rows for the reset, and show
            # the finished games' last observation, mask and seat in their place
            order = np.argsort(g)
            self._first_rows = np.zeros(self.num_envs, bool)
            self._first_rows[g] = True
            self._first_obs, self._first_mask = obs[g[order]].copy(), mask[g[order]].copy()
            obs[g] = fin.obs
            mask = mask.copy()  # a C-contiguous copy: the core's mask may be a view of its table
            mask[g] = engine.finished_masks()
            seat[g] = fin.seat
        else:
            self._first_rows = np.zeros(self.num_envs, bool)
            self._first_obs = self._first_mask = None
        self._ended = done.copy()
        td = self._td(obs, mask, seat, reward=self._tensor(rew.reshape(-1, 1)), done=self._tensor(done.reshape(-1, 1)),
                      terminated=self._tensor(term.reshape(-1, 1)), truncated=self._tensor(trunc.reshape(-1, 1)))
        self._show_mask(td.get("action_mask"), ~done)
        return td

    # -- the opponent pool (single-learner mode) --------------------------------------------
    def add_opponent(self, opponent: Any, weight: float = 1.0, name: str | None = None) -> int:
        """Add an agent spec or agent object (a frozen snapshot, say) to the pool; returns its index."""
        return self._pool().add_opponent(opponent, weight=weight, name=name)

    def set_opponent_weights(self, weights: Sequence[float]) -> None:
        """New draw weights, one per pool entry (used from each game's next episode)."""
        self._pool().set_opponent_weights(weights)

    def _pool(self) -> LearnerEngine:
        if self.engine is None:
            raise ValueError("self_play=True: every seat is the policy's, there is no opponent pool")
        return self.engine


def _game_env_class(entry: Any) -> type:
    """``RackoEnv``, ``LeastScoreEnv``, ...: the env of one registered game, named as its core
    class (``RackoCore`` -> ``RackoEnv``); the game's own text is its descriptor's."""
    stem = entry.descriptor.core.__name__.removesuffix("Core")
    name, title = entry.name, entry.descriptor.title

    def __init__(self: Any, num_envs: int | None = None, **kwargs: Any) -> None:
        if "game" in kwargs:
            raise ValueError(f"{stem}Env plays {title}: use DeckGymTorchEnv(game=...) for another game")
        DeckGymTorchEnv.__init__(self, num_envs, **kwargs)

    doc = f"{title} (``docs/RULES.md``) as a batched TorchRL env; see :class:`DeckGymTorchEnv`."
    return type(f"{stem}Env", (DeckGymTorchEnv,), {"game": name, "__init__": __init__, "__doc__": doc,
                                                  "__module__": __name__})


#: the env class of every registered game, by the game's name
GAME_ENVS = {name: _game_env_class(entry) for name, entry in GAMES.items()}
globals().update({cls.__name__: cls for cls in GAME_ENVS.values()})
__all__ += [cls.__name__ for cls in GAME_ENVS.values()]

#: old class names (named after the Gymnasium id, ``deckgym/RackO-v0``), kept for one release
DEPRECATED_NAMES = {
    f"{entry.gymnasium_id.split('/', 1)[1].rsplit('-v', 1)[0]}Env": GAME_ENVS[name].__name__
    for name, entry in GAMES.items()}
DEPRECATED_NAMES = {old: new for old, new in DEPRECATED_NAMES.items() if old != new}


def deprecated_name(name: str) -> type:
    """The class an old name stands for, with a ``DeprecationWarning``; ``AttributeError`` for no such name."""
    if name in DEPRECATED_NAMES:
        new = DEPRECATED_NAMES[name]
        warnings.warn(f"{name} is deprecated; use {new}", DeprecationWarning, stacklevel=3)
        return globals()[new]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __getattr__(name: str) -> type:
    return deprecated_name(name)
