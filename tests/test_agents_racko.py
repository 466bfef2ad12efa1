"""Rack-O heuristic agents (agents/racko_heuristics.py): obvious moves, legality, seeds, ladder.

Hand-built positions are decoded views (the dict ``core.obs_view`` returns), so each test
states the position in card values. Rule ids refer to docs/RULES.md.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from deckgym.agents.racko_heuristics import BucketAgent, RangesAgent, SequenceAgent, bucket_decide, ranges_decide, sequence_decide
from deckgym.agents.registry import make_agent
from deckgym.playout import play_out
from racko_env.core import RackoCore
from racko_env.state import CHOOSE, DISCARD_DRAWN, DRAW, PLACE_DISCARD, PLACE_DRAWN, TAKE
from racko_env.planning.plan import availability, candidate_racks, goes_out, sequence_costs
from racko_env.rules import RackoRules
from tests.conftest import racko_view, slot
from tests.oracles.racko_plan import sequence_costs_reference

DECIDERS = {"bucket": bucket_decide, "ranges": ranges_decide, "sequence": sequence_decide}


def decide(name, *args, **kwargs):
    view, mask, rules = racko_view(*args, **kwargs)
    return int(DECIDERS[name](view, mask, rules, np.random.default_rng(0))[0])


# -- hand-built positions ---------------------------------------------------------------------
def test_bucket_takes_a_discard_that_belongs_in_a_badly_filled_bucket():
    # N=40: 18 belongs in slot ⌈10·18/40⌉ = 5, which holds 39 (a card of slot 10).
    rack = [2, 6, 11, 14, 39, 22, 26, 30, 35, 38]
    assert decide("bucket", rack, CHOOSE, top=18) == TAKE
    assert decide("bucket", rack, PLACE_DISCARD, hand=18) == slot(5)
    assert decide("bucket", rack, PLACE_DRAWN, hand=18) == slot(5)
    # slot 5 already well filled (19 belongs there): draw instead, and discard a drawn 18
    good = [2, 6, 11, 14, 19, 22, 26, 30, 35, 38]
    assert decide("bucket", good, CHOOSE, top=18) == DRAW
    assert decide("bucket", good, PLACE_DRAWN, hand=18) == DISCARD_DRAWN


def test_ranges_fills_a_gap_between_anchors_and_rejects_cards_that_fit_nowhere_bad():
    # anchors 3 (slot 1) and 28 (slot 7); slots 2..6 share 4..27 in five ranges; slot 4
    # holds 1, which fits nowhere: 14 falls in slot 4's range (4 + 2·24/5 < 14 ≤ 4 + 3·24/5).
    rack = [3, 7, 12, 1, 19, 24, 28, 31, 35, 39]
    assert decide("ranges", rack, CHOOSE, top=14) == TAKE
    assert decide("ranges", rack, PLACE_DISCARD, hand=14) == slot(4)
    # 9 falls in slot 2's range whose card 7 already fits: not worth the discard
    assert decide("ranges", rack, CHOOSE, top=9) == DRAW
    assert decide("ranges", rack, PLACE_DRAWN, hand=9) == DISCARD_DRAWN


@pytest.mark.parametrize("name", list(DECIDERS))
def test_every_agent_takes_the_winning_placement(name):
    # R7 (2 players): 20 in slot 6 makes the rack increasing with the run 26-27-28.
    # (slot 6 is not 20's bucket: bucket 5 = slot 5 holds 17, which belongs there)
    rack = [2, 5, 9, 13, 17, 30, 22, 26, 27, 28]
    assert goes_out(np.array([[2, 5, 9, 13, 17, 20, 22, 26, 27, 28]]), 3)[0]
    assert decide(name, rack, CHOOSE, top=20) == TAKE
    assert decide(name, rack, PLACE_DISCARD, hand=20) == slot(6)
    assert decide(name, rack, PLACE_DRAWN, hand=20) == slot(6)


@pytest.mark.parametrize("name", list(DECIDERS))
def test_every_agent_goes_out_with_3_and_4_players_without_a_run(name):
    rules = RackoRules(num_players=4)  # N = 60, min_run_to_win = 0
    rack = [4, 9, 15, 21, 27, 50, 38, 44, 51, 57]
    assert decide(name, rack, PLACE_DRAWN, hand=33, rules=rules) == slot(6)
    assert decide(name, rack, CHOOSE, top=33, rules=rules) == TAKE


def test_sequence_keeps_the_run_of_three_the_bucket_agent_breaks():
    # 15-16-17 is the R7 run; 24's bucket is slot 6 (holding 17): the bucket agent breaks the
    # run, the sequence agent puts 24 into the bad slot 7 and keeps it.
    rack = [2, 6, 9, 15, 16, 17, 5, 30, 1, 38]
    assert decide("bucket", rack, PLACE_DRAWN, hand=24) == slot(6)
    assert decide("sequence", rack, PLACE_DRAWN, hand=24) == slot(7)


def test_sequence_builds_towards_the_run_on_a_sorted_rack_without_one():
    # sorted but no run (R7: not out). 22 next to 21 starts a run (20 or 23 completes it);
    # the bucket agent sees slot 6 well filled and throws 22 away.
    rack = [3, 7, 10, 14, 18, 21, 25, 29, 33, 37]
    assert not goes_out(np.array([rack]), 3)[0]
    assert decide("bucket", rack, PLACE_DRAWN, hand=22) == DISCARD_DRAWN
    assert decide("sequence", rack, PLACE_DRAWN, hand=22) == slot(7)
    # and a card that completes the run goes out at once
    better = [3, 7, 10, 14, 18, 21, 22, 29, 33, 37]
    assert decide("sequence", better, CHOOSE, top=23) == TAKE
    assert decide("sequence", better, PLACE_DISCARD, hand=23) == slot(8)


def test_sequence_counts_cards_known_elsewhere():
    # slots 4-5 lie between 10 (slot 3) and 14 (slot 6): they need two of 11, 12, 13. The
    # opponent is known to hold two cards: 11 and 12 (that plan is dead) or 21 and 22 (cards
    # between 14 and 25, kept in adjacent slots, needed nowhere). Same number of unseen cards.
    rules = RackoRules()
    rack = np.array([[3, 7, 10, 1, 2, 14, 25, 29, 33, 37]])

    def cost(opp):
        view = {"in_discard": np.zeros((1, 41), bool), "opp_known": np.array([[opp + [0] * 8]]), "hand": np.zeros(1, np.int64)}
        return sequence_costs(rack, np.array([0]), availability(view, rack, 40, 0.5), rules.min_run_to_win)[0, 0]

    assert cost([11, 12]) > cost([21, 22]) + 1.0


@pytest.mark.parametrize("n,min_run,bonus", [(40, 3, False), (40, 3, True), (50, 0, False), (60, 0, True), (40, 4, False)])
def test_fast_sequence_costs_equal_the_per_candidate_reference(n, min_run, bonus):
    rng = np.random.default_rng(n + min_run)
    B = 200
    perm = np.argsort(rng.random((B, n)), axis=1) + 1
    rack, card = perm[:, :10].copy(), perm[:, 10]
    rack[: B // 2] = np.sort(rack[: B // 2], axis=1)  # nearly-done racks exercise the run states
    rack[: B // 4, 5] = rack[: B // 4, 4] + 1
    view = {"in_discard": np.zeros((B, n + 1), bool), "opp_known": np.zeros((B, 1, 10), np.int64), "hand": np.zeros(B, np.int64)}
    view["in_discard"][np.arange(B)[:, None], perm[:, 11:16]] = True
    view["opp_known"][:, 0, :3] = perm[:, 16:19]
    avail = availability(view, rack, n, 0.5)
    fast = sequence_costs(rack, card, avail, min_run, bonus)
    ref = sequence_costs_reference(candidate_racks(rack, card), avail, min_run, bonus)
    finite = (fast < 1e5) | (ref < 1e5)
    assert finite.mean() > 0.9
    np.testing.assert_allclose(fast[finite], ref[finite], rtol=1e-4, atol=1e-3)


# -- play in the core ---------------------------------------------------------------------------
VARIANTS = [
    {"num_players": 2},
    {"num_players": 2, "bonus": True, "reshuffle": "flip"},
    {"num_players": 2, "deck_size": 30, "min_run_to_win": 4},
    {"num_players": 3},
    {"num_players": 4},
    {"num_players": 4, "partners": True},
    {"num_players": 3, "deck_size": 80, "min_run_to_win": 2, "max_turns": 40},
]


@pytest.mark.parametrize("kwargs", VARIANTS, ids=lambda k: ",".join(f"{a}={b}" for a, b in k.items()))
def test_all_actions_legal_in_the_core(kwargs):
    rules = RackoRules(**kwargs)
    core = RackoCore(rules)
    specs = ["racko:bucket", "racko:ranges", "racko:sequence", "random"]
    agents = [make_agent(s, core, seed=i, game="racko") for i, s in enumerate(specs)]
    B = 32
    state = core.init(B, seed=7)
    owner = (np.arange(B)[:, None] + np.arange(rules.num_players)[None, :]) % len(agents)  # agent of each seat
    counts = np.zeros(len(agents), np.int64)
    went_out = 0
    # play_out raises on an illegal action; finished games are dealt anew in place
    for turn in itertools.islice(play_out(core, state, agents, owner, drop_finished=False), 300):
        assert turn.actions.dtype == np.int64 and len(turn.games) == B
        counts += np.bincount(turn.owner, minlength=len(agents))
        went_out += int(turn.result.terminated.sum())
        core.reset_where(state, turn.finished)
    assert (counts > 0).all()
    assert went_out > 0


def test_same_seed_same_actions():
    core = RackoCore(RackoRules())
    state = core.init(256, seed=3)
    seat = core.current_player(state)
    obs, mask = core.observe(state, seat), core.legal_action_mask(state)
    for cls in (BucketAgent, RangesAgent, SequenceAgent):
        a, b = cls(core, seed=5), cls(core, seed=5)
        np.testing.assert_array_equal(a.act(obs, mask), b.act(obs, mask))
        np.testing.assert_array_equal(a.act(obs[:7], mask[:7]), b.act(obs[:7], mask[:7]))


def test_arena_reproducible_and_ladder():
    from deckgym.evaluation.arena import evaluate

    r1 = evaluate("racko", ["racko:sequence", "random"], deals=200, seed=11)
    r2 = evaluate("racko", ["racko:sequence", "random"], deals=200, seed=11)
    assert r1.to_json() == r2.to_json()
    seq = r1.agents[0]
    assert seq.name == "racko:sequence" and seq.ci_low > 0.8
    bucket = evaluate("racko", ["racko:bucket", "random"], deals=200, seed=11).agents[0]
    assert bucket.ci_low > 0.8
    top = evaluate("racko", ["racko:sequence", "racko:ranges"], deals=150, seed=11).agents[0]
    assert top.name == "racko:sequence" and top.ci_low > 0.5


def test_spec_parameters_tune_a_heuristic_and_bad_ones_are_named():
    from deckgym.agents.registry import make_agent

    core = RackoCore(RackoRules())
    a = make_agent("racko:lookahead?outlook_samples=8&take_margin=2.5", core, game="racko")
    assert a.params["outlook_samples"] == 8 and a.params["take_margin"] == 2.5
    assert type(a).params["outlook_samples"] == 16  # the class default is untouched
    assert a.spec == "racko:lookahead?outlook_samples=8&take_margin=2.5"
    state = core.init(64, seed=2)
    obs, mask = core.observe(state, core.current_player(state)), core.legal_action_mask(state)
    assert mask[np.arange(64), a.act(obs, mask)].all()
    for bad, msg in (("racko:lookahead?foo=1", "unknown parameter 'foo'"),
                     ("racko:lookahead?outlook_samples=x", "not a valid int"),
                     ("racko:lookahead?take_margin", "key=value"),
                     ("random?x=1", "no parameters"),
                     ("racko:nope?x=1", "unknown agent")):
        with pytest.raises(ValueError, match=msg):
            make_agent(bad, core, game="racko")
