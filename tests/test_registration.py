"""``parse_rule_overrides``: the ``--rule NAME=VALUE`` parser shared by the CLI and training."""

import pytest

from deckgym.registration import game, parse_rule_overrides


def test_parse_rule_overrides_types():
    got = parse_rule_overrides(["bonus=true", "max_turns=200", "x=0.5", "y=none", "z=1,2,3", "first_player=random"])
    assert got == {"bonus": True, "max_turns": 200, "x": 0.5, "y": None, "z": (1, 2, 3), "first_player": "random"}
    assert type(got["max_turns"]) is int and type(got["bonus"]) is bool


def test_parse_rule_overrides_feeds_rules():
    rules = game("racko").make_rules(**parse_rule_overrides(["num_players=3", "bonus=TRUE"]))
    assert rules.num_players == 3 and rules.bonus is True


def test_parse_rule_overrides_rejects_missing_equals():
    with pytest.raises(ValueError, match="NAME=VALUE.*'bonus'"):
        parse_rule_overrides(["bonus"])
