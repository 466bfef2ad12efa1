"""Information-state observations (``obs="infostate"``): no leak, the default prefix, decoding,
the recorded history on hand-built deals, and the play-out loop's handling of agents that want them."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from deckgym.playout import play_out
from racko_env.core import RackoCore
from racko_env.infostate import RackoHistory, RackoInfoObservation
from racko_env.rules import RackoRules
from racko_env.state import CHOOSE, DISCARD_DRAWN, DRAW, PLACE_DRAWN, TAKE, RackoInfoState

VARIANTS = [dict(), dict(num_players=3), dict(num_players=4), dict(num_players=4, partners=True),
            dict(reshuffle="flip", deck_size=30), dict(bonus=True, min_run_to_win=4), dict(max_turns=40)]


def _played(core: RackoCore, b: int, steps: int, seed: int) -> RackoInfoState:
    st = core.init(b, seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        core.step(st, core.sample_legal(core.legal_action_mask(st), rng))
    return st


def _hide_shuffle(core: RackoCore, st: RackoInfoState, b: int, seat: int, rng: np.random.Generator) -> RackoInfoState:
    """Game ``b`` with the cards hidden from ``seat`` permuted: opponents' unknown slots, the
    draw pile, an opponent's drawn card in hand."""
    out = st.take(np.array([b]))
    K, P = core.pile_size, core.num_players
    s, ph, pl = int(out.disc_n[0]), int(out.phase[0]), int(out.player[0])
    spots = [("r", q, i) for q in range(P) if q != seat for i in range(10) if out.racks[0, q, i] > 0]
    h = int(ph != CHOOSE)
    spots += [("p", j, 0) for j in range(K - s - h)]
    if ph == PLACE_DRAWN and pl != seat:
        spots.append(("p", K - s - 1, 0))
    vals = [out.racks[0, q, i] if k == "r" else out.piles[0, q] for k, q, i in spots]
    perm = rng.permutation(len(vals))
    for (k, q, i), j in zip(spots, perm):
        if k == "r":
            out.racks[0, q, i] = vals[j]
        else:
            out.piles[0, q] = vals[j]
    return out


@pytest.mark.parametrize("kw", VARIANTS, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()) or "default")
def test_no_leak_hidden_cards_permuted(kw: dict) -> None:
    core = RackoCore(RackoRules(**kw), obs="infostate")
    rng = np.random.default_rng(5)
    changed = 0
    for steps in (0, 7, 30, 91):
        st = _played(core, 6, steps, seed=steps)
        for b in range(6):
            for seat in range(core.num_players):
                ref = core.observe(st.take(np.array([b])), seat)
                other = _hide_shuffle(core, st, b, seat, rng)
                changed += int((other.racks != st.racks[b : b + 1]).any() or (other.piles != st.piles[b : b + 1]).any())
                np.testing.assert_array_equal(core.observe(other, seat), ref)
    assert changed > 0  # the permutations did move hidden cards


@pytest.mark.parametrize("kw", VARIANTS[:3], ids=["2p", "3p", "4p"])
def test_prefix_is_default_observation_and_batch_matches_one(kw: dict) -> None:
    rules = RackoRules(**kw)
    core, plain = RackoCore(rules, obs="infostate"), RackoCore(rules)
    assert isinstance(core.observation, RackoInfoObservation) and isinstance(core.history, RackoHistory)
    assert plain.history is None and core.base_obs_size == plain.obs_size
    st = _played(core, 5, 57, seed=2)
    seats = np.arange(5) % core.num_players
    obs = core.observe(st, seats)
    assert obs.shape == (5, core.obs_size) and obs.dtype == np.float32
    np.testing.assert_array_equal(obs[:, : plain.obs_size], plain.observe(st, seats))
    np.testing.assert_array_equal(core.observe_default(st, seats), plain.observe(st, seats))
    for b in range(5):
        np.testing.assert_array_equal(core.observe(st.take(np.array([b])), int(seats[b]))[0], obs[b])
    buf = np.zeros_like(obs)
    assert core.observe(st, seats, out=buf) is buf and np.array_equal(buf, obs)
    low, high = core.obs_low, core.obs_high
    assert ((obs >= low) & (obs <= high)).all()


def test_decode_round_trip_matches_history() -> None:
    core = RackoCore(RackoRules(num_players=3), obs="infostate")
    st = _played(core, 4, 80, seed=9)
    K, N, P = core.pile_size, core.deck_size, core.num_players
    for seat in range(P):
        v = core.obs_view(core.observe(st, seat))
        ego = (seat + np.arange(P)) % P
        np.testing.assert_array_equal(v["slot_out"], st.slot_out[:, ego])
        np.testing.assert_array_equal(v["took"], st.took[:, ego])
        np.testing.assert_array_equal(v["thrown"], st.thrown[:, ego])
        np.testing.assert_array_equal(v["left"], st.left[:, ego])
        age = np.where(st.slot_turn[:, ego] >= 0, st.turn[:, None, None] - st.slot_turn[:, ego], 0)
        np.testing.assert_array_equal(v["slot_age"], age)
        for f, name in enumerate(("log_top", "log_kind", "log_slot", "log_out")):
            np.testing.assert_array_equal(v[name], st.log[:, ego][..., f])
        for b in range(4):
            _, discard, _ = core.piles(st, b)  # bottom first
            depth = np.zeros(N + 1, int)
            depth[discard[::-1]] = np.arange(1, len(discard) + 1)
            np.testing.assert_array_equal(v["discard_depth"][b], depth)
    assert st.slot_out.any() and st.took.any() and st.thrown.any() and (st.log[..., 1] == 3).any()


def test_hand_built_deal_records_public_moves() -> None:
    core = RackoCore(RackoRules(), obs="infostate")
    racks = [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], [11, 12, 13, 14, 15, 16, 17, 18, 19, 20]]
    st = core.deal(0, {"racks": racks, "draw_pile": [30, 31, 32], "discard_pile": [25], "first_player": 0})
    assert isinstance(st, RackoInfoState)
    seq = [TAKE, 2 + 3, DRAW, DISCARD_DRAWN, DRAW, 2 + 0]  # p0 takes 25 into slot 4; p1 throws 30; p0 puts 31 in slot 1
    for a in seq:
        core.step(st, np.array([a]))
    v1 = core.obs_view(core.observe(st, 1))  # seat 1's view: p0 is ego index 1
    assert v1["took"][0, 1, 25] and v1["took"][0, 1].sum() == 1
    assert v1["thrown"][0, 0, 30] and v1["thrown"][0, 0].sum() == 1
    assert v1["left"][0, 1, 4] == 4 and v1["left"][0, 1, 1] == 1 and v1["left"][0, 1].sum() == 5
    assert v1["slot_out"][0, 1].tolist() == [1, 0, 0, 4, 0, 0, 0, 0, 0, 0]
    assert v1["slot_age"][0, 1].tolist() == [1, 0, 0, 3, 0, 0, 0, 0, 0, 0]
    assert v1["opp_known"][0, 0, 3] == 25 and v1["opp_known"][0, 0, 0] == 0  # 31 was drawn: hidden
    assert (v1["slot_out"][0, 0] == 0).all()
    assert v1["discard_depth"][0, 1] == 1 and v1["discard_depth"][0, 30] == 2 and v1["discard_depth"][0, 4] == 3
    # the turn log, newest first: (top when the turn began, took/swapped/threw, slot, card out)
    log = np.stack([v1[f"log_{f}"][0] for f in ("top", "kind", "slot", "out")], axis=-1)
    assert log[1, :3].tolist() == [[30, 2, 1, 1], [25, 1, 4, 4], [0, 0, 0, 0]]  # p0
    assert log[0, :2].tolist() == [[4, 3, 0, 30], [0, 0, 0, 0]]  # p1


def test_history_cleared_on_next_round_and_reset() -> None:
    core = RackoCore(RackoRules(max_turns=12), episode="match", obs="infostate")
    st = _played(core, 3, 30, seed=1)  # past a capped round: a new round was dealt
    fresh = st.turn == 0
    core.reset_where(st, np.array([True, False, False]))
    for b in np.flatnonzero(fresh | np.array([True, False, False])):
        assert not st.took[b].any() and not st.left[b].any() and (st.slot_turn[b] == -1).all()


def test_refused_step_records_nothing_and_bad_input() -> None:
    core = RackoCore(RackoRules(), obs="infostate")
    st = core.init(2, 0)
    before = st.copy()
    with pytest.raises(ValueError, match="illegal action"):
        core.step(st, np.array([5, 0]))
    assert all(np.array_equal(getattr(st, f), getattr(before, f)) for f in ("took", "left", "racks"))
    with pytest.raises(ValueError, match="obs must be one of"):
        RackoCore(RackoRules(), obs="full")
    with pytest.raises(ValueError, match="RackoInfoState"):
        core.observe(RackoCore(RackoRules()).init(2, 0), 0)
    with pytest.raises(ValueError, match=r"\(B, 624\)"):
        core.obs_view(np.zeros((1, 200), np.float32))
    plain = RackoCore(RackoRules())
    started = plain.init(2, 0)
    plain.step(started, np.array([DRAW, DRAW]))
    with pytest.raises(ValueError, match="in progress"):
        core.with_history(started)


def test_pickle_and_default_core_unchanged() -> None:
    core = RackoCore(RackoRules(num_players=3), obs="infostate")
    again = pickle.loads(pickle.dumps(core))
    assert again.obs == "infostate" and isinstance(again.observation, RackoInfoObservation) and again.obs_size == core.obs_size
    plain = RackoCore(RackoRules())
    assert type(plain) is RackoCore and plain.obs == "default" and plain.obs_size == 112
    assert type(plain.init(2, 0)).__name__ == "RackoState"


class _Recorder:
    """An agent that wants information states and records their shape."""

    observation = "infostate"

    def __init__(self, core: RackoCore) -> None:
        self.core, self.sizes = core, set()

    def act(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        self.sizes.add(obs.shape[1])
        return np.argmax(masks, axis=1)


class _Plain(_Recorder):
    observation = "default"


def test_play_out_gives_each_agent_its_view() -> None:
    core = RackoCore(RackoRules())
    info, plain = _Recorder(core), _Plain(core)
    state = core.init(4, 3)
    owner = np.tile([0, 1], (4, 1))
    turns = list(play_out(core, state, [info, plain], owner))
    assert turns and info.sizes == {RackoCore(RackoRules(), obs="infostate").obs_size} and plain.sizes == {core.obs_size}


LS_VARIANTS = [dict(), dict(num_players=2), dict(num_players=6), dict(sequence_lengths=(3,), sequence_same_suit=True)]


def _ls_played(core, b: int, steps: int, seed: int):
    st = core.init(b, seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        m = core.legal_action_mask(st)
        over = ~m.any(axis=1)
        if over.any():
            core.reset_where(st, over)
            m = core.legal_action_mask(st)
        core.step(st, core.sample_legal(m, rng))
    return st


@pytest.mark.parametrize("kw", LS_VARIANTS, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()) or "default")
def test_leastscore_no_leak_and_default_prefix(kw: dict) -> None:
    from leastscore_env.invariants import hidden_shuffle as leastscore_hidden_shuffle
    from leastscore_env import LeastScoreCore, LeastScoreRules
    from leastscore_env.infostate import LeastScoreHistory, LeastScoreInfoObservation

    rules = LeastScoreRules(**kw)
    core, plain = LeastScoreCore(rules, obs="infostate"), LeastScoreCore(rules)
    assert isinstance(core.observation, LeastScoreInfoObservation) and isinstance(core.history, LeastScoreHistory)
    assert plain.history is None and core.base_obs_size == plain.obs_size
    rng = np.random.default_rng(3)
    moved = 0
    for steps in (0, 5, 17, 40):
        st = _ls_played(core, 6, steps, seed=steps + 2)
        P = core.num_players
        for seat in range(P):
            seats = np.full(6, seat)
            ref = core.observe(st, seats)
            np.testing.assert_array_equal(ref[:, : plain.obs_size], plain.observe(st, seats))
            other = leastscore_hidden_shuffle(core, st, seats, rng)
            moved += int((other.hands != st.hands).any() or (other.deck != st.deck).any())
            np.testing.assert_array_equal(core.observe(other, seats), ref)
            for b in range(6):
                np.testing.assert_array_equal(core.observe(st.take(np.array([b])), seat)[0], ref[b])
    assert moved > 0


def test_leastscore_hand_built_history() -> None:
    from leastscore_env import LeastScoreCore, LeastScoreRules
    from leastscore_env.state import DRAW_DECK, TAKE_FLOOR, LeastScoreInfoState

    from leastscore_env.cards import card_str

    core = LeastScoreCore(LeastScoreRules(num_players=2), obs="infostate")

    def cards(ids: list[int]) -> list[str]:
        return [card_str(c) for c in ids]

    st = core.deal(0, {"hands": [cards([0, 5, 10, 15, 20]), cards([25, 30, 35, 40, 45])], "floor": cards([50]),
                       "first_player": 0})
    assert isinstance(st, LeastScoreInfoState)
    for a in (0, TAKE_FLOOR, 0, DRAW_DECK):  # seat 0 throws card 0, takes the floor's 50; seat 1 throws 25, draws
        core.step(st, np.array([a]))
    v = core.obs_view(core.observe(st, 1))  # seat 1's view: seat 0 is ego index 1
    assert np.flatnonzero(v["thrown"][0, 1]).tolist() == [0] and np.flatnonzero(v["picked"][0, 1]).tolist() == [50]
    assert np.flatnonzero(v["thrown"][0, 0]).tolist() == [25] and not v["picked"][0, 0].any()
    assert v["draws"][0].tolist() == [1, 0]
    assert v["opp_known"][0, 0, 50]  # the default part knows the picked card too
    with pytest.raises(ValueError, match="obs must be one of"):
        LeastScoreCore(LeastScoreRules(), obs="full")


def test_leastscore_history_cleared_by_a_new_deal() -> None:
    from leastscore_env import LeastScoreCore, LeastScoreRules

    core = LeastScoreCore(LeastScoreRules(), obs="infostate")
    st = _ls_played(core, 4, 30, seed=5)
    assert st.thrown.any()
    core.reset_where(st, np.ones(4, bool))
    assert not st.thrown.any() and not st.picked.any() and not st.draws.any()


def test_aec_env_and_positional_obs() -> None:
    import racko_env

    assert isinstance(RackoCore(RackoRules(), "round", "win", "infostate").observation, RackoInfoObservation)
    env = racko_env.env(obs="infostate", num_players=3)
    env.reset(seed=4)
    for _ in range(40):
        agent = env.agent_selection
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            break
        raw = env.unwrapped
        seat = raw.agent_name_mapping[agent]
        np.testing.assert_array_equal(obs["observation"], raw.core.observe(raw.game_state, seat)[0])
        assert obs["observation"].shape == (raw.core.obs_size,) == (992,)  # v1 (704) + the turn log, 3 seats × 24 turns × 4 fields
        env.step(int(np.flatnonzero(obs["action_mask"])[-1]))
    assert raw.game_state.left.any()


def test_observe_for_and_vector_env_refusal() -> None:
    from deckgym.playout import infostate_core, observe_for

    plain = RackoCore(RackoRules())
    core = infostate_core(plain)
    assert infostate_core(plain) is core and infostate_core(core) is core
    st = core.init(3, 1)
    info, dflt = _Recorder(core), _Plain(core)
    assert observe_for(info, core, st, 0).shape == (3, 624)
    assert observe_for(dflt, core, st, 0).shape == (3, 112)
    assert observe_for(info, plain, plain.init(3, 1), 0).shape == (3, 112)  # no history to give
    state = plain.init(2, 0)
    loop = play_out(plain, state, [info, dflt], np.tile([0, 1], (2, 1)), drop_finished=False)
    with pytest.raises(ValueError, match="obs='infostate'"):
        next(loop)


@pytest.mark.parametrize("game, players", [("racko", 2), ("racko", 4), ("leastscore", 4), ("leastscore", 6)])
def test_the_infostate_layout_is_written_once_and_matches_the_code(game: str, players: int) -> None:
    """The env module's "Information state" table is the layout's one description: its fields,
    in order, with their sizes, are the ones the information-state core builds."""
    import importlib
    import re

    from deckgym.registration import game as game_entry

    entry = game_entry(game)
    doc = importlib.import_module(entry.module + ".env").__doc__
    section = doc[doc.index("Information state (``obs=\"infostate\"``" if game == "racko" else
                            "Information state (`obs=\"infostate\"`"):]
    rows = [line.split("|")[1:-1] for line in section.splitlines() if line.startswith("|")][2:]
    rows = rows[: next((i for i, r in enumerate(rows) if not r[0].strip()), len(rows))]
    core = entry.make_core(entry.make_rules(num_players=players), obs="infostate")
    plain = entry.make_core(entry.make_rules(num_players=players))
    fields = [(k, v.stop - v.start) for k, v in core.obs_slices.items() if k not in plain.obs_slices]
    P = players
    N = getattr(core, "deck_size", 52)
    L = 24
    documented = [(r[2].strip().strip("`"), eval(re.sub("·", "*", r[1].strip()), {}, {"P": P, "N": N, "L": L}))
                  for r in rows]
    assert documented == fields
    assert sum(n for _, n in fields) == core.obs_size - plain.obs_size
