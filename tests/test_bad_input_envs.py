"""Bad input to the envs and rules: a clear, early error naming the problem."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import numpy as np
import pytest

from deckgym.gym_env import DeckGymEnv
from deckgym.registration import GAMES, game
from deckgym.rules import UnknownRuleError, rule_field_names
from leastscore_env import env as leastscore_env
from leastscore_env.rules import LeastScoreRules
from racko_env import env as racko_env
from racko_env.rules import RackoRules

ENVS = [racko_env, leastscore_env]


@pytest.mark.parametrize("make", ENVS)
@pytest.mark.parametrize("seed", [1.7, 1.0, True, np.bool_(False), "1", np.float64(2.0), [1]])
def test_reset_refuses_a_seed_that_is_not_an_int(make, seed):
    e = make()
    with pytest.raises(TypeError, match=r"seed must be None or an int, got"):
        e.reset(seed=seed)


@pytest.mark.parametrize("make", ENVS)
@pytest.mark.parametrize("seed", [-1, np.int64(-7), -(2**63)])
@pytest.mark.parametrize("options", [None, {"first_player": 0}])
def test_reset_refuses_a_negative_seed_as_the_gym_views_do(make, seed, options):
    e = make()
    e.reset(seed=1)
    before = e.state_dict()
    with pytest.raises(ValueError, match=rf"seed must be a non-negative integer or None, got \S*{int(seed)}"):
        e.reset(seed=seed, options=options)
    assert e.state_dict() == before  # the game in progress is untouched
    view = DeckGymEnv(game="racko" if make is racko_env else "leastscore")
    with pytest.raises(ValueError, match=r"seed must be a non-negative integer or None"):
        view.reset(seed=seed)


@pytest.mark.parametrize("make", ENVS)
def test_reset_with_a_float_seed_never_deals_the_truncated_seed(make):
    e = make()
    e.reset(seed=1)
    before = e.state_dict()
    with pytest.raises(TypeError):
        e.reset(seed=1.7)
    assert e.state_dict() == before  # the game in progress is untouched


@pytest.mark.parametrize("make", ENVS)
@pytest.mark.parametrize("seed", [np.int64(5), np.int32(5), np.uint16(5), 5])
def test_reset_accepts_python_and_numpy_ints_alike(make, seed):
    a, b = make(), make()
    a.reset(seed=seed)
    b.reset(seed=5)
    assert a.state_dict() == b.state_dict()


@pytest.mark.parametrize("make", ENVS)
@pytest.mark.parametrize("options", [[1, 2], (("racks", 1),), "racks", 3])
def test_reset_options_must_be_a_dict(make, options):
    e = make()
    with pytest.raises(TypeError, match=r"options must be None or a dict describing an explicit deal"):
        e.reset(seed=0, options=options)


@pytest.mark.parametrize("rules_cls", [RackoRules, LeastScoreRules])
def test_unknown_rules_keyword_lists_the_valid_fields(rules_cls):
    with pytest.raises(UnknownRuleError) as info:
        rules_cls(num_players=2, bogus=1)
    msg = str(info.value)
    assert "'bogus'" in msg and "valid fields: " + ", ".join(rule_field_names(rules_cls)) in msg
    assert isinstance(info.value, TypeError) and isinstance(info.value, ValueError)


@pytest.mark.parametrize("name", list(GAMES))
def test_every_keyword_route_names_the_valid_fields(name):
    entry = game(name)
    with pytest.raises(ValueError, match=r"unknown \w+Rules fields 'colour', 'size'; valid fields: num_players"):
        entry.make_rules(colour=1, size=2)
    with pytest.raises(ValueError, match=r"unknown \w+Rules field 'colour'; valid fields: num_players"):
        entry.make_env(colour=1)


@pytest.mark.parametrize("rules", [RackoRules(num_players=3, bonus=True), LeastScoreRules(num_players=5)])
def test_rules_still_copy_pickle_and_replace(rules):
    assert pickle.loads(pickle.dumps(rules)) == rules
    assert copy.deepcopy(rules) == rules
    assert dataclasses.replace(rules, max_turns=7).max_turns == 7
