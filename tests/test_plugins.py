"""The typed plug-in interfaces (``deckgym.plugins``): every registered game's parts conform, and
a part that lacks a member is named in one line."""

from __future__ import annotations

import types

import pytest

from deckgym.plugins import (FastSampler, ObservationBounds, Renderer, TableView, TerminalText, members,
                             missing_members)
from deckgym.registration import GAMES


def test_the_text_protocol_lists_the_fourteen_members() -> None:
    assert members(TerminalText) == ("title", "intro", "view", "own_lines", "mid_turn", "own_step", "prompt", "moves",
                                     "parse", "hint", "opponent_step", "round_result", "reveal", "after_round")
    assert members(TableView) == ("god_table", "seat_table", "phase_text") and members(Renderer) == ("ansi", "rgb_array")


@pytest.mark.parametrize("name", sorted(GAMES))
def test_every_game_conforms(name: str) -> None:
    spec = GAMES[name].descriptor
    core = GAMES[name].make_core()
    text = spec.text(core)
    assert missing_members(text, TerminalText, "text") == [] and isinstance(text, TerminalText)
    assert isinstance(spec.render, Renderer) and isinstance(spec.table_view, TableView)
    assert isinstance(core, ObservationBounds) and isinstance(core, FastSampler)


def test_a_missing_member_is_named_in_one_line() -> None:
    view = types.SimpleNamespace(god_table=lambda s, l: {}, seat_table=lambda v, s, l: {}, phase_text="not callable")
    assert missing_members(view, TableView, "toy's table_view") == [
        "toy's table_view.phase_text is not callable (TableView)"]
    render = types.SimpleNamespace(ansi=lambda c, s, b=0: "")
    assert missing_members(render, Renderer, "toy's render") == ["toy's render lacks 'rgb_array' (Renderer)"]
    assert not isinstance(render, Renderer)
