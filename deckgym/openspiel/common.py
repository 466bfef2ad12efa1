"""What the two OpenSpiel games share: their game types and infos, the observer base (tensors in
deckgym's layouts, scaled as the cores scale them), text serialization by replay, and
``resample_from_infostate`` through deckgym's belief samplers."""

from __future__ import annotations

from typing import Any

import importlib
from types import ModuleType

import numpy as np
import pyspiel

from deckgym.registration import game as game_entry

__all__ = ["GameConfig", "Observer", "game_type", "variant_type", "make_info", "safe_serialize", "safe_deserialize",
           "resample_with_belief", "core_for", "StateViews", "win_rewards", "openspiel_form"]


class GameConfig:
    """A game's rules and episode options, shared by all its states (never copied by ``clone``)."""

    def __init__(self, game: str, rules: Any, episode: str, reward: str) -> None:
        if episode not in ("round", "match"):
            raise ValueError(f"episode must be 'round' or 'match', got {episode!r}")
        if reward not in ("win", "points"):
            raise ValueError(f"reward must be 'win' or 'points', got {reward!r}")
        self.game, self.rules, self.episode, self.reward = game, rules, episode, reward
        self.observers: tuple = ()  # (default, information state), set by the game

    def __deepcopy__(self, memo: dict) -> "GameConfig":
        return self  # immutable: every clone shares it


def game_type(short_name: str, long_name: str, params: dict, max_players: int, min_players: int = 2) -> pyspiel.GameType:
    """The registered type of a deckgym game: sequential, explicit chance, imperfect information."""
    return pyspiel.GameType(
        short_name=short_name, long_name=long_name, dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM, reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=max_players, min_num_players=min_players, provides_information_state_string=True,
        provides_information_state_tensor=True, provides_observation_string=True,
        provides_observation_tensor=True, parameter_specification=params)


def variant_type(base: pyspiel.GameType, episode: str, zero_sum: bool) -> pyspiel.GameType:
    """``base`` for one setting: zero-sum or general-sum; rewards before the end only in a match."""
    U, R = pyspiel.GameType.Utility, pyspiel.GameType.RewardModel
    return pyspiel.GameType(
        short_name=base.short_name, long_name=base.long_name, dynamics=base.dynamics, chance_mode=base.chance_mode,
        information=base.information, utility=U.ZERO_SUM if zero_sum else U.GENERAL_SUM,
        reward_model=R.REWARDS if episode == "match" else R.TERMINAL, max_num_players=base.max_num_players,
        min_num_players=base.min_num_players, provides_information_state_string=True,
        provides_information_state_tensor=True, provides_observation_string=True,
        provides_observation_tensor=True, parameter_specification=base.parameter_specification)


def make_info(actions: int, outcomes: int, players: int, low: float, high: float, length: int,
              zero_sum: bool) -> pyspiel.GameInfo:
    """A game's sizes and utility bounds (a utility sum of 0 for zero-sum settings)."""
    return pyspiel.GameInfo(num_distinct_actions=actions, max_chance_outcomes=outcomes, num_players=players,
                            min_utility=low, max_utility=high, utility_sum=0.0 if zero_sum else None,
                            max_game_length=length)


class Observer:
    """OpenSpiel's observer interface (``tensor``, ``dict``, ``set_from``, ``string_from``) over a
    game's ``values(state, seat)``: each piece ``(name, size, scale)`` is multiplied by its scale
    in float32, as the batched core does, so the tensors equal the core's bit for bit."""

    def __init__(self, cfg: GameConfig, pieces: list[tuple[str, int, float]], params=None) -> None:
        if params:
            raise ValueError(f"observation parameters are not supported, got {params}")
        self.cfg = cfg
        size = sum(n for _, n, _ in pieces)
        self.tensor = np.zeros(size, np.float32)
        self.scale = np.ones(size, np.float32)
        self.dict: dict[str, np.ndarray] = {}
        off = 0
        for name, n, scale in pieces:
            self.dict[name] = self.tensor[off: off + n]
            self.scale[off: off + n] = scale
            off += n

    def values(self, state: Any, seat: int) -> list:
        raise NotImplementedError

    def set_from(self, state: Any, player: int) -> None:
        """The tensor of ``state`` seen by ``player``."""
        np.multiply(np.asarray(self.values(state, player), dtype=np.float32), self.scale, out=self.tensor)


class StateViews:
    """What every state of these games does alike: the observation methods, answered in Python by
    the game's cached observers (``cfg.observers``: default, information state) without a round
    trip through C++; the rewards of the last step and their running sums (``_pay``); and
    ``serialize`` (the actions, which ``deserialize_state`` replays)."""

    def _pay(self, rewards: list[float]) -> None:
        self.rewards_now = [float(r) for r in rewards]
        self.sums = [a + b for a, b in zip(self.sums, self.rewards_now)]

    def rewards(self) -> list[float]:
        return list(self.rewards_now)

    def returns(self) -> list[float]:
        return list(self.sums)

    def serialize(self) -> str:
        """Every action, chance outcomes included, comma-separated (``deserialize_state`` replays them)."""
        return safe_serialize(self)

    def legal_actions(self, player: int | None = None) -> list[int]:
        """The legal actions (chance outcomes at a chance node), without a round trip through C++."""
        cp = self.current_player()
        if cp == pyspiel.PlayerId.TERMINAL or (player is not None and player != cp and cp >= 0):
            return []
        if cp == pyspiel.PlayerId.CHANCE:
            return [o for o, _ in self.chance_outcomes()]
        return self._legal_actions(cp)

    def _seat(self, player: int | None) -> int:
        return self.current_player() if player is None else int(player)

    def observation_tensor(self, player: int | None = None) -> np.ndarray:
        obs = self.cfg.observers[0]
        obs.set_from(self, self._seat(player))
        return obs.tensor.copy()

    def information_state_tensor(self, player: int | None = None) -> np.ndarray:
        obs = self.cfg.observers[1]
        obs.set_from(self, self._seat(player))
        return obs.tensor.copy()

    def observation_string(self, player: int | None = None) -> str:
        return self.cfg.observers[0].string_from(self, self._seat(player))

    def information_state_string(self, player: int | None = None) -> str:
        return self.cfg.observers[1].string_from(self, self._seat(player))


def win_rewards(winners: list[bool]) -> list[float]:
    """The ``"win"`` reward: +1 per winner, the losers share the winners' total; nothing when
    everybody or nobody wins (``deckgym.core.zero_sum_win_rewards``, in exact float64)."""
    k, n = sum(winners), len(winners)
    if k in (0, n):
        return [0.0] * n
    return [1.0 if w else -k / (n - k) for w in winners]


def safe_serialize(state: Any) -> str:
    """Every action of ``state``'s history, chance outcomes included, comma-separated."""
    return ",".join(str(a) for a in state.history())


def safe_deserialize(game: Any, text: str) -> Any:
    """The state reached by replaying ``text`` (``safe_serialize``'s form) from a new game;
    a ValueError names the first action that is not legal where it stands."""
    state = game.new_initial_state()
    for i, item in enumerate(filter(None, text.strip().split(","))):
        try:
            a = int(item)
        except ValueError:
            raise ValueError(f"serialized state: item {i} ({item!r}) is not an action id") from None
        legal = [o for o, _ in state.chance_outcomes()] if state.is_chance_node() else state.legal_actions()
        if a not in legal:
            raise ValueError(f"serialized state: action {a} at position {i} is not legal there (legal: {legal})")
        state.apply_action(a)
    return state


_CORES: dict[tuple, Any] = {}
_BELIEFS: dict[tuple, Any] = {}


def openspiel_form(name: str) -> ModuleType:
    """The OpenSpiel module of the registered game ``name``, as its descriptor names it (imported,
    so the game is registered with pyspiel); a ValueError if the game has none."""
    return game_entry(name).descriptor.openspiel_module()


def core_for(cfg: GameConfig, obs: str = "infostate") -> Any:
    """The batched core of ``cfg``'s rules (cached), for beliefs and agents."""
    key = (cfg.rules, cfg.episode, cfg.reward, obs)
    if key not in _CORES:
        core = game_entry(cfg.game).descriptor.core
        _CORES[key] = core(cfg.rules, episode=cfg.episode, reward=cfg.reward, obs=obs)
    return _CORES[key]


def belief_for(cfg: GameConfig, model: str) -> Any:
    """deckgym's belief sampler ``model`` for ``cfg``'s game (cached)."""
    key = (cfg.rules, cfg.episode, cfg.reward, model)
    if key not in _BELIEFS:
        target = game_entry(cfg.game).descriptor.belief
        if target is None:
            raise ValueError(f"game {cfg.game!r} has no belief sampler (its descriptor's belief)")
        module, _, name = target.partition(":")
        _BELIEFS[key] = getattr(importlib.import_module(module), name)(core_for(cfg), model=model)
    return _BELIEFS[key]


def resample_with_belief(state: Any, player: int, sampler: Any, model: str) -> Any:
    """A clone of ``state`` whose cards hidden from ``player`` are drawn by deckgym's belief
    ``model`` from ``player``'s information state; ``sampler`` (OpenSpiel's
    ``UniformProbabilitySampler``, any callable giving floats in [0, 1), or an int seed) seeds it."""
    if state.is_chance_node() or state.is_terminal() or player != state.current_player():
        raise ValueError("resample_from_infostate needs a decision of that player (not chance, not terminal)")
    if sampler is None:
        seed = 0
    elif isinstance(sampler, (int, np.integer)):
        seed = int(sampler)
    else:
        seed = int(sampler() * 2**53)
    rng = np.random.default_rng(seed)
    world = belief_for(state.cfg, model).sample(np.asarray(state.information_state_tensor(player), np.float32)[None],
                                                1, rng)
    new = state.clone()
    new.set_world(player, world)
    return new
