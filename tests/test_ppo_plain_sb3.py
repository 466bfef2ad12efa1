"""A MaskablePPO model saved by plain SB3 on the Gymnasium view (a pickled zip without deckgym
metadata): refused without the user's switch; with it (``ppo:PATH?allow_pickle=true`` or
``deckgym convert PATH --allow-pickle --game GAME``) its weights are read when its sizes fit the
game, with a warning naming the assumed rules. ``save_model`` writes a policy file instead."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

import deckgym  # noqa: F401  (registers the Gymnasium ids)
from deckgym.agents.policy_file import ModelMismatchError
from deckgym.agents.ppo import model_metadata, read_metadata, save_model, without_log_folder
from deckgym.agents.policy_file import PickleRefused
from deckgym.agents.registry import make_agent
from deckgym.cli import main as cli
from deckgym.registration import game

pytest.importorskip("sb3_contrib")


def _plain_model(tmp_path, name, **env_kwargs):
    from sb3_contrib import MaskablePPO

    env = gymnasium.make("deckgym/RackO-v0", **env_kwargs)
    model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=32, n_epochs=1, seed=0, device="cpu",
                        policy_kwargs={"net_arch": [16]})
    without_log_folder(model).learn(32)
    path = str(tmp_path / name)
    model.save(path)
    return model, env, path + ".zip"


@pytest.mark.parametrize("features", [False, True])
def test_a_plain_sb3_model_plays_on_the_users_word_with_a_warning_naming_the_rules(tmp_path, features):
    model, env, path = _plain_model(tmp_path, "plain", num_players=2, features=features)
    with pytest.raises(PickleRefused, match="SB3 model zip"):
        read_metadata(path)
    core = game("racko").make_core()
    with pytest.raises(PickleRefused, match=r"allow_pickle=true"):
        make_agent(f"ppo:{path}", core, game="racko")
    with pytest.warns(UserWarning, match=r"no deckgym_meta.json .*assuming it was trained for racko with "
                                         r"RackoRules\(num_players=2.*deckgym.agents.ppo.save_model"):
        agent = make_agent(f"ppo:{path}?allow_pickle=true", core, game="racko")
    assert (agent.meta["features"] is not None) is features and agent.meta["assumed"] is True
    st = core.init(16, 0)
    obs, masks = core.observe(st, core.current_player(st)), core.legal_action_mask(st)
    pred, _ = model.predict(agent.inputs(obs), action_masks=masks, deterministic=True)
    np.testing.assert_array_equal(agent.act(obs, masks), pred)


def test_a_plain_sb3_model_of_other_sizes_is_refused_with_the_sizes(tmp_path):
    _, _, path = _plain_model(tmp_path, "p3", num_players=3)
    with pytest.raises(ModelMismatchError, match=r"observations of size 144, but racko .* gives 112 \(raw\)"):
        make_agent(f"ppo:{path}?allow_pickle=true", game("racko").make_core(), game="racko")
    with pytest.raises(ModelMismatchError, match="has 13 actions but leastscore has"):
        make_agent(f"ppo:{path}?allow_pickle=true", game("leastscore").make_core(), game="leastscore")


def test_convert_a_plain_model_needs_its_game(tmp_path, capsys):
    _, _, path = _plain_model(tmp_path, "p2", num_players=2)
    assert cli(["convert", path, "--allow-pickle"]) == 2
    assert "give the game it was trained for" in capsys.readouterr().err
    with pytest.warns(UserWarning, match="assuming"):
        assert cli(["convert", path, "--allow-pickle", "--game", "racko", "--players", "2"]) == 0
    meta = read_metadata(str(tmp_path / "p2.safetensors"))
    assert meta["assumed"] and meta["engine"] == "sb3" and meta["rules"]["num_players"] == 2


def test_save_model_writes_a_policy_file_with_the_metadata(tmp_path, recwarn):
    model, env, _ = _plain_model(tmp_path, "x", num_players=2)
    path = save_model(model, str(tmp_path / "mine"), model_metadata(env.unwrapped.core, "racko", features=False))
    assert path.endswith(".safetensors")
    agent = make_agent(f"ppo:{path}", game("racko").make_core(), game="racko")
    assert "assumed" not in agent.meta and not [w for w in recwarn if "deckgym_meta" in str(w.message)]
