"""Helpers shared by the test files, one home each (import them: ``from tests.conftest import ...``).

Cores by game name, random legal actions (batched, single, or for an AEC env), Rack-O's slot
actions, hand-built decoded views for the planners' tests, and a random-play generator. And the
session's own temp dir, which must hold nothing of ours at the end (``pytest_sessionfinish``).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any, Iterator

import numpy as np
import pytest

from deckgym.registration import game as game_entry
from leastscore_env.state import DECLARE
from leastscore_env.state import NUM_ACTIONS as LEASTSCORE_NUM_ACTIONS
from racko_env.state import ACTION_NAMES as RACKO_ACTION_NAMES
from racko_env.state import CHOOSE, DISCARD_DRAWN, DRAW, PLACE_DRAWN, TAKE
from racko_env.rules import RackoRules


def torch_threads() -> int:
    """The torch thread count the tests use: ``DECKGYM_TEST_TORCH_THREADS`` (default 1), so the
    portability check can rerun the suite with 2 threads (another split of every matrix product)."""
    return int(os.environ.get("DECKGYM_TEST_TORCH_THREADS", "1"))


def make_core(game: str, players: int | None = None, episode: str = "round", reward: str = "win", **rules_kwargs: Any) -> Any:
    """The ``game``'s core for ``players`` seats (default: the rules' default) and other rules fields."""
    entry = game_entry(game)
    if players is not None:
        rules_kwargs["num_players"] = players
    return entry.make_core(entry.make_rules(**rules_kwargs), episode=episode, reward=reward)


def random_legal(mask: np.ndarray, rng: np.random.Generator) -> Any:
    """A uniformly random legal action: an int for one ``(A,)`` mask, ``(n,)`` ints for ``(n, A)`` masks."""
    mask = np.asarray(mask, dtype=bool)
    if mask.ndim == 1:
        legal = np.flatnonzero(mask)
        return int(legal[rng.integers(len(legal))])
    return np.argmax(rng.random(mask.shape) * mask, axis=1)


def aec_random_action(env: Any, rng: np.random.Generator) -> int | None:
    """For a PettingZoo AEC env: a random legal action of the agent to act, ``None`` on its dead step."""
    agent = env.agent_selection
    if env.terminations[agent] or env.truncations[agent]:
        return None
    return random_legal(env.observe(agent)["action_mask"], rng)


def slot(i: int) -> int:
    """Rack-O: the action putting the card in hand into slot ``i`` (1-based)."""
    return RACKO_ACTION_NAMES.index(f"slot_{i}")


def racko_view(rack, phase, hand=0, top=0, rules=None, in_discard=(), opp_known=()):
    """A one-game Rack-O decoded view plus its legal mask (R4: the mask depends on the phase only)."""
    rules = rules or RackoRules()
    n, p = rules.deck_size, rules.num_players
    disc = np.zeros((1, n + 1), bool)
    disc[0, list(in_discard) + ([top] if top else [])] = True
    opp = np.zeros((1, p - 1, 10), np.int64)
    for k, c in enumerate(opp_known):
        opp[0, 0, k] = c
    view = {
        "rack": np.array([rack], np.int64),
        "phase": np.array([phase]),
        "hand": np.array([hand]),
        "discard_top": np.array([top]),
        "opp_known": opp,
        "seen": disc.copy(),
        "in_discard": disc,
        "draw_size": np.array([5]),
        "discard_size": np.array([disc.sum()]),
        "scores": np.zeros((1, p), np.int64),
        "turn": np.array([10]),
    }
    mask = np.zeros((1, len(RACKO_ACTION_NAMES)), bool)
    if phase == CHOOSE:
        mask[0, [DRAW, TAKE]] = True
    else:
        mask[0, slot(1):slot(10) + 1] = True
        mask[0, DISCARD_DRAWN] = phase == PLACE_DRAWN
    return view, mask, rules


def leastscore_view(hand, opp_known=(), opp_size=(5, 5, 5), seen=(), turn=8, P=4):
    """A hand-built Least Score obs_view (B = 1, discard phase, declaring legal)."""
    def mask(cards):
        m = np.zeros((1, 52), bool)
        m[0, list(cards)] = True
        return m
    ok = np.zeros((1, P - 1, 52), bool)
    for o, cards in enumerate(opp_known):
        ok[0, o, list(cards)] = True
    return {
        "hand": np.array([sorted(hand) + [-1] * (5 - len(hand))]), "hand_mask": mask(hand),
        "floor": np.full((1, 5), -1), "discard": mask(()), "seen": mask(seen), "dead": mask(seen),
        "opp_known": ok, "opp_hand_size": np.array([list(opp_size)]), "alive": np.ones((1, P), bool),
        "phase": np.array([0]), "can_declare": np.array([True]), "deck_size": np.array([30]),
        "turn": np.array([turn]),
    }


def leastscore_mask():
    """The legal mask to go with :func:`leastscore_view`: two single discards and declaring."""
    m = np.zeros((1, LEASTSCORE_NUM_ACTIONS), bool)
    m[0, 0] = m[0, 1] = True  # two singles
    m[0, DECLARE] = True
    return m


def leastscore_random_play(P, steps=120, B=64, seed=7) -> Iterator[tuple[Any, np.ndarray, np.ndarray]]:
    """Uniformly random Least Score play of ``B`` rounds (dealt anew as they end): yields
    ``(core, obs, mask)`` of the seat to move before each step."""
    core = make_core("leastscore", P)
    st = core.init(B, seed=seed)
    rng = np.random.default_rng(3)
    for _ in range(steps):
        cp = core.current_player(st)
        obs = core.observe(st, cp)
        m = core.legal_action_mask(st)
        yield core, obs, m
        res = core.step(st, core.sample_legal(m, rng))
        core.reset_where(st, res.terminated | res.truncated)


def permute_two_player_hidden(core: Any, st: Any, seat: np.ndarray) -> Any:
    """A copy of two-player Rack-O games ``st`` whose cards hidden from ``seat`` (the
    opponent's unknown slots and the draw pile) are permuted among those places, per game."""
    other = st.copy()
    K = core.pile_size
    for b in range(st.batch_size):
        q = 1 - int(seat[b])
        hidden = np.flatnonzero(other.racks[b, q] > 0)
        draw = K - int(other.disc_n[b]) - int(other.phase[b] != CHOOSE)
        vals = np.random.default_rng(b).permutation(np.concatenate([other.racks[b, q, hidden], other.piles[b, :draw]]))
        other.racks[b, q, hidden] = vals[: len(hidden)]
        other.piles[b, :draw] = vals[len(hidden):]
    return other


def legal_sampling(env: Any) -> None:
    """Make an AEC env's action spaces sample a legal action of the agent to act (PettingZoo's
    state and seed checks draw ``action_space(agent).sample()`` without a mask)."""
    from gymnasium import spaces

    class Legal(spaces.Discrete):
        def sample(self, mask: Any = None, probability: Any = None) -> np.int64:
            if mask is None and probability is None:
                mask = env.observe(env.agent_selection)["action_mask"]
            return super().sample(mask=mask, probability=probability)

    raw = env.unwrapped
    raw.action_spaces = {a: Legal(space.n, seed=0) for a, space in raw.action_spaces.items()}


def pettingzoo_state_checks(env: Any) -> None:
    """PettingZoo's checks of an AEC env's ``state()``, with any warning an error: a Box
    ``state_space``, and its ``state_test``'s two AEC parts (the rest wants a parallel env)."""
    import importlib
    import warnings

    from gymnasium import spaces

    pz_state = importlib.import_module("pettingzoo.test.state_test")
    assert isinstance(env.unwrapped.state_space, spaces.Box)
    legal_sampling(env)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pz_state.test_state_space(env)
        pz_state.test_state(env, num_cycles=200)


@pytest.fixture(scope="session")
def pg_cluster():
    """A PostgreSQL server of its own for the session (tests/pg_cluster.py), stopped at the end."""
    from tests.pg_cluster import PgCluster

    cluster = PgCluster()
    yield cluster
    cluster.stop()


# -- no litter: the session's temp dir is its own, and must be empty of ours at the end ------------------
# What nothing of ours or our dependencies' may leave behind: SB3's log folders (SB3-<time>), our scratch
# folders (deckgym...), Ray's session folders (ray/) and the test clusters' (rayh..., rayc...)
LITTER_PREFIXES = ("SB3-", "deckgym", "ray")
_SESSION_TMP = pytest.StashKey[tuple[str, "str | None"]]()


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    """The session gets a temp dir of its own (TMPDIR, inherited by the xdist workers and every
    subprocess), so that another program's files never count as this run's, nor this run's as theirs."""
    if hasattr(config, "workerinput"):
        return
    base = tempfile.gettempdir()
    os.environ.setdefault("PYTEST_DEBUG_TEMPROOT", base)  # pytest's own tmp_path folders stay where they were
    private = tempfile.mkdtemp(prefix="dgt", dir=base)  # short: a local Ray's sockets fit under it
    os.chmod(private, 0o711)  # the PostgreSQL tests' server runs as its own user in a folder in here
    config.stash[_SESSION_TMP] = (private, os.environ.get("TMPDIR"))
    os.environ["TMPDIR"] = private
    tempfile.tempdir = None  # read TMPDIR again


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run, naming them, if the tests left files of ours or our dependencies' in the temp dir."""
    config = session.config
    if hasattr(config, "workerinput") or _SESSION_TMP not in config.stash:
        return
    private, before = config.stash[_SESSION_TMP]
    left = sorted(n for n in os.listdir(private) if n.startswith(LITTER_PREFIXES))
    shutil.rmtree(private, ignore_errors=True)
    if before is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = before
    tempfile.tempdir = None
    if left:
        shown = ", ".join(left[:10]) + (f" and {len(left) - 10} more" if len(left) > 10 else "")
        message = (f"LITTER: the tests left {len(left)} file(s) of ours or our dependencies' in the temp dir: {shown} "
                   f"(tests/conftest.py LITTER_PREFIXES)")
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write("\n")
            reporter.write_sep("=", "litter", red=True)
            reporter.write_line(message, red=True, bold=True)
        else:
            print(message)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
