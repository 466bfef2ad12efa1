"""The conformance kit: ``deckgym.testing.check_game`` passes every registered game and the toy
game under ``tests/twentyone_env`` through every front end, names a failing check, and says
which checks it could not run."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from deckgym.registration import GAMES, GameEntry, register_game
from deckgym.testing import CHECKS, ConformanceError, check_game

TOY = GameEntry("twentyone", "tests.twentyone_env", "deckgym/twentyone-v0", "deckgym/TwentyOne-v0")
FRAMEWORKS = ("pettingzoo api_test", "pettingzoo seed_test", "gymnasium check_env", "sb3 check_env",
              "torchrl check_env_specs", "deckgym train and eval")
OPENSPIEL = ("openspiel random_sim_test", "openspiel oracle")


@pytest.fixture()
def toy():
    register_game(TOY)
    yield "twentyone"
    GAMES.pop("twentyone")


@pytest.mark.parametrize("name", sorted(GAMES))
def test_every_registered_game_passes_every_check(name: str) -> None:
    report = check_game(name)
    assert [c for c, _, _ in report.results] == [c for c, _ in CHECKS]
    assert report.passed == [c for c, _ in CHECKS], str(report)  # the dev install has every framework
    assert f"{name}: {len(CHECKS)} of {len(CHECKS)} checks passed" in str(report)


def test_the_toy_game_passes_through_every_front_end(toy: str) -> None:
    report = check_game(toy)
    assert set(report.passed) == {c for c, _ in CHECKS} - set(OPENSPIEL), str(report)
    assert all(report.status(c) == "not applicable" for c in OPENSPIEL)  # its descriptor names no OpenSpiel form


def test_a_missing_text_member_fails_the_plugin_check_in_one_line(toy: str, monkeypatch) -> None:
    from tests.twentyone_env.terminal import TwentyOneText

    monkeypatch.delattr(TwentyOneText, "hint")
    with pytest.raises(ConformanceError, match=r"^twentyone: plug-in interfaces failed: AssertionError: twentyone's text "
                                               r"lacks 'hint' \(TerminalText\)$"):
        check_game(toy)


def test_a_core_breaking_the_contract_fails_it(toy: str, monkeypatch) -> None:
    from tests.twentyone_env.core import TwentyOneCore

    observe = TwentyOneCore.observe
    monkeypatch.setattr(TwentyOneCore, "observe", lambda self, *a, **k: observe(self, *a, **k).astype(np.float64))
    with pytest.raises(ConformanceError, match=r"core contract failed: .*observe gave float64 \(6, \d+\), not finite float32"):
        check_game(toy, skip=FRAMEWORKS)


def test_a_framework_not_installed_is_skipped_and_named(toy: str, monkeypatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pettingzoo" else real(name, *a))
    report = check_game(toy, skip=("gymnasium check_env", "sb3 check_env", "torchrl check_env_specs",
                                   "deckgym train and eval"))
    assert report.status("pettingzoo api_test") == report.status("pettingzoo seed_test") == "not installed"
    line = next(x for x in str(report).splitlines() if "pettingzoo api_test" in x)
    assert line.split() == ["pettingzoo", "api_test", "not", "installed", "(pip", "install", "pettingzoo)"]
    assert report.status("core contract") == "passed" and report.status("sb3 check_env") == "skipped"


def test_bad_arguments_are_refused_before_any_check() -> None:
    with pytest.raises(ValueError, match="unknown game 'chess'"):
        check_game("chess")
    with pytest.raises(ValueError, match=r"skip: unknown checks \['gym'\]"):
        check_game(sorted(GAMES)[0], skip=("gym",))
