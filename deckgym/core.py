"""The contract every game core fulfils, and what ``step`` returns.

A *core* is the pure, batched game: the state of ``B`` games is a dataclass of numpy
arrays whose first axis is the game. Methods never loop over games in Python and keep
no game state of their own (the core object only holds the rules and lookup tables), so
one core serves the AEC env (``B = 1``), the arena and the SB3 vector env (``B`` large).

``step`` mutates the state in place (copying thousands of games per step is what makes
naive vectorised envs slow); use ``state.copy()`` to branch.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from collections import OrderedDict
from typing import Any, Callable, ClassVar, Protocol, Sequence, TypeVar

import numpy as np

S = TypeVar("S", bound="BatchState")


class BatchState:
    """Mixin for a dataclass of ``(B, ...)`` numpy arrays."""

    #: ``{field: the name replays written before a rename call it}`` (read by :mod:`deckgym.replay`)
    former_names: ClassVar[dict[str, str]] = {}

    def copy(self: S) -> S:
        return type(self)(**{f.name: getattr(self, f.name).copy() for f in fields(self)})  # type: ignore[arg-type]

    def take(self: S, index: np.ndarray | slice) -> S:
        """The games at ``index`` (a copy), as a smaller batch."""
        return type(self)(**{f.name: getattr(self, f.name)[index].copy() for f in fields(self)})  # type: ignore[arg-type]

    @classmethod
    def concat(cls: type[S], states: Sequence[S]) -> S:
        """One batch of the games of ``states`` (batches of the same state class), in order."""
        if len(states) == 1:
            return states[0]
        return cls(**{f.name: np.concatenate([getattr(s, f.name) for s in states]) for f in fields(states[0])})  # type: ignore[arg-type]

    def put(self, index: np.ndarray, other: "BatchState") -> None:
        """Overwrite the games at ``index`` with ``other``'s games (in place)."""
        for f in fields(self):  # type: ignore[arg-type]
            getattr(self, f.name)[index] = getattr(other, f.name)

    @property
    def batch_size(self) -> int:
        return int(getattr(self, fields(self)[0].name).shape[0])  # type: ignore[arg-type]

    def nbytes_per_game(self) -> int:
        """Bytes of state per game (the memory target is stated per game)."""
        b = self.batch_size
        return sum(getattr(self, f.name).nbytes for f in fields(self)) // max(b, 1)  # type: ignore[arg-type]


class RebuiltWhenUnpickled:
    """Mixin for cores: a core pickles as its constructor arguments and is built afresh when
    unpickled (or deep-copied).

    A core holds no game state, only tables and per-batch work buffers derived from its
    arguments, and those buffers are numpy views into one another: pickled one by one they
    would come back as separate copies, and a used core would then compute with stale data.
    """

    _constructor_args: tuple[str, ...] = ("rules", "episode", "reward")

    def __getstate__(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self._constructor_args}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(**state)  # type: ignore[misc]


@dataclass
class StepResult:
    """What one batched ``step`` reports, all arrays with first axis ``B``.

    ``rewards[b, p]`` is seat ``p``'s reward in game ``b`` for this step (absolute seats,
    not ego-centric). ``terminated``/``truncated`` mark games whose *episode* ended on
    this step (a round, or a whole match, as the core was configured); ``round_over``
    marks every finished round (in ``"match"`` episodes the core has already dealt the
    next round when ``round_over and not terminated``). ``round_points`` and
    ``total_points`` are valid where ``round_over``; ``winners`` where the episode ended.
    """

    rewards: np.ndarray  # (B, P) float32
    terminated: np.ndarray  # (B,) bool
    truncated: np.ndarray  # (B,) bool
    round_over: np.ndarray  # (B,) bool
    round_points: np.ndarray  # (B, P) int32
    total_points: np.ndarray  # (B, P) int32
    winners: np.ndarray  # (B, P) bool
    # Game-specific per-seat round results, (B, P) arrays valid where round_over, that the
    # AEC adapter copies into every agent's info (e.g. Least Score's "hand_total").
    extra: dict[str, np.ndarray] = field(default_factory=dict)


class Core(Protocol):
    """What the shared AEC adapter, the arena and the vector envs rely on (``docs/CONTRACT.md``).

    Optional attributes, read with ``getattr``: ``obs_low`` / ``obs_high`` (scalars or
    ``(obs_size,)`` float32 arrays: the bounds of the observation Box; default -1 and +inf) and
    ``sample_legal``; typed by ``deckgym.plugins.ObservationBounds`` and ``FastSampler``.
    A game with information states takes ``obs="infostate"`` in its constructor and offers
    ``infostate_core()`` (a default core's information-state twin, built once) and
    ``pair_infostate(twin)`` (make ``twin`` the one it returns).
    """

    rules: Any
    episode: str
    reward: str
    num_players: int
    num_actions: int
    obs_size: int
    obs_version: int
    action_names: tuple[str, ...]
    phase_names: tuple[str, ...]

    def init(self, batch: int, seed: int, game_ids: np.ndarray | None = None) -> BatchState:
        """Deal ``batch`` fresh games; game ``i`` uses random stream ``(seed, game_ids[i])``."""

    def reset_where(self, state: BatchState, mask: np.ndarray) -> None:
        """Deal a fresh game (new episode) in place for every game where ``mask``."""

    def deal(self, seed: int, options: dict) -> BatchState:
        """One game (``B = 1``) from an explicit deal (``reset(options=...)``)."""

    def current_player(self, state: BatchState) -> np.ndarray:
        """``(B,)`` int: the seat to act."""

    def phase(self, state: BatchState) -> np.ndarray:
        """``(B,)`` int: index into ``phase_names`` of the decision to make."""

    def alive(self, state: BatchState) -> np.ndarray:
        """``(B, P)`` bool: seats still in the game (Least Score eliminates players)."""

    def legal_action_mask(self, state: BatchState) -> np.ndarray:
        """``(B, num_actions)`` bool: exactly the legal actions of the seat to act."""

    def sample_legal(self, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """``(B,)`` int64: a uniformly random legal action per row of ``mask``."""

    def step(self, state: BatchState, actions: np.ndarray, check: bool = True) -> StepResult:
        """Apply one action per game, in place. ``check``: refuse (ValueError naming the rows
        and actions) any action that is illegal, out of range or of the wrong shape or dtype;
        ``check=False`` skips this for loops that already sample from the legal mask."""

    def observe(self, state: BatchState, seat: np.ndarray | int, out: np.ndarray | None = None) -> np.ndarray:
        """``(B, obs_size)`` float32 ego-centric observation for ``seat`` (into ``out`` if given)."""

    def obs_view(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        """Named, decoded fields of a batch of observations."""

    def state_dict(self, state: BatchState, b: int = 0) -> dict[str, Any]:
        """The full state of game ``b`` in readable form (``env.state_dict()``)."""

    def state_array(self, state: BatchState) -> np.ndarray:
        """``(B, state_size)`` float32: the full state, hidden cards included, in
        ``[state_low, state_high]`` (``env.state()``; fields at ``state_slices``)."""

    def empty_result(self, state: BatchState) -> StepResult:
        """What a step that ended nothing reports for ``state``'s games (zeros; ``total_points``
        the totals the games hold): the AEC env's round infos before a round ends."""


EPISODES = ("round", "match")
#: the observations a core can give: today's, or the information state (perfect recall)
OBS_KINDS = ("default", "infostate")
REWARDS = ("win", "points")


class SizeCache:
    """Work buffers by batch size, for the ``keep`` sizes used last.

    A core's ``step`` and ``observe`` reuse buffers made for a batch size; callers whose batches
    shrink as games end (the arena, search rollouts) meet a new size at almost every step, so an
    unbounded table would keep a set of buffers for every size ever seen.
    """

    def __init__(self, make: Callable[[int], Any], keep: int = 16) -> None:
        self.make, self.keep = make, keep
        self._by_size: OrderedDict[int, Any] = OrderedDict()

    def get(self, b: int) -> Any:
        """The buffers for batch size ``b``, made on first use."""
        c = self._by_size.get(b)
        if c is None:
            c = self._by_size[b] = self.make(b)
            if len(self._by_size) > self.keep:
                self._by_size.popitem(last=False)
        else:
            self._by_size.move_to_end(b)
        return c

    def __len__(self) -> int:
        return len(self._by_size)


def check_core_options(episode: str, reward: str) -> None:
    """The constructor arguments every core shares; a ValueError naming the bad one."""
    if episode not in EPISODES:
        raise ValueError(f"episode must be one of {EPISODES}, got {episode!r}")
    if reward not in REWARDS:
        raise ValueError(f"reward must be one of {REWARDS}, got {reward!r}")


def check_obs_option(obs: Any, features: bool = False) -> None:
    """A core's ``obs`` argument, and with an env's ``features=True`` (which extend the default
    observation) only the default; a ValueError naming the problem otherwise."""
    if obs not in OBS_KINDS:
        raise ValueError(f"obs must be one of {OBS_KINDS}, got {obs!r}")
    if features and obs != "default":
        raise ValueError(f"features=True reads the default observation; it cannot be combined with obs={obs!r}")


def zero_sum_win_rewards(winners: np.ndarray) -> np.ndarray:
    """Zero-sum win/loss rewards from a ``(B, P)`` bool ``winners`` array.

    Each winner gets ``+1`` and each loser ``-k/(P-k)`` (``-1`` for two players); a row
    where everybody (or nobody) wins is all zeros.
    """
    w = winners.astype(np.float32)
    k = w.sum(axis=1, keepdims=True)
    p = np.float32(winners.shape[1])
    losers = p - k
    with np.errstate(divide="ignore", invalid="ignore"):
        lose_value = np.where(losers > 0, -k / np.maximum(losers, 1), 0.0)
    out = np.where(winners, 1.0, lose_value).astype(np.float32)
    out[(k[:, 0] == 0) | (k[:, 0] == p)] = 0.0
    return out


def best_legal(scores: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """Per row, the legal action with the highest score (first on ties): heuristics' argmax."""
    return np.argmax(np.where(np.asarray(masks, dtype=bool), scores, -np.inf), axis=1).astype(np.int64)


def sample_legal(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal action per row of ``masks`` (B, A), for any core; every row
    must have one. A core's own ``Core.sample_legal(mask, rng)`` (same arguments) draws
    exactly uniformly and faster from its mask's structure; this one is the agents' and the
    fallback (``random``: the argmax of uniform noise on the legal actions)."""
    masks = np.asarray(masks, dtype=bool)
    if masks.ndim != 2:
        raise ValueError(f"action masks must be (B, num_actions), got shape {masks.shape}")
    empty = ~masks.any(axis=1)
    if empty.any():
        raise ValueError(f"no legal action in rows {np.flatnonzero(empty)[:10].tolist()}")
    return np.argmax(rng.random(masks.shape) * masks, axis=1).astype(np.int64)


# -- argument checks of the public core functions ---------------------------------------------
# Every bad argument is a ValueError naming it, raised before the state is touched.
RULES_DOC = "docs/RULES.md"


def is_int(x: Any) -> bool:
    """A Python or numpy integer, not a bool: what a count, seed or seat must be."""
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def check_init_args(batch: Any, seed: Any, game_ids: Any) -> np.ndarray:
    """``init``'s arguments: ``batch`` an int >= 1, ``seed`` an int, ``game_ids`` None or
    ``batch`` ints; returns the game ids."""
    if not is_int(batch) or batch < 1:
        raise ValueError(f"batch must be an int >= 1 (the number of games), got {batch!r}")
    if not is_int(seed):
        raise ValueError(f"seed must be an int, got {seed!r}")
    if game_ids is None:
        return np.arange(batch)
    ids = np.asarray(game_ids)
    if ids.shape != (batch,) or ids.dtype.kind not in "iu":
        raise ValueError(f"game_ids must be {batch} ints (shape ({batch},)), got dtype {ids.dtype}, shape {ids.shape}")
    return ids


def check_row_mask(mask: Any, b: int, name: str = "mask") -> np.ndarray:
    """A ``(B,)`` bool array, one flag per game (never indices: ``[0, 2]`` is refused)."""
    m = mask if isinstance(mask, np.ndarray) else np.asarray(mask)
    if m.dtype != bool or m.shape != (b,):
        raise ValueError(f"{name} must be a bool array of shape ({b},) (one flag per game), "
                         f"got dtype {m.dtype}, shape {m.shape}")
    return m


def check_seat(seat: Any, b: int, num_players: int) -> Any:
    """``observe``'s seat: an int in ``[0, P)`` or ``(B,)`` ints in that range."""
    if is_int(seat):
        if not 0 <= seat < num_players:
            raise ValueError(f"seat must be in 0..{num_players - 1}, got {seat}")
        return seat
    s = seat if isinstance(seat, np.ndarray) else np.asarray(seat)
    if s.dtype.kind not in "iu" or s.shape != (b,):
        raise ValueError(f"seat must be an int or {b} ints (shape ({b},)), got dtype {s.dtype}, shape {s.shape}")
    if b and (s.min() < 0 or s.max() >= num_players):
        bad = np.flatnonzero((s < 0) | (s >= num_players))[:8]
        raise ValueError(f"seat must be in 0..{num_players - 1}; rows {bad.tolist()} have {s[bad].tolist()}")
    return s.astype(np.intp, copy=False)  # (the cores compute table keys from it: no int8 overflow)


def check_out(out: Any, b: int, obs_size: int) -> None:
    """``observe``'s ``out``: a C-contiguous ``(B, obs_size)`` float32 array."""
    if (not isinstance(out, np.ndarray) or out.shape != (b, obs_size) or out.dtype != np.float32
            or not out.flags.c_contiguous):
        got = f"{out.dtype} {out.shape}" if isinstance(out, np.ndarray) else type(out).__name__
        raise ValueError(f"out must be a C-contiguous ({b}, {obs_size}) float32 array, got {got}")


def obs_rows(core: Any, obs: Any) -> np.ndarray:
    """``obs`` as a C-contiguous float32 ``(B, obs_size)`` batch (one row if 1-D), for compiled
    code that reads observation rows; a clear error otherwise, as ``core.obs_view`` gives."""
    obs = np.asarray(obs, dtype=np.float32)
    if obs.ndim == 1:
        obs = obs[None]
    if obs.ndim != 2 or obs.shape[1] != core.obs_size:
        raise ValueError(f"observations must have shape (B, {core.obs_size}), got {obs.shape}")
    return np.ascontiguousarray(obs)


def check_game_index(b: Any, batch: int) -> int:
    """A game index (``state_dict``'s ``b``) in ``[0, B)``."""
    if not is_int(b) or not 0 <= b < batch:
        raise ValueError(f"b must be a game index in 0..{batch - 1}, got {b!r}")
    return int(b)


def check_actions(actions: Any, b: int, num_actions: int) -> np.ndarray:
    """``step``'s actions: ``(B,)`` ints in ``[0, num_actions)`` (legality is the core's check),
    returned as intp."""
    a = actions if isinstance(actions, np.ndarray) else np.asarray(actions)
    if a.dtype.kind not in "iu" or a.shape != (b,):
        raise ValueError(f"actions must be {b} ints (shape ({b},), one per game), got dtype {a.dtype}, shape {a.shape}")
    # One unsigned compare catches both ends (a negative int reads as a huge unsigned one).
    u = a.view(np.uint64) if a.dtype == np.int64 else a.astype(np.uint64)
    if np.count_nonzero(u >= num_actions):
        bad = np.flatnonzero((a < 0) | (a >= num_actions))
        raise ValueError(f"actions out of range 0..{num_actions - 1}: " + _rows_actions(bad, a))
    return a.astype(np.intp, copy=False)


def illegal_actions_error(core: Any, bad: np.ndarray, actions: np.ndarray, phases: np.ndarray, masks: np.ndarray) -> ValueError:
    """The ValueError for rows ``bad`` whose action is illegal: row, action, phase and the
    legal actions of each (``masks``: those rows' legal-action masks)."""
    parts = []
    for i, row in enumerate(bad[:5].tolist()):
        a = int(actions[row])
        legal = ", ".join(core.action_names[j] for j in np.flatnonzero(masks[i]))
        parts.append(f"row {row}: action {a} ({core.action_names[a]}) in phase "
                     f"{core.phase_names[int(phases[i])]!r}, legal: {legal or 'none (the episode is over)'}")
    more = f"; and {len(bad) - 5} more rows" if len(bad) > 5 else ""
    return ValueError(f"illegal action in {len(bad)} of {len(actions)} games: " + "; ".join(parts) + more
                      + f" (rules: {RULES_DOC}; legal actions: legal_action_mask)")


def _rows_actions(bad: np.ndarray, a: np.ndarray) -> str:
    shown = ", ".join(f"row {r}: {a[r]}" for r in bad[:8].tolist())
    return shown + (f" and {len(bad) - 8} more" if len(bad) > 8 else "")


HOT_PATHS = ("legal_action_mask", "observe", "sample_legal", "step")


def methods_as_defined(cls: type) -> dict[str, Any]:
    """The hot methods of a core class as its module defined them (taken at import, so a later
    patch of the class is seen as one)."""
    return {name: cls.__dict__[name] for name in HOT_PATHS if name in cls.__dict__}


def bind_hot_paths(core: Any, as_defined: dict[str, Any], **parts_methods: Any) -> None:
    """Bind a core's B = 1 hot methods straight to its parts' (one call instead of two), but only
    where the core's class still has the method as defined: a subclass's override, or a patch of
    the class, is called as written."""
    for name, method in parts_methods.items():
        if getattr(type(core), name) is as_defined[name]:
            setattr(core, name, method)


def check_info_state(st: object, cls: type[S]) -> S:
    """``st`` if it is a ``cls`` (a state that records the history), else a ValueError naming what it is."""
    if not isinstance(st, cls):
        raise ValueError(f"state must be a {cls.__name__} (from this core's init/deal, obs='infostate'), "
                         f"got {type(st).__name__}")
    return st


def infostate_twin(core: Any, cls: type) -> Any:
    """What a core's ``infostate_core()`` returns: the core itself if it gives information states,
    else its twin of class ``cls`` (the same rules, episode and reward, ``obs="infostate"``), built
    once and kept in ``core._twin``."""
    if core.obs == "infostate":
        return core
    if core._twin is None:
        core._twin = cls(core.rules, core.episode, core.reward, obs="infostate")
    return core._twin


def pair_infostate_twin(core: Any, twin: Any, cls: Any) -> None:
    """What a core's ``pair_infostate(twin)`` does: check that ``twin`` is an ``obs="infostate"``
    ``cls`` of the same rules, episode and reward as the default-observation ``core``, and keep it
    as the twin ``infostate_twin`` returns."""
    if (not isinstance(twin, cls) or twin.obs != "infostate" or core.obs != "default"
            or (twin.rules, twin.episode, twin.reward) != (core.rules, core.episode, core.reward)):
        raise ValueError(f"pair_infostate needs an obs='infostate' {cls.__name__} of the same rules, episode and "
                         "reward, on a default-observation core")
    core._twin = twin

