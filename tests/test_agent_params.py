"""Agent parameters are range-checked: a clear ValueError naming the parameter and its range."""

from __future__ import annotations

import pytest

from deckgym.agents.registry import _tuning, agent_table, make_agent
from deckgym.registration import game

CORES = {"racko": game("racko").make_core(), "leastscore": game("leastscore").make_core()}


def _core(spec):
    return CORES.get(spec.split(":")[0], CORES["racko"])


@pytest.mark.parametrize("spec", [s for s in agent_table() if s != "random"])
def test_every_tunable_parameter_declares_a_range_and_the_defaults_fit(spec):
    agent = make_agent(spec, _core(spec))  # the defaults pass their own check
    tuning = _tuning(agent)
    assert set(tuning) == set(getattr(agent, "param_ranges", {}))


@pytest.mark.parametrize("spec, message", [
    ("racko:lookahead?outlook_samples=-3", "outlook_samples must be an int in [0, 127]"),
    ("racko:lookahead?outlook_samples=1000", "outlook_samples must be an int in [0, 127]"),
    ("racko:sequence?discard_weight=1.5", "discard_weight must be a finite number in [0, 1]"),
    ("racko:sequence?specific_factor=-1", "specific_factor must be a finite number >= 0"),
    ("racko:sequence?take_margin=nan", "take_margin must be a finite number, got nan"),
    ("racko:sequence?bonus_weight=-0.1", "bonus_weight must be a finite number >= 0"),
    ("racko:sequence?fill=spiral", "fill must be one of 'slots', 'coupon'"),
    ("leastscore:greedy?declare_at=-1", "declare_at must be an int in [0, 50]"),
    ("leastscore:counting?min_success=1.2", "min_success must be a finite number in [0, 1]"),
    ("leastscore:counting?skew=-1", "skew must be a finite number in [0, 5]"),
    ("leastscore:counting?gamma=-0.5", "gamma must be a finite number >= 0"),
    ("leastscore:counting?refill=99", "refill must be a finite number in [0, 50]"),
    ("leastscore:expect?points_weight=-1", "points_weight must be a finite number >= 0"),
    ("leastscore:expect?margin=inf", "margin must be a finite number"),
    ("leastscore:dp?lam=-0.01", "lam must be a finite number >= 0"),
    ("leastscore:dp?margin=-inf", "margin must be a finite number"),
    ("ppo:models/racko_2p.safetensors?deterministic=maybe", "deterministic must be true or false"),
    ("ppo:models/racko_2p.safetensors?temperature=2", "ppo takes only deterministic"),
])
def test_a_value_out_of_range_is_refused_by_name(spec, message):
    with pytest.raises(ValueError) as info:
        make_agent(spec, _core(spec))
    assert message in str(info.value) and spec in str(info.value)


def test_values_in_range_are_taken_and_play():
    import numpy as np

    core = CORES["racko"]
    agent = make_agent("racko:lookahead?outlook_samples=0&discard_weight=1&fill=coupon", core)
    assert agent.params["outlook_samples"] == 0 and agent.params["fill"] == "coupon"
    st = core.init(8, 0)
    masks = core.legal_action_mask(st)
    a = agent.act(core.observe(st, core.current_player(st)), masks)
    assert masks[np.arange(8), a].all()
    ppo = make_agent("ppo:models/racko_2p.safetensors?deterministic=false", core, seed=3)
    assert ppo.deterministic is False and ppo.spec == "ppo:models/racko_2p.safetensors?deterministic=false"


def test_ppo_agent_refuses_a_non_bool_deterministic():
    from deckgym.agents.ppo import PPOAgent

    with pytest.raises(ValueError, match="deterministic must be True or False"):
        PPOAgent(CORES["racko"], path="models/racko_2p.safetensors", deterministic="no")
