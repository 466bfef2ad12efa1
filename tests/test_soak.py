"""The soak script: a tiny run is clean, and each of its checks catches a planted fault."""

from __future__ import annotations

import json

import numpy as np
import pytest

from leastscore_env.core import LeastScoreCore
from racko_env.core import RackoCore
from deckgym.evaluation import soak

BY_NAME = {v.name: v for v in soak.VARIANTS}


@pytest.mark.parametrize("name", ["racko_3p", "racko_2p_bonus_flip_deck50", "racko_4p_partners_match",
                                  "leastscore_4p", "leastscore_6p_match_cap_continues"])
def test_a_short_soak_is_clean(name):
    r = soak.soak(BY_NAME[name], steps=3000, batch=64, seed=1, leak_every=1)
    assert r["agent_steps"] >= 3000 and r["leak_checks"] >= 3000
    assert r["violations"] == {"cards": 0, "legal": 0, "zero_sum": 0, "finite": 0, "leak": 0}, r["examples"]


def test_every_variant_builds():
    for v in soak.VARIANTS:
        r = soak.soak(v, steps=1, batch=4, seed=0)
        assert sum(r["violations"].values()) == 0


@pytest.mark.parametrize("cls, name, leak", [
    (RackoCore, "racko_2p", lambda st: st.piles[:, 0] / 100.0),  # the top of the draw pile's bottom
    (LeastScoreCore, "leastscore_4p", lambda st: (st.hand_bits[:, 1] & 1023) / 2000.0),  # seat 1's low cards
])
def test_the_leak_check_catches_a_hidden_card_in_the_observation(monkeypatch, cls, name, leak):
    real = cls.observe

    def leaky(self, state, seat, *a, **k):
        obs = real(self, state, seat, *a, **k)
        obs[:, -1] = leak(state)
        return obs

    monkeypatch.setattr(cls, "observe", leaky)
    r = soak.soak(BY_NAME[name], steps=2000, batch=64, seed=2, leak_every=1)
    assert r["violations"]["leak"] > 0


def test_the_card_and_zero_sum_checks_catch_planted_faults(monkeypatch):
    real = RackoCore.step

    def faulty(self, state, actions, *a, **k):
        res = real(self, state, actions, *a, **k)
        state.piles[0, 0] = state.piles[0, 1]  # a card twice, another gone
        res.rewards = res.rewards + np.outer(res.terminated | res.truncated, [1.0, 0.0])  # not zero-sum
        return res

    monkeypatch.setattr(RackoCore, "step", faulty)
    r = soak.soak(BY_NAME["racko_2p_bonus_flip_deck50"], steps=64 * 200, batch=64, seed=3)
    assert r["violations"]["cards"] > 0 and r["violations"]["zero_sum"] > 0


def test_the_legal_and_finite_checks_catch_planted_faults(monkeypatch):
    real_mask, real_obs = LeastScoreCore.legal_action_mask, LeastScoreCore.observe

    calls = []

    def no_moves_once(self, state):  # game 0 once without a legal action
        m = real_mask(self, state)
        if not calls:
            m[0] = False
        calls.append(1)
        return m

    def nan_obs(self, state, seat, *a, **k):
        obs = real_obs(self, state, seat, *a, **k)
        obs[1, 0] = np.nan
        return obs

    monkeypatch.setattr(LeastScoreCore, "legal_action_mask", no_moves_once)
    monkeypatch.setattr(LeastScoreCore, "observe", nan_obs)
    r = soak.soak(BY_NAME["leastscore_2p"], steps=640, batch=64, seed=4, leak_every=1000)
    assert r["violations"]["legal"] == 1 and r["violations"]["finite"] == 10
    assert r["examples"][0].startswith("legal: step 0, games [0]")


def test_main_writes_figures_and_refuses_bad_arguments(tmp_path, capsys):
    path = tmp_path / "soak.json"
    assert soak.main(["--steps", "100", "--batch", "16", "--variants", "racko_2p", "leastscore_2p",
                      "--json", str(path)]) == 0
    assert '"violations": 0' in path.read_text()
    for bad in (["--steps", "0"], ["--variants", "nope"], ["--json", str(tmp_path / "no" / "x.json")]):
        with pytest.raises(SystemExit) as e:
            soak.main(bad)
        assert e.value.code == 2


def test_deckgym_soak_runs_the_soak_and_refuses_bad_flags(tmp_path, capsys):
    from deckgym.cli import main as cli

    path = tmp_path / "soak.json"
    assert cli(["soak", "--steps", "500", "--batch", "16", "--variants", "leastscore_2p", "--json", str(path)]) == 0
    assert "leastscore_2p" in capsys.readouterr().out
    assert [r["variant"] for r in json.loads(path.read_text())["results"]] == ["leastscore_2p"]
    assert cli(["soak", "--variants", "nope"]) == 2
    assert "valid: racko_2p" in capsys.readouterr().err
    assert cli(["soak", "--batch", "0"]) == 2
    assert "--batch must be in [1, inf)" in capsys.readouterr().err
