"""OpenSpiel through the descriptor: each game's OpenSpiel form is named by its descriptor and
registers itself with pyspiel on import; OpenSpiel's bots are listed only for the games that
have one, and choose their game by the descriptor (never by the core's attributes)."""

from __future__ import annotations

import ast
import pathlib

import pytest

from deckgym.agents.registry import agent_specs, make_agent
from deckgym.descriptor import OPENSPIEL_AGENTS
from deckgym.registration import GAMES, GameEntry, register_game

ROOT = pathlib.Path(__file__).resolve().parents[1]
WITH_FORM = sorted(n for n, e in GAMES.items() if e.spec.openspiel is not None)
TOY = GameEntry("twentyone", "tests.twentyone_env", "deckgym/twentyone-v0", "deckgym/TwentyOne-v0")


def test_the_shipped_games_have_an_openspiel_form() -> None:
    assert WITH_FORM == sorted(GAMES) and len(WITH_FORM) >= 2


@pytest.mark.parametrize("name", WITH_FORM)
def test_a_form_registers_itself_at_its_last_line(name: str) -> None:
    path = ROOT / (GAMES[name].descriptor.openspiel.replace(".", "/") + ".py")
    last = ast.parse(path.read_text()).body[-1]
    assert isinstance(last, ast.Expr) and ast.unparse(last.value).startswith("pyspiel.register_game(GAME_TYPE, ")
    pyspiel = pytest.importorskip("pyspiel")
    form = GAMES[name].descriptor.openspiel_module()
    assert form.GAME_TYPE.short_name in pyspiel.registered_names()


def test_the_adapter_registers_every_game_with_a_form() -> None:
    pytest.importorskip("pyspiel")
    import deckgym.openspiel

    assert deckgym.openspiel.register_games() == [n for n in GAMES if GAMES[n].descriptor.openspiel is not None]


def test_openspiel_agents_are_listed_only_for_games_with_a_form() -> None:
    register_game(TOY)
    try:
        for name in WITH_FORM:
            assert set(OPENSPIEL_AGENTS) <= set(agent_specs(name))
        toy = agent_specs("twentyone")
        assert not set(OPENSPIEL_AGENTS) & set(toy) and "twentyone:cautious" in toy and "random" in toy
        core = GAMES["twentyone"].make_core()
        with pytest.raises(ValueError, match="unknown agent 'openspiel:ismcts' for game 'twentyone'"):
            make_agent("openspiel:ismcts", core, game="twentyone")
        assert "racko:bucket" not in toy
    finally:
        GAMES.pop("twentyone")


def test_no_openspiel_module_sniffs_attributes() -> None:
    # the game is the descriptor's, never guessed from what a core happens to hold
    for path in sorted((ROOT / "deckgym" / "openspiel").glob("*.py")):
        calls = [n for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.Call)
                 and isinstance(n.func, ast.Name) and n.func.id == "hasattr"]
        assert not calls, f"{path.name}:{calls[0].lineno} picks by hasattr"


@pytest.mark.parametrize("name", WITH_FORM)
def test_openspiel_agents_build_from_the_descriptor(name: str) -> None:
    pytest.importorskip("pyspiel")
    import numpy as np

    core = GAMES[name].make_core(obs="infostate")  # what the agent reads (its observation)
    agent = make_agent("openspiel:random", core, seed=1, game=name)
    assert agent.game.get_type().short_name == GAMES[name].descriptor.openspiel_module().GAME_TYPE.short_name
    st = core.init(2, 0)
    acts = agent.act(core.observe(st, core.current_player(st)), core.legal_action_mask(st))
    assert core.legal_action_mask(st)[np.arange(2), acts].all()
