"""The public core functions refuse bad input with a clear ValueError before touching the
state: illegal, out-of-range or mis-shaped actions, bad batch sizes, row masks, seats,
``out`` buffers and game indices. ``step(..., check=False)`` skips the action check."""

from __future__ import annotations

import re

import numpy as np
import pytest

from leastscore_env.core import LeastScoreCore
from leastscore_env.state import DECLARE, DRAW_DECK, TAKE_FLOOR
from leastscore_env.rules import LeastScoreRules
from racko_env.core import RackoCore
from racko_env.state import DISCARD_DRAWN, DRAW, TAKE
from racko_env.rules import RackoRules


def cores():
    return [RackoCore(RackoRules(num_players=3)), LeastScoreCore(LeastScoreRules(num_players=4))]


def _unchanged(core, before, after):
    for name in vars(before):
        assert np.array_equal(getattr(before, name), getattr(after, name)), name


def _racko_deal():
    core = RackoCore()
    st = core.deal(0, {"racks": [list(range(1, 11)), list(range(11, 21))], "discard_pile": [40],
                       "draw_pile": [21, 22, 23], "first_player": 0})
    return core, st


# -- step: illegal actions -------------------------------------------------------------------
def test_racko_illegal_action_is_refused_naming_row_action_phase_and_legal_actions():
    core, st = _racko_deal()
    before = st.copy()
    with pytest.raises(ValueError) as e:
        core.step(st, np.array([5]))  # a slot while choosing a pile (R4): used to leave the game stuck
    msg = str(e.value)
    assert "row 0" in msg and "action 5" in msg and "choose" in msg and "draw, take_discard" in msg
    assert "docs/RULES.md" in msg
    _unchanged(core, before, st)
    core.step(st, np.array([DRAW]))
    with pytest.raises(ValueError, match="action 1 .*place_drawn"):
        core.step(st, np.array([TAKE]))
    core.step(st, np.array([DISCARD_DRAWN]))  # legal after a draw


def test_racko_minus_one_no_longer_plays_as_another_action():
    core, st = _racko_deal()
    core.step(st, np.array([TAKE]))  # place_discard: -1 used to index the previous phase's last action
    before = st.copy()
    with pytest.raises(ValueError, match=r"out of range 0\.\.12: row 0: -1"):
        core.step(st, np.array([-1]))
    _unchanged(core, before, st)


def test_racko_batched_step_names_every_bad_row():
    core = RackoCore()
    st = core.init(8, 3)
    a = np.full(8, DRAW)
    a[[2, 6]] = [7, DISCARD_DRAWN]
    before = st.copy()
    with pytest.raises(ValueError) as e:
        core.step(st, a)
    msg = str(e.value)
    assert "2 of 8 games" in msg and "row 2: action 7" in msg and "row 6: action 12" in msg
    assert "row 0" not in msg
    _unchanged(core, before, st)


def test_leastscore_30_then_37_from_seed_0_is_refused():
    core = LeastScoreCore()
    st = core.init(1, 0)
    mask = core.legal_action_mask(st)[0]
    assert not mask[30]  # discarding the whole hand needs a flush (L5)
    before = st.copy()
    with pytest.raises(ValueError, match=r"row 0: action 30 \(discard_s0\+s1\+s2\+s3\+s4\) in phase 'discard'"):
        core.step(st, np.array([30]))
    _unchanged(core, before, st)
    core.step(st, np.array([0]))  # a single card: legal
    floor_cards = int(st.floor_sel[0]).bit_count()
    assert floor_cards < 5
    with pytest.raises(ValueError, match="action 37 \\(take_floor_4\\) in phase 'draw'"):
        core.step(st, np.array([37]))  # a fifth floor card that is not there
    core.step(st, np.array([DRAW_DECK]))
    assert (core.hand_cards(st) >= 0).sum(axis=2).min() >= 1  # nobody's hand is empty


def test_leastscore_hand_built_declare_before_everyone_played_is_refused():
    core = LeastScoreCore(LeastScoreRules(num_players=2))
    st = core.deal(1, {"hands": [["AC"], ["KD", "KH"]], "floor": ["5S"], "first_player": 0})
    with pytest.raises(ValueError, match="action 31 \\(declare\\)"):  # L7: not before every player has played
        core.step(st, np.array([DECLARE]))
    core.step(st, np.array([0]))  # discard the ace
    core.step(st, np.array([TAKE_FLOOR]))  # take the five of spades
    core.step(st, np.array([0]))
    core.step(st, np.array([DRAW_DECK]))
    res = core.step(st, np.array([DECLARE]))  # now legal
    assert res.terminated[0]
    with pytest.raises(ValueError, match="the episode is over"):  # a finished game takes no action
        core.step(st, np.array([DRAW_DECK]))


@pytest.mark.parametrize("core", cores(), ids=lambda c: type(c).__name__)
@pytest.mark.parametrize("bad,what", [
    (lambda b: np.zeros(b, np.float64), "dtype float64"),
    (lambda b: np.zeros(b, np.float32), "dtype float32"),
    (lambda b: np.zeros(b + 1, np.int64), "shape"),
    (lambda b: np.zeros((b, 1), np.int64), "shape"),
    (lambda b: np.zeros(b, bool), "dtype bool"),
    (lambda b: [0.0] * b, "dtype float64"),
    (lambda b: 0, r"shape \(\)"),
])
@pytest.mark.parametrize("B", [1, 5])
def test_step_refuses_wrong_shape_or_dtype(core, bad, what, B):
    st = core.init(B, 0)
    before = st.copy()
    with pytest.raises(ValueError, match=what):
        core.step(st, bad(B))
    _unchanged(core, before, st)


@pytest.mark.parametrize("core", cores(), ids=lambda c: type(c).__name__)
@pytest.mark.parametrize("B", [1, 6])
def test_step_refuses_out_of_range(core, B):
    st = core.init(B, 0)
    for v in (core.num_actions, 10**6, -1, np.iinfo(np.int64).min):
        a = core.sample_legal(core.legal_action_mask(st), np.random.default_rng(0))
        a[B - 1] = v
        with pytest.raises(ValueError, match=f"out of range 0..{core.num_actions - 1}: row {B - 1}: {v}"):
            core.step(st, a)
    for dtype in (np.int8, np.uint8, np.int32, np.uint64):  # any integer dtype is fine
        m = core.legal_action_mask(st)
        core.step(st, core.sample_legal(m, np.random.default_rng(1)).astype(dtype))


@pytest.mark.parametrize("core", cores(), ids=lambda c: type(c).__name__)
def test_check_false_skips_the_check_and_plays_the_same(core):
    a_st, b_st = core.init(16, 4), core.init(16, 4)
    rng = np.random.default_rng(2)
    for _ in range(40):
        m = core.legal_action_mask(a_st)
        act = core.sample_legal(m, rng)
        ra, rb = core.step(a_st, act), core.step(b_st, act, check=False)
        assert np.array_equal(ra.rewards, rb.rewards)
        done = ra.terminated | ra.truncated
        core.reset_where(a_st, done)
        core.reset_where(b_st, done)
    _unchanged(core, a_st, b_st)
    # unchecked, an illegal Rack-O action is not refused (the caller vouched for it)
    if isinstance(core, RackoCore):
        st = core.init(2, 0)
        core.step(st, np.array([5, 5]), check=False)


@pytest.mark.parametrize("core", cores(), ids=lambda c: type(c).__name__)
def test_step_refuses_another_games_state(core):
    other = LeastScoreCore() if isinstance(core, RackoCore) else RackoCore()
    st = other.init(2, 0)
    with pytest.raises(ValueError, match="state must be a"):
        core.step(st, np.zeros(2, np.int64))


# -- init, reset_where, observe, sample_legal, state_dict ---------------------------------------
@pytest.mark.parametrize("core", cores(), ids=lambda c: type(c).__name__)
@pytest.mark.parametrize("batch", [0, -3, 2.0, True, "4", None])
def test_init_refuses_a_bad_batch(core, batch):
    with pytest.raises(ValueError, match="batch must be an int >= 1"):
        core.init(batch, 0)


@pytest.mark.parametrize("core", cores(), ids=lambda c: type(c).__name__)
def test_init_refuses_bad_seed_and_game_ids(core):
    with pytest.raises(ValueError, match="seed must be an int"):
        core.init(2, 1.7)
    with pytest.raises(ValueError, match="seed must be an int"):
        core.deal(1.7, {"hands": [["AC"], ["AD"], ["AH"], ["AS"]]} if isinstance(core, LeastScoreCore) else {})
    with pytest.raises(ValueError, match="game_ids must be 3 ints"):
        core.init(3, 0, game_ids=np.arange(2))
    with pytest.raises(ValueError, match="game_ids must be 3 ints"):
        core.init(3, 0, game_ids=np.array([0.0, 1.0, 2.0]))
    st = core.init(3, 0, game_ids=np.array([7, 8, 9], np.int32))
    assert np.array_equal(st.rng_key, core.init(10, 0).rng_key[7:10])


@pytest.mark.parametrize("core", cores(), ids=lambda c: type(c).__name__)
def test_reset_where_needs_a_bool_mask_of_shape_B(core):
    st = core.init(3, 0)
    before = st.copy()
    for bad in (np.array([0, 2]), np.array([1, 0, 1]), np.array([True, False]), np.ones((3, 1), bool), [0, 2]):
        with pytest.raises(ValueError, match=r"mask must be a bool array of shape \(3,\)"):
            core.reset_where(st, bad)
    _unchanged(core, before, st)
    core.reset_where(st, np.array([False, False, True]))  # row 2 only
    _unchanged(core, before.take(slice(0, 2)), st.take(slice(0, 2)))
    core.reset_where(st, [False, True, False])  # a list of bools is a bool mask


@pytest.mark.parametrize("core", cores(), ids=lambda c: type(c).__name__)
@pytest.mark.parametrize("B", [1, 4])
def test_observe_checks_the_seat_and_out(core, B):
    st = core.init(B, 0)
    P = core.num_players
    for bad in (P, -1, 1.0, True, np.zeros(B + 1, np.int64), np.full(B, P), np.zeros(B, np.float32)):
        with pytest.raises(ValueError, match="seat must be"):
            core.observe(st, bad)
    for bad in (np.zeros((B, core.obs_size), np.float64), np.zeros((B + 1, core.obs_size), np.float32),
                np.zeros((B, 2 * core.obs_size), np.float32)[:, ::2], [[0.0] * core.obs_size] * B):
        with pytest.raises(ValueError, match="out must be"):
            core.observe(st, 0, out=bad)
    seats = np.arange(B) % P
    assert np.array_equal(core.observe(st, seats), core.observe(st, seats.astype(np.int8)))
    assert core.observe(st, np.int64(P - 1)).shape == (B, core.obs_size)


@pytest.mark.parametrize("core", cores(), ids=lambda c: type(c).__name__)
def test_sample_legal_state_dict_and_obs_view_check_their_arguments(core):
    st = core.init(3, 0)
    m = core.legal_action_mask(st)
    rng = np.random.default_rng(0)
    for bad in (m.astype(np.int8), m[:, :-1], m[0], m.tolist()):
        with pytest.raises(ValueError, match=re.escape(f"mask must be a (B, {core.num_actions}) bool array")):
            core.sample_legal(bad, rng)
    for b in (3, -1, 1.0):
        with pytest.raises(ValueError, match="b must be a game index in 0..2"):
            core.state_dict(st, b)
    assert core.state_dict(st, np.int64(2))
    obs = core.observe(st, 0)
    with pytest.raises(ValueError, match=f"shape \\(B, {core.obs_size}\\)"):
        core.obs_view(obs[:, :-1])
    with pytest.raises(ValueError, match=f"shape \\(B, {core.obs_size}\\)"):
        core.obs_view(obs[None])
    assert core.obs_view(obs[0])
