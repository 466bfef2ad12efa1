"""The one play-out loop: batched agents play a batch of games on a core, step by step.

Each step: the seat to move in every game → its owner (an agent index, from a
``(B, P)`` seat-owner table) → one batched ``act(obs, mask)`` call per agent over the
games it moves in → the actions are checked (integers, legal under the mask) →
``core.step`` (without its own check of the same).
Agents are any objects with ``act(obs, mask) -> (n,) int actions``; nothing here imports
``agents``. An agent whose ``observation`` attribute is ``"infostate"`` is given information
states (the core's perfect-recall view, ``obs="infostate"``): the loop then plays the games on
the core's information-state twin, which records the public history, and the other agents
keep the default observation. Without such an agent the loop is exactly the default one.

    for turn in play_out(core, state, agents, owner):
        ...  # turn.games, turn.seats, turn.actions, turn.result (the StepResult), ...

Two ways to end, chosen by ``drop_finished``:

* ``True`` (the arena, analyses): finished games leave the batch after their last step
  is yielded; the loop ends when no game is left.
* ``False`` (a vector env): finished games stay; the caller deals them anew in place
  (``core.reset_where(state, ...)`` on the ``state`` it passed, and updates ``owner``)
  before resuming the loop, which reads ``owner`` afresh at every step.

A seat whose owner is ``-1`` is not played here: its games wait, and the loop ends when
every remaining game waits for such a seat (a learner's turn in every game). Games that
wait are not stepped; with some games waiting, the others are stepped as a sub-batch
(``state.take`` / ``state.put``), so only ``drop_finished=False`` callers see this.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

import numpy as np


@dataclass
class Turn:
    """One batched step: the games that moved and what happened, rows aligned.

    ``games`` index the batch first passed in (and the rows of ``owner``); ``state`` is the
    batch that was stepped, in those games' order (before ``core.step`` when seen by
    ``before_step``, after it when yielded); ``result`` is ``None`` until the step is made.
    """

    games: np.ndarray  # (n,) int: which games moved
    seats: np.ndarray  # (n,) int: the seat that moved in each
    owner: np.ndarray  # (n,) int: the agent index that moved
    obs: np.ndarray  # (n, obs_size) the movers' observations
    masks: np.ndarray  # (n, A) bool legal actions
    actions: np.ndarray  # (n,) int64 the actions played
    state: Any  # the stepped batch (the whole state, or a sub-batch)
    result: Any = None  # the core's StepResult for these games

    @property
    def finished(self) -> np.ndarray:
        """``(n,)`` bool: games whose episode ended on this step."""
        return self.result.terminated | self.result.truncated


def act_by_owner(
    agents: Sequence[Any], owner: np.ndarray, obs: np.ndarray, masks: np.ndarray, names: Sequence[str] | None = None,
    infostates: np.ndarray | None = None, wants: Sequence[bool] | None = None,
) -> np.ndarray:
    """Actions for rows whose agent is ``agents[owner[row]]``: one ``act`` call per agent.

    Agents are called in index order, each once on all its rows (agents that draw random
    numbers draw them in that order). Raises ``RuntimeError`` naming the agent if what it
    returns is not one integer action per row, each legal under ``masks``. ``wants[k]``:
    agent ``k`` acts on ``infostates`` instead of ``obs`` (rows aligned).
    """
    def view(k: Any) -> np.ndarray:
        return infostates if wants is not None and wants[int(k)] else obs

    first = owner[0] if len(owner) else 0
    if (owner == first).all():  # one agent moves everywhere: no copies of its inputs
        return checked_actions(agents[first].act(view(first), masks), masks, _name(agents, first, names))
    actions = np.empty(len(owner), dtype=np.int64)
    for k in np.unique(owner):
        rows = np.flatnonzero(owner == k)
        m = masks[rows]
        actions[rows] = checked_actions(agents[k].act(view(k)[rows], m), m, _name(agents, k, names))
    return actions


def wants_infostate(agent: Any) -> bool:
    """Whether ``agent`` acts on information states (its ``observation`` is ``"infostate"``)."""
    return getattr(agent, "observation", "default") == "infostate"


def infostate_core(core: Any) -> Any:
    """``core``'s information-state twin (same rules and options, ``obs="infostate"``), built once
    (the core's own ``infostate_core()``; a ValueError for a game without information states)."""
    if getattr(core, "obs", "default") == "infostate":
        return core
    if not hasattr(core, "infostate_core"):
        raise ValueError(f"{type(core).__name__} has no information-state observation (obs='default' only)")
    return core.infostate_core()


def observe_for(agent: Any, core: Any, state: Any, seat: Any) -> np.ndarray:
    """What ``agent`` observes of ``state`` for ``seat``: the information state if it wants
    one and ``state`` records the history (an information-state core's), else the default."""
    if getattr(core, "obs", "default") == "infostate":
        return core.observe(state, seat) if wants_infostate(agent) else core.observe_default(state, seat)
    return core.observe(state, seat)


def _name(agents: Sequence[Any], k: Any, names: Sequence[str] | None) -> str:
    return names[int(k)] if names is not None else getattr(agents[int(k)], "spec", type(agents[int(k)]).__name__)


def checked_actions(actions: Any, masks: np.ndarray, name: str) -> np.ndarray:
    """``actions`` as ``(n,)`` int64 if they are ``n`` integers, each legal under ``masks (n, A)``;
    else ``RuntimeError`` naming the agent ``name``. (What ``core.step`` would check, once.)"""
    a = actions if isinstance(actions, np.ndarray) else np.asarray(actions)
    n, A = masks.shape
    if a.shape != (n,) or a.dtype.kind not in "iu":
        raise RuntimeError(f"agent {name!r} must return {n} integer actions (shape ({n},)), "
                           f"got dtype {a.dtype}, shape {a.shape}")
    a = a.astype(np.int64, copy=False)
    inside = (a >= 0) & (a < A)
    legal = inside & masks[np.arange(n), np.where(inside, a, 0)]
    if not legal.all():
        raise RuntimeError(f"agent {name!r} chose illegal action {int(a[np.flatnonzero(~legal)[0]])}")
    return a


def play_out(
    core: Any,
    state: Any,
    agents: Sequence[Any],
    owner: np.ndarray,
    *,
    names: Sequence[str] | None = None,
    drop_finished: bool = True,
    before_step: Callable[[Turn], None] | None = None,
    after_step: Callable[[Turn], None] | None = None,
) -> Iterator[Turn]:
    """Play ``state`` (a batch of ``B`` games, stepped in place) and yield each :class:`Turn`.

    ``owner[g, seat]``: index into ``agents`` of who plays ``seat`` in game ``g``, or ``-1``
    (the game waits when that seat is to move). ``names`` label the agents in errors
    (default: their ``spec``). ``before_step(turn)`` sees each step before it is made and
    may change ``turn.actions`` in place (an analysis substituting decisions; it must keep
    them legal). ``after_step(turn)`` sees each step once it is made, before it is yielded
    (a recorder, :mod:`deckgym.replay`). The loop ends as described in the module docstring.
    """
    wants = [wants_infostate(a) for a in agents]
    info = any(wants) or getattr(core, "obs", "default") == "infostate"
    if info:
        core, state = _infostate_play(core, state, drop_finished)
        need_default = not all(wants)
    games = np.arange(state.batch_size)
    while state.batch_size:
        seats = core.current_player(state)
        who = owner[games, seats]
        movers = np.flatnonzero(who >= 0)
        if movers.size == 0:
            return
        whole = movers.size == len(games)
        sub = state if whole else state.take(movers)
        masks = core.legal_action_mask(sub)
        who = who if whole else who[movers]
        if info:
            s = seats if whole else seats[movers]
            infostates = core.observe(sub, s) if any(wants[k] for k in np.unique(who)) else None
            obs = core.observe_default(sub, s) if need_default else infostates
            actions = act_by_owner(agents, who, obs, masks, names, infostates, wants)
        else:
            obs = core.observe(sub, seats if whole else seats[movers])
            actions = act_by_owner(agents, who, obs, masks, names)
        turn = Turn(games if whole else games[movers], seats if whole else seats[movers], who, obs, masks, actions, sub)
        if before_step is not None:
            before_step(turn)
            turn.actions = checked_actions(turn.actions, masks, "before_step")
        # Checked above against the mask, so the core's own check of the same would be redundant.
        turn.result = core.step(sub, turn.actions, check=False)
        if not whole:
            state.put(movers, sub)
        if after_step is not None:
            after_step(turn)
        yield turn
        if drop_finished:
            done = turn.finished
            if done.any():
                gone = np.zeros(len(games), dtype=bool)
                gone[movers[done]] = True
                keep = np.flatnonzero(~gone)
                state = state.take(keep)
                games = games[keep]


def _infostate_play(core: Any, state: Any, drop_finished: bool) -> tuple[Any, Any]:
    """The core and state to play on when some agent wants information states: ``core``'s
    own if it records the history, else its twin and ``state`` given an empty history (its
    arrays shared), which is right only for games that have not started."""
    if getattr(core, "obs", "default") == "infostate":
        return core, state
    if not drop_finished:
        raise ValueError("an agent acting on information states needs a core built with obs='infostate' "
                         "when finished games stay in the batch (a vector env: make_vec(..., obs='infostate'))")
    twin = infostate_core(core)
    return twin, twin.with_history(state)
