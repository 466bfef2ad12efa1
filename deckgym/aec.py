"""The one PettingZoo AEC adapter over any deckgym core.

A game's ``env.py`` subclasses :class:`CoreAECEnv`, builds its rules and core, sets
``metadata`` and supplies the two render hooks; everything else (agents, spaces,
``reset(seed=, options=)``, validation of actions, rewards, round infos, elimination,
``state()``, pickling) lives here once.

- **Infos**: from ``reset`` on, every agent's info holds every round-result key:
  ``round_points``, ``total_points`` and the core's extra keys (Rack-O ``own_points``,
  ``went_out``, ``run_bonus``; Least Score ``hand_total``), then ``illegal_move`` (False),
  ``illegal_action`` (−1) and ``illegal_actions``. Until a round ends they hold neutral
  values: 0 and False, and ``total_points`` the totals the deal starts with (0 but in an
  explicit deal with scores). Clients that fix their info spec at reset (TorchRL) keep them.
- **Illegal actions** (:mod:`deckgym.illegal`): ``"raise"`` (default) or ``"terminate"``:
  the offender gets −1, everyone is done, ``illegal_move`` is True for the offender (False
  for the others) and its ``illegal_action`` is the action; the first illegal action in
  each phase is logged, ``illegal_actions`` counts them since the last seeded reset.
- **State**: ``state()`` is the full state (every card, hidden or not) as a flat float32
  vector in ``state_space`` (a ``Box``), for centralised critics: ``core.state_array``,
  whose layout each core's module docstring gives (``core.state_slices``).
  ``state_dict()`` gives the same in readable form. The env runs the batched core with ``B = 1``,
so the AEC env and the vectorised core play exactly the same game for the same seed
and actions.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv

from deckgym.core import Core
from deckgym.illegal import (IllegalActionError, IllegalActionLog, check_illegal_action_mode, illegal_action_message)
from deckgym.rng import check_seed


class CoreAECEnv(AECEnv, EzPickle):
    """PettingZoo AEC environment over a batched core, run with one game.

    Subclasses set ``metadata`` and implement :meth:`_render_ansi` and
    :meth:`_render_rgb`; they pass their own constructor arguments as ``init_kwargs``
    so that the env pickles (``EzPickle``) and can be rebuilt by name.
    """

    metadata: dict[str, Any] = {"render_modes": ["ansi", "rgb_array"], "is_parallelizable": False}

    def __init__(
        self,
        core: Core,
        *,
        illegal_action: str = "raise",
        render_mode: str | None = None,
        init_kwargs: dict[str, Any] | None = None,
    ) -> None:
        EzPickle.__init__(self, **(init_kwargs or {}))
        super().__init__()
        check_illegal_action_mode(illegal_action)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        self.core = core
        self.rules = core.rules
        self.illegal_action = illegal_action
        self.render_mode = render_mode
        self.possible_agents = [f"player_{i}" for i in range(core.num_players)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        # Spaces are built once and shared by all agents (they are identical).
        obs_space = spaces.Dict(
            {
                # Tight bounds if the core states them (obs_low/obs_high), else unbounded above.
                "observation": spaces.Box(
                    low=getattr(core, "obs_low", -1.0),
                    high=getattr(core, "obs_high", np.inf),
                    shape=(core.obs_size,),
                    dtype=np.float32,
                ),
                "action_mask": spaces.Box(low=0, high=1, shape=(core.num_actions,), dtype=np.int8),
            }
        )
        act_space = spaces.Discrete(core.num_actions)
        self.state_space = spaces.Box(core.state_low, core.state_high, shape=(core.state_size,), dtype=np.float32)
        self.illegal_log = IllegalActionLog(1)
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: act_space for a in self.possible_agents}
        self.game_state = None
        self._mask: np.ndarray | None = None

    # -- PettingZoo API -------------------------------------------------------------
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Deal a new game: ``seed`` fixes it; ``options`` gives an explicit deal (see the game's docs).

        ``seed`` must be ``None`` or a non-negative integer (a Python or numpy int; never a float
        or a bool, which would silently deal another game); ``options`` ``None`` or a dict.
        """
        check_seed(seed)
        if seed is not None:  # a seeded reset replays exactly, counts included
            self.illegal_log.counts[:] = 0
        if options is not None and not isinstance(options, Mapping):
            raise TypeError(f"options must be None or a dict describing an explicit deal (see the game's docs, "
                            f"'Explicit deals'), got {type(options).__name__} {options!r}")
        if options is not None and set(options) == {"options"}:
            # PettingZoo's api_test probes the signature with reset(options={"options": 1});
            # that probe is not a deal. Any other unknown key is rejected by core.deal.
            options = None
        if options:
            if seed is None:
                seed = secrets.randbits(63)
            self.game_state = self.core.deal(int(seed), dict(options))
        elif seed is not None or self.game_state is None:
            # A fresh stream per seed; without a seed, a fresh random one on first use.
            self.game_state = self.core.init(1, int(seed) if seed is not None else secrets.randbits(63))
        else:
            # reset() without a seed continues this env's random stream: a new deal.
            self.core.reset_where(self.game_state, np.ones(1, dtype=bool))
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {} for a in self.agents}
        self._write_round_infos(self.core.empty_result(self.game_state))  # neutral values (module docstring)
        for info in self.infos.values():
            info.update(illegal_move=False, illegal_action=-1, illegal_actions=int(self.illegal_log.counts[0]))
        self._skip_agent_selection = None
        alive = self.core.alive(self.game_state)[0]
        for i, a in enumerate(self.possible_agents):
            if not alive[i]:  # an explicit deal may start with eliminated players
                self.terminations[a] = True
        self._refresh_selection()
        self._deads_step_first()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = self.agent_name_mapping[agent]
        obs = self.core.observe(self.game_state, seat)[0]
        if agent == self.agent_selection and self._mask is not None and not self._is_dead(agent):
            mask = self._mask.astype(np.int8)
        else:
            mask = np.zeros(self.core.num_actions, dtype=np.int8)
        return {"observation": obs, "action_mask": mask}

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self._is_dead(agent):
            self._was_dead_step(action)
            return
        a = self._validate(action)
        self._cumulative_rewards[agent] = 0.0
        if a is None:  # illegal, and illegal_action == "terminate"
            self._terminate_illegal(agent, int(action))
            return
        res = self.core.step(self.game_state, np.array([a], dtype=np.int64))
        for i, ag in enumerate(self.possible_agents):
            if ag in self.rewards:
                self.rewards[ag] = float(res.rewards[0, i])
        if res.round_over[0]:
            self._write_round_infos(res)
        if res.terminated[0] or res.truncated[0]:
            done = self.terminations if res.terminated[0] else self.truncations
            for ag in self.agents:
                done[ag] = True
            self._mask = None
        else:
            alive = self.core.alive(self.game_state)[0]
            for ag in self.agents:
                if not alive[self.agent_name_mapping[ag]]:
                    self.terminations[ag] = True  # eliminated (Least Score, L9)
            self._refresh_selection()
        self._accumulate_rewards()
        self._deads_step_first()
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            import gymnasium

            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        if self.game_state is None:
            raise RuntimeError("call reset() before render()")
        if self.render_mode == "ansi":
            return self._render_ansi()
        if self.render_mode == "human":  # a terminal game: "human" prints the text picture
            print(self._render_ansi())
            return None
        return self._render_rgb()

    def state(self) -> np.ndarray:
        """The full state of the game (every card, hidden or not) as a flat float32 vector in
        ``state_space``: for centralised critics (the layout: the core's ``state_slices``)."""
        if self.game_state is None:
            raise RuntimeError("call reset() before state()")
        return self.core.state_array(self.game_state)[0]

    def state_dict(self) -> dict[str, Any]:
        """The full state of the game in readable form (``core.state_dict``): for debugging."""
        if self.game_state is None:
            raise RuntimeError("call reset() before state_dict()")
        return self.core.state_dict(self.game_state, 0)

    def close(self) -> None:
        pass

    # -- hooks for the games ------------------------------------------------------------
    def _render_ansi(self) -> str:
        raise NotImplementedError

    def _render_rgb(self) -> np.ndarray:
        raise NotImplementedError

    # -- helpers ------------------------------------------------------------------------
    def _is_dead(self, agent: str) -> bool:
        return self.terminations.get(agent, False) or self.truncations.get(agent, False)

    def _refresh_selection(self) -> None:
        self.agent_selection = self.possible_agents[int(self.core.current_player(self.game_state)[0])]
        self._mask = self.core.legal_action_mask(self.game_state)[0]

    def _validate(self, action: Any) -> int | None:
        """The action as an int if legal; raises (or returns None to terminate) if not."""
        if isinstance(action, np.ndarray) and action.shape == ():
            action = action.item()
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            raise TypeError(f"action must be an int in [0, {self.core.num_actions}), got {action!r}")
        a = int(action)
        if 0 <= a < self.core.num_actions and self._mask[a]:
            return a
        if self.illegal_action == "terminate":
            return None
        raise IllegalActionError(illegal_action_message(self.core, self.game_state, a, self._mask, self.agent_selection))

    def _terminate_illegal(self, agent: str, action: int) -> None:
        """As PettingZoo's TerminateIllegalWrapper: the offender gets -1, everyone is done."""
        msg = illegal_action_message(self.core, self.game_state, action, self._mask, agent)
        self.illegal_log.record(self.core.phase_names, np.zeros(1, np.int64), self.core.phase(self.game_state),
                                lambda g: msg)
        for ag in self.agents:
            self.rewards[ag] = 0.0
            self.terminations[ag] = True
            self.infos[ag].update(illegal_move=ag == agent, illegal_action=action if ag == agent else -1,
                                  illegal_actions=int(self.illegal_log.counts[0]))
        self.rewards[agent] = -1.0
        self._mask = None
        self._accumulate_rewards()

    def _write_round_infos(self, res) -> None:
        for ag in self.agents:
            i = self.agent_name_mapping[ag]
            info = self.infos[ag]
            info["round_points"] = int(res.round_points[0, i])
            info["total_points"] = int(res.total_points[0, i])
            for key, arr in res.extra.items():
                info[key] = arr[0, i].item()

    # -- pickling: EzPickle rebuilds the env, then the game in progress is restored ------
    _SNAPSHOT = ("game_state", "_mask", "illegal_log", "agents", "rewards", "_cumulative_rewards", "terminations",
                 "truncations", "infos", "agent_selection", "_skip_agent_selection")

    def __getstate__(self) -> dict[str, Any]:
        d = EzPickle.__getstate__(self)
        d["_snapshot"] = {k: self.__dict__[k] for k in self._SNAPSHOT if k in self.__dict__}
        return d

    def __setstate__(self, d: dict[str, Any]) -> None:
        snapshot = d.pop("_snapshot", {})
        EzPickle.__setstate__(self, d)
        self.__dict__.update(snapshot)
