"""leastscore_env/planning/dp.py (``leastscore:dp``): the hand tables against the core's L5 legality,
the Bellman equations of the values, hand-built L7/L8 decisions, and the stats fit."""

import itertools

import numpy as np
import pytest

import leastscore_env.planning.dp as dp
from deckgym.agents.leastscore_plan import dp_plan
from leastscore_env import LeastScoreCore, LeastScoreRules
from leastscore_env.cards import RANK_VALUE
from leastscore_env.state import DECLARE
from leastscore_env.planning.plan import CARD_RANK, DISCARD_SLOTS, NUM_DISCARDS
from tests.conftest import leastscore_mask, leastscore_random_play, leastscore_view


def _counts(ranks):
    return np.bincount(np.asarray(ranks, dtype=np.int64), minlength=13)


def test_every_hand_of_up_to_five_cards_once():
    # brute force: multisets of 0..5 ranks, at most 4 of a rank (L1: four suits)
    expected = {tuple(np.bincount(np.array(c, dtype=np.int64), minlength=13))
                for k in range(6) for c in itertools.combinations_with_replacement(range(13), k)
                if not c or np.bincount(np.array(c)).max() <= 4}
    assert dp.NUM_HANDS == len(expected) == 8555
    assert {tuple(c) for c in dp.COUNTS} == expected
    np.testing.assert_array_equal(dp.hand_index(dp.COUNTS), np.arange(dp.NUM_HANDS))
    np.testing.assert_array_equal(dp.TOTAL, dp.COUNTS @ RANK_VALUE)


def test_draw_table_adds_one_card_and_stops_at_five():
    h = dp.hand_index(_counts([0, 0, 12]))  # A A K
    nxt = dp.ADD[h]
    np.testing.assert_array_equal(dp.COUNTS[nxt[5]], _counts([0, 0, 12, 5]))
    assert (dp.ADD[dp.SIZE == 5] == -1).all()  # L4: a hand never grows past five
    four = dp.hand_index(_counts([3, 3, 3, 3]))
    assert dp.ADD[four, 3] == -1 and dp.ADD[four, 4] >= 0


def _kept(ranks, lengths=(3, 5)):
    row = dp.kept_table(lengths)[dp.hand_index(_counts(ranks))]
    return sorted(tuple(sorted(np.repeat(np.arange(13), dp.COUNTS[k]))) for k in row[row >= 0])


def test_L5_rank_groups_by_hand():
    # A 2 3 K K: singles, the pair of kings, the run A-2-3
    assert _kept([0, 1, 2, 12, 12]) == sorted([(1, 2, 12, 12), (0, 2, 12, 12), (0, 1, 12, 12), (0, 1, 2, 12),
                                                (0, 1, 2), (12, 12)])
    # Q K A is a run (ace high), K A 2 is not (no wrapping)
    assert () in _kept([11, 12, 0])
    assert () not in _kept([12, 0, 1])
    # three of a kind is never one group; four of a kind is (L5)
    assert () not in _kept([7, 7, 7]) and (7,) in _kept([7, 7, 7])  # a pair of the three
    assert () in _kept([7, 7, 7, 7])
    # sequence lengths are a rules field: with (3,) a 5-run is only taken three at a time
    assert () in _kept([2, 3, 4, 5, 6]) and () not in _kept([2, 3, 4, 5, 6], (3,))


@pytest.mark.parametrize("P", [4, 2])
def test_kept_hands_equal_the_cores_legal_discards(P):
    # every legal discard action of the core (L5), flushes aside, keeps a hand that the rank
    # table lists for that hand, and the table lists nothing the core forbids
    kept = dp.kept_table((3, 5))
    checked = 0
    for core, obs, m in leastscore_random_play(P, steps=80):
        v = core.obs_view(obs)
        for b in np.flatnonzero(v["phase"] == 0):
            hand = v["hand"][b]
            cards = hand[hand >= 0]
            ranks = CARD_RANK[cards]
            flush = len(cards) == 5 and len(set(cards % 4)) == 1
            got = set()
            for a in np.flatnonzero(m[b, :NUM_DISCARDS]):
                sel = DISCARD_SLOTS[a][: len(cards)]
                if flush and sel.all():
                    continue
                got.add(int(dp.hand_index(_counts(ranks[~sel]))))
            row = kept[dp.hand_index(_counts(ranks))]
            want = set(row[row >= 0].tolist())
            if flush and len(set(ranks)) == 5 and int(dp.hand_index(_counts([]))) in want:
                got.add(int(dp.hand_index(_counts([]))))  # a flush that is also a 5-run
            assert got == want, (cards, got, want)
            checked += 1
    assert checked > 500


def test_outcome_tables_are_probabilities_and_monotone():
    D, E, q = dp.outcome_tables(4, 0.0)
    assert ((q >= 0) & (q <= 1)).all() and q[:, 2:, 3:].min() > 0.1
    # opponents declare far less often against a small hand (they fear it is lower)
    assert (q[:, 2, 1] < 0.5 * q[:, 2, 5]).all()
    eps = 1e-12
    assert ((D >= -eps) & (D <= 1 + eps)).all() and ((E >= -eps) & (E <= 1 + eps)).all()
    # declaring with a higher total never wins more (L8); a ace-only hand nearly always wins
    assert (np.diff(D[:, 2:], axis=2) <= 1e-12).all()
    assert D[:, 2, 1].min() > 0.99 and D[:, 2:, 1].min() > 0.85  # late on, opponents get low too
    # an opponent's declaration is likelier false against a low hand: we then share the win
    assert (E[:, 2:, 1:, 2] > E[:, 2:, 1:, 30]).all()
    # points make both worse
    D1, E1, _ = dp.outcome_tables(4, 0.1)
    assert (D1 <= D + 1e-12).all() and (E1 <= E + 1e-12).all()


def test_values_satisfy_the_bellman_equations():
    lam = 0.08
    V, X = dp.solve(4, lam)
    D, E, q = dp.outcome_tables(4, lam)
    kept = dp.kept_table((3, 5))
    rng = np.random.default_rng(0)
    for h in rng.choice(np.flatnonzero(dp.SIZE > 0), 40, replace=False):
        for p in range(4):
            for n in (1, 2, 5):
                best = -np.inf
                for k in kept[h][kept[h] >= 0]:
                    nxt = dp.ADD[k]
                    best = max(best, float(X[p, n, nxt[nxt >= 0]].mean()))  # ranks it can draw
                want = best if n == 1 else max(best, D[p, n, dp.TOTAL[h]])  # L7: no declaring on turn 1
                assert V[p, n, h] == pytest.approx(want)
                k, t = dp.SIZE[h], dp.TOTAL[h]
                assert X[p, n, h] == pytest.approx(q[p, n, k] * E[p, n, k, t] + (1 - q[p, n, k]) * V[p, n + 1, h])


def test_L8_dp_declares_a_sure_win_and_not_a_sure_loss():
    win = leastscore_view([0, 4], opp_known=[[36, 37], [40, 41], [44, 45]], opp_size=(2, 2, 2))
    plan = dp_plan(win, leastscore_mask())
    assert plan["action"][0] == DECLARE and plan["declare"][0] == pytest.approx(1.0)
    lose = leastscore_view([32, 36], opp_known=[[1], [], []], opp_size=(1, 5, 5))
    plan = dp_plan(lose, leastscore_mask(), lam=0.08)
    assert plan["action"][0] != DECLARE
    assert plan["declare"][0] == pytest.approx(-0.08 * 38.0)  # L8: 20 + (19 - 1) for sure


def test_dp_keeps_the_low_card_and_takes_a_low_floor_card():
    # hand A + K, discard phase: throwing the king beats throwing the ace
    v = leastscore_view([0, 48], turn=1)
    m = np.zeros((1, 38), bool)
    m[0, 0] = m[0, 1] = True  # slot 0 = ace, slot 1 = king
    assert dp_plan(v, m)["action"][0] == 1
    # draw phase with an ace on the floor: take it rather than a deck card
    v = leastscore_view([48], turn=1)
    v["floor"] = np.array([[1, -1, -1, -1, -1]])
    m = np.zeros((1, 38), bool)
    m[0, 32] = m[0, 33] = True
    plan = dp_plan(v, m)
    assert plan["action"][0] == 33 and plan["values"][0, 33] > plan["values"][0, 32]


@pytest.mark.parametrize("P", [4, 3, 2])
def test_dp_agent_plays_legal_moves_deterministically(P):
    from deckgym.agents.registry import make_agent
    a1 = a2 = a3 = None
    differ = 0
    for core, obs, m in leastscore_random_play(P, steps=60):
        if a1 is None:
            a1 = make_agent("leastscore:dp", core, seed=0, game="leastscore")
            a2 = make_agent("leastscore:dp", core, seed=99, game="leastscore")
            a3 = make_agent("leastscore:dp?lam=0.5", core, game="leastscore")
        act = a1.act(obs, m)
        assert m[np.arange(len(act)), act].all()
        np.testing.assert_array_equal(act, a2.act(obs, m))  # no randomness in the policy
        differ += int((act != a3.act(obs, m)).sum())
    assert differ > 0  # the points weight is live


def test_missing_stats_file_is_a_clear_error(tmp_path):
    bad = tmp_path / "dp_stats.npz"
    bad.write_bytes(b"not an npz")
    with pytest.raises(ValueError, match="cannot read the leastscore:dp statistics"):
        dp.load_stats(str(bad))


def test_fit_tally_on_a_hand_built_record():
    from experiments.fit_dp_stats import tally
    # one 3-player round: turn 0..2 everyone passes, turn 3 seat 0 passes, turn 4 seat 1 declares
    rec = {"g": np.zeros(5, int), "seat": np.array([0, 1, 2, 0, 1]), "turn": np.arange(5),
           "declare": np.array([0, 0, 0, 0, 1], bool),
           "totals": np.array([[20, 20, 20], [18, 19, 20], [18, 12, 21], [15, 12, 21], [15, 6, 21]]),
           "sizes": np.array([[5, 5, 5], [4, 5, 5], [4, 3, 5], [4, 3, 5], [4, 2, 5]])}
    h = tally(rec, 3)
    # seat 0 at position 0 passed turns 1 and 2 (keeping 4 cards, then 4 again); after its
    # 2nd turn seat 1 declared d = 6
    assert h["passes"][0, 1, 4] == 1 and h["passes"][0, 2, 4] == 1 and h["passes"].sum() == 4
    assert h["ends"][0, 2, 4] == 1 and h["d_le"][0, 2, 4, 6] == 1
    # seat 2 (position 2) passed turn 1 keeping 5; seat 1 declared (at most the other opponent, 15)
    assert h["ends"][2, 1, 5] == 1 and h["d_le"][2, 1, 5, 6] == 1
    assert h["ends"].sum() == 2 and h["d_fail"].sum() == 0
    # the lowest opponent total seen by seat 0 at its 2nd turn (turn 3): min(12, 21)
    assert h["m_hist"][0, 2, 12] == 1 and h["m_hist"].sum() == 2  # turns 3 and 4 (n = 2)


@pytest.mark.parametrize("P", [4, 3])
def test_features_v3_hold_dp_decision(P):
    import leastscore_env.planning.features as F
    from deckgym.agents.leastscore_heuristics import DPAgent
    assert F.FEATURES_VERSION == 3
    for core, obs, m in leastscore_random_play(P, steps=40):
        f3 = F.derived_features(core, obs, version=3)
        n1 = F.num_features(core, 1)
        assert f3.shape == (obs.shape[0], F.num_features(core, 3)) == (obs.shape[0], F.num_features(core, 2))
        np.testing.assert_array_equal(f3[:, :n1], F.derived_features(core, obs, version=1))
        onehot = f3[:, n1:n1 + 38]
        assert (onehot.sum(axis=1) == 1).all()
        np.testing.assert_array_equal(onehot.argmax(axis=1), DPAgent(core).act(obs, m))
        assert (np.abs(f3[:, n1 + 38:]) <= 1).all()
        assert (f3[~m[:, DECLARE], n1 + 40] == 0).all()  # no advantage where L7 forbids declaring


def test_declare_ceiling_oracle_declares_only_true_declarations():
    from experiments.declare_ceiling import run
    r = run("leastscore:counting", games=240, seed=0, oracle=True)
    assert r["declared"] > 0.1 and r["true"] == 1.0  # L8: it reads the hidden hands
    base = run("leastscore:counting", games=240, seed=0, oracle=False)
    assert 0 < base["true"] < 1.0 and base["ci_low"] <= base["win"] <= base["ci_high"]


def test_shipped_model_loads_with_features_v3_and_plays_as_dp():
    """models/leastscore_4p.safetensors clones leastscore:dp (model card): same moves on random-play states."""
    from deckgym.agents.leastscore_heuristics import DPAgent
    from deckgym.agents.ppo import PPOAgent, read_metadata
    import leastscore_env.planning.features as F

    path = "models/leastscore_4p.safetensors"
    meta = read_metadata(path)
    assert meta["features"] == 3 and meta["game"] == "leastscore" and meta["num_players"] == 4
    agree = total = 0
    model = teacher = None
    for core, obs, m in leastscore_random_play(4, steps=40):
        if model is None:
            model, teacher = PPOAgent(core, path=path), DPAgent(core)
            assert model.inputs(obs).shape[1] == core.obs_size + F.num_features(core, 3)
        a = model.act(obs, m)
        assert m[np.arange(len(a)), a].all()
        agree += int((a == teacher.act(obs, m)).sum())
        total += len(a)
    assert agree / total > 0.98


def test_dp_uses_the_live_players_tables_after_eliminations():
    # L9 matches: once a player is out, dp reads the tables of the players still in
    from deckgym.agents.leastscore_heuristics import DPAgent
    core = LeastScoreCore(LeastScoreRules(num_players=4, elimination_score=25), episode="match")
    st = core.init(64, seed=3)
    rng = np.random.default_rng(0)
    agent = DPAgent(core)
    seen_three = 0
    for _ in range(400):
        cp = core.current_player(st)
        obs, m = core.observe(st, cp), core.legal_action_mask(st)
        live = core.obs_view(obs)["alive"].sum(axis=1)
        act = agent.act(obs, m)
        assert m[np.arange(len(act)), act].all()
        seen_three += int((live == 3).sum())
        res = core.step(st, core.sample_legal(m, rng))
        core.reset_where(st, res.terminated | res.truncated)
    assert seen_three > 0


@pytest.mark.parametrize("argv,needle", [(["--games", "5"], "--games must be at least 100"),
                                         (["--players", "9"], "--players must be in 2..8")])
def test_fit_dp_stats_rejects_bad_flags(argv, needle, capsys):
    from experiments.fit_dp_stats import main
    with pytest.raises(SystemExit) as e:
        main(argv + ["--out", "/nonexistent/never_written.npz"])
    assert e.value.code == 2 and needle in capsys.readouterr().err


def test_declare_ceiling_rejects_bad_flags(capsys):
    from experiments.declare_ceiling import main
    for argv, needle in ((["leastscore:dp", "--players", "1"], "--players must be in 2..8"),
                         (["leastscore:dp", "--games", "0"], "--games must be at least 1")):
        with pytest.raises(SystemExit) as e:
            main(argv)
        assert e.value.code == 2 and needle in capsys.readouterr().err
