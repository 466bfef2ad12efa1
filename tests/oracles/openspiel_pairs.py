"""The OpenSpiel games (``deckgym.openspiel``) as the oracle of the whole batched cores.

:func:`play_pair` plays one episode on a core (an explicit deal, ``obs="infostate"``) and on the
OpenSpiel state at once, feeding the OpenSpiel chance nodes the core's cards (its deal, the card
it drew, its next round's deal), and at every decision compares: the player to act, the legal
actions, both observations of every seat; after every action the rewards, termination,
truncation, and at round ends the round and match points.

Why it is not the shipped code itself: this is no copy of the rules but the harness
that plays the normative batched core against the readable OpenSpiel reference
(``deckgym.openspiel``); the package has no use for it.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

Policy = Callable[[Any, Any, np.ndarray, int], int]  # (core, state, legal mask, seat) -> action


def _close(a: np.ndarray, b: np.ndarray) -> bool:
    return np.array_equal(np.asarray(a, np.float32), np.asarray(b, np.float32))


def _check(ok: bool, what: str, step: int, got: Any = None, want: Any = None) -> None:
    if not ok:
        raise AssertionError(f"step {step}: {what} differs\n openspiel: {got}\n core:      {want}")


def feed_racko_deal(core: Any, st: Any, os_state: Any) -> None:
    """The core's deal (R3) as the OpenSpiel state's chance outcomes."""
    P = core.num_players
    if os_state.dealer < 0:
        os_state.apply_action(int(st.dealer[0]))
    dealer = int(st.dealer[0])
    assert os_state.dealer == dealer, (os_state.dealer, dealer)
    racks = core.racks(st)[0]
    for j in range(10 * P):
        os_state.apply_action(int(racks[(dealer + 1 + j) % P, 9 - j // P]))
    _, discard, _ = core.piles(st)
    os_state.apply_action(int(discard[-1]))


def feed_leastscore_deal(core: Any, st: Any, os_state: Any) -> None:
    """The core's deal (L3) as the OpenSpiel state's chance outcomes."""
    if os_state.first < 0:
        os_state.apply_action(int(st.first[0]))
    assert os_state.first == int(st.first[0]), (os_state.first, int(st.first[0]))
    hands = core.hand_cards(st)[0]
    while os_state.is_chance_node():
        seat, _ = os_state.next_deal()
        if seat >= 0:
            held = [int(c) for c in hands[seat] if c >= 0 and int(c) not in os_state.hands[seat]]
            os_state.apply_action(held[0])
        else:  # the card turned up: the floor
            floor = [c for c in range(52) if int(st.floor_bits[0]) >> c & 1]
            os_state.apply_action(floor[0])


def play_pair(game: Any, core: Any, st: Any, policy: Policy, rng: np.random.Generator, max_steps: int = 100_000) -> int:
    """One episode in lock step (module docstring); returns the number of decisions."""
    racko = hasattr(core, "pile_size")
    feed = feed_racko_deal if racko else feed_leastscore_deal
    s = game.new_initial_state()
    feed(core, st, s)
    P = core.num_players
    sums = np.zeros(P)
    for step in range(max_steps):
        _check(not s.is_chance_node(), "chance node at a decision", step)
        seat = int(core.current_player(st)[0])
        _check(s.current_player() == seat, "player to act", step, s.current_player(), seat)
        mask = core.legal_action_mask(st)[0]
        _check(s.legal_actions() == np.flatnonzero(mask).tolist(), "legal actions", step, s.legal_actions(),
               np.flatnonzero(mask).tolist())
        every = st.take(np.zeros(P, np.intp))  # one row per seat: each observes its own
        for name, got, want in (
                ("observation", [s.observation_tensor(p) for p in range(P)], core.observe_default(every, np.arange(P))),
                ("information state", [s.information_state_tensor(p) for p in range(P)], core.observe(every, np.arange(P)))):
            got = np.asarray(got, np.float32)
            if not np.array_equal(got, want):
                p, i = np.argwhere(got != want)[0]
                raise AssertionError(f"step {step}: {name} of seat {p} differs at {i}: openspiel {got[p, i]}, "
                                     f"core {want[p, i]}")
        a = policy(core, st, mask, seat)
        before = st.copy() if not racko and a == 32 else None  # Least Score's deck draw
        res = core.step(st, np.array([a]))
        s.apply_action(a)
        if s.is_chance_node() and s.drawing():  # the card the core drew
            s.apply_action(_drawn(core, st, before, a, s))
        _check(_close(s.rewards(), res.rewards[0]), "rewards", step, s.rewards(), res.rewards[0])
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
            feed(core, st, s)
    raise AssertionError(f"no episode end in {max_steps} decisions")


_ROUND_CORES: dict = {}


def _drawn(core: Any, st: Any, before: Any, a: int, s: Any) -> int:
    """The card the core just drew: Rack-O's card in hand; Least Score's new card of the drawer,
    from the step replayed on a copy in a round episode (a match may have dealt anew since)."""
    if hasattr(core, "pile_size"):
        return int(core.piles(st)[2])
    key = (core.rules, core.reward)
    round_core = _ROUND_CORES.get(key) or _ROUND_CORES.setdefault(
        key, type(core)(core.rules, episode="round", reward=core.reward, obs="infostate"))
    round_core.step(before, np.array([a]))
    held = [int(c) for c in round_core.hand_cards(before)[0, s.cur] if c >= 0 and int(c) not in s.hands[s.cur]]
    assert len(held) == 1, held
    return held[0]


def random_policy(rng: np.random.Generator) -> Policy:
    def act(core: Any, st: Any, mask: np.ndarray, seat: int) -> int:
        legal = np.flatnonzero(mask)
        return int(legal[rng.integers(len(legal))])
    return act


def agent_policy(agent: Any, core_default: Any) -> Policy:
    """A deckgym agent acting on the seat's default observation (or information state)."""
    infostate = getattr(agent.core, "obs", "default") == "infostate"

    def act(core: Any, st: Any, mask: np.ndarray, seat: int) -> int:
        obs = core.observe(st, seat) if infostate else core.observe_default(st, seat)
        return int(agent.act(obs, mask[None])[0])
    return act
