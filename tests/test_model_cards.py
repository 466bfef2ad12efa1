"""Every shipped model has its card and its arena JSON, and the card's arena table says what the JSON says."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
MODELS = sorted(p.stem for p in (ROOT / "models").glob("*.safetensors"))


def test_the_models_folder_ships_models():
    assert "racko_2p_torchrl" in MODELS and len(MODELS) >= 5


def _card_figure(text: str) -> float:
    """A card's figure as a fraction: '78.0%' -> 0.780, '0.258' -> 0.258."""
    return float(text[:-1]) / 100 if text.endswith("%") else float(text)


@pytest.mark.parametrize("name", MODELS)
def test_each_model_has_a_card_that_quotes_its_arena_json(name):
    card, arena = ROOT / "models" / f"{name}.md", ROOT / "models" / f"{name}.arena.json"
    assert card.is_file(), f"models/{name}.safetensors has no model card models/{name}.md"
    assert arena.is_file(), f"models/{name}.safetensors has no arena results models/{name}.arena.json"
    text, report = card.read_text(encoding="utf-8"), json.loads(arena.read_text(encoding="utf-8"))
    spec = f"ppo:models/{name}.safetensors"
    assert report["lineup"][0] == spec
    for heading in ("## How it was trained", "## Arena results"):
        assert heading in text, f"models/{name}.md has no '{heading}' section"
    command = f"deckgym eval {report['game']} {spec} {report['lineup'][1]}"
    assert command in text and f"--games {report['deals']} --seed {report['seed']}" in text
    row = re.search(r"^\| \*\*" + re.escape(spec) + r"\*\* \| (\d+) \| \*\*([\d.]+%?)\*\* \| \*\*\[([\d.]+%?), ([\d.]+%?)\]\*\*",
                    text, re.M)
    assert row, f"models/{name}.md has no arena table row for {spec}"
    ours = report["agents"][0]
    assert ours["name"] == spec and int(row.group(1)) == ours["games"]
    for figure, value in zip(row.groups()[1:], (ours["win_rate"], ours["ci_low"], ours["ci_high"])):
        assert abs(_card_figure(figure) - value) <= 0.0005 + 1e-9, f"models/{name}.md says {figure}, the JSON {value:.4f}"


@pytest.mark.parametrize("name", ["racko_2p_torchrl", "racko_2p_rllib"])
def test_racko_2p_models_mostly_play_the_planners_action(name):
    """The cards of the two-player Rack-O models say they follow the features' planner action
    (racko:lookahead's) on most decisions: the torchrl model learned it, the rllib one was cloned."""
    from deckgym.agents.registry import make_agent
    from deckgym.registration import game as game_entry

    entry = game_entry("racko")
    core = entry.make_core(entry.make_rules(num_players=2))
    agent = make_agent(f"ppo:{ROOT / 'models' / name}.safetensors", core, game="racko")
    st = core.init(256, 7)
    agree = []
    for _ in range(20):
        obs, masks = core.observe(st, core.current_player(st)), core.legal_action_mask(st)
        action = agent.act(obs, masks)
        assert masks[np.arange(256), action].all()
        agree.append(action == np.argmax(entry.features().derived_features(core, obs)[:, -core.num_actions:], axis=1))
        core.step(st, action)
    assert np.mean(agree) > 0.85
