"""A game's OpenSpiel form as the oracle of its batched core: both played in lock step.

:func:`play_pair` plays one episode on a core (B = 1, ``obs="infostate"``) and on the OpenSpiel
state at once, feeding the OpenSpiel chance nodes the core's cards through the form's
``feed_deal`` (the deal, and a match's next deals) and ``drawn_card`` (a card drawn unseen), and
at every decision compares: the player to act, the legal actions, both observations of every
seat; after every action the rewards, termination, truncation, and at round ends the round and
match points. ``deckgym.testing.check_game`` runs :func:`compare_random_play` on every game
whose descriptor names an OpenSpiel form; the test suite runs it on many variants.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pyspiel

from deckgym.openspiel.common import openspiel_form

__all__ = ["play_pair", "random_policy", "agent_policy", "compare_random_play", "Policy"]

Policy = Callable[[Any, Any, np.ndarray, int], int]  # (core, state, legal mask, seat) -> action


def _check(ok: bool, what: str, step: int, got: Any = None, want: Any = None) -> None:
    if not ok:
        raise AssertionError(f"step {step}: {what} differs\n openspiel: {got}\n core:      {want}")


def _observations(s: Any, core: Any, st: Any, step: int) -> None:
    P = core.num_players
    every = st.take(np.zeros(P, np.intp))  # one row per seat: each observes its own
    for name, rows, want in (
            ("observation", [s.observation_tensor(p) for p in range(P)], core.observe_default(every, np.arange(P))),
            ("information state", [s.information_state_tensor(p) for p in range(P)], core.observe(every, np.arange(P)))):
        got = np.asarray(rows, np.float32)
        if not np.array_equal(got, want):
            p, i = np.argwhere(got != want)[0]
            raise AssertionError(f"step {step}: {name} of seat {p} differs at {i}: openspiel {got[p, i]}, core {want[p, i]}")


def play_pair(game: Any, core: Any, st: Any, policy: Policy, rng: np.random.Generator, max_steps: int = 100_000) -> int:
    """One episode in lock step (module docstring); returns the number of decisions. ``game`` is
    the OpenSpiel game of ``core``'s rules and episode; ``st`` a one-game state of ``core``."""
    form = openspiel_form(game.config.game)
    s = game.new_initial_state()
    form.feed_deal(core, st, s)
    sums = np.zeros(core.num_players)
    for step in range(max_steps):
        _check(not s.is_chance_node(), "chance node at a decision", step)
        seat = int(core.current_player(st)[0])
        _check(s.current_player() == seat, "player to act", step, s.current_player(), seat)
        mask = core.legal_action_mask(st)[0]
        _check(s.legal_actions() == np.flatnonzero(mask).tolist(), "legal actions", step, s.legal_actions(),
               np.flatnonzero(mask).tolist())
        _observations(s, core, st, step)
        a = policy(core, st, mask, seat)
        before = st.copy()
        res = core.step(st, np.array([a]))
        s.apply_action(a)
        if s.is_chance_node() and s.drawing():  # the card the core drew
            s.apply_action(form.drawn_card(core, st, before, a, s))
        _check(np.array_equal(np.asarray(s.rewards(), np.float32), np.asarray(res.rewards[0], np.float32)), "rewards",
               step, s.rewards(), res.rewards[0])
        sums += res.rewards[0]
        if res.round_over[0]:
            _check(s.round_points == res.round_points[0].tolist(), "round points", step, s.round_points,
                   res.round_points[0].tolist())
            _check(s.totals == res.total_points[0].tolist(), "totals", step, s.totals, res.total_points[0].tolist())
        done = bool(res.terminated[0] or res.truncated[0])
        _check(s.is_terminal() == done, "episode end", step, s.is_terminal(), done)
        if done:
            _check(s.truncated == bool(res.truncated[0]), "truncation", step, s.truncated, bool(res.truncated[0]))
            _check(np.allclose(s.returns(), sums, atol=1e-5), "returns", step, s.returns(), sums)
            return step + 1
        if res.round_over[0]:  # a match goes on: the core dealt the next round
            form.feed_deal(core, st, s)
    raise AssertionError(f"no episode end in {max_steps} decisions")


def random_policy(rng: np.random.Generator) -> Policy:
    """Uniformly random legal actions."""
    def act(core: Any, st: Any, mask: np.ndarray, seat: int) -> int:
        legal = np.flatnonzero(mask)
        return int(legal[rng.integers(len(legal))])
    return act


def agent_policy(agent: Any, core_default: Any = None) -> Policy:
    """A deckgym agent acting on the seat's default observation (or information state)."""
    infostate = getattr(agent.core, "obs", "default") == "infostate"

    def act(core: Any, st: Any, mask: np.ndarray, seat: int) -> int:
        obs = core.observe(st, seat) if infostate else core.observe_default(st, seat)
        return int(agent.act(obs, mask[None])[0])
    return act


def compare_random_play(name: str, games: int = 3, seed: int = 0, rules: Any = None, episode: str = "round",
                        reward: str = "win") -> int:
    """``games`` episodes of random play of the registered game ``name`` (its default table unless
    ``rules``), core and OpenSpiel form in lock step; returns the decisions compared."""
    from deckgym.registration import game as game_entry

    entry = game_entry(name)
    form = openspiel_form(name)
    rules = rules if rules is not None else entry.descriptor.rules()
    core = entry.make_core(rules, episode=episode, reward=reward, obs="infostate")
    game = pyspiel.load_game(form.GAME_TYPE.short_name, {**form.params_of(rules), "episode": episode, "reward": reward})
    rng = np.random.default_rng(seed)
    return sum(play_pair(game, core, core.init(1, seed, game_ids=np.array([k])), random_policy(rng), rng)
               for k in range(games))
