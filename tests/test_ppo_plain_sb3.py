"""``ppo:PATH`` loads a MaskablePPO model saved by plain SB3 on the Gymnasium view (no
deckgym metadata) when its sizes fit the game, with a warning naming the assumed rules."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

import deckgym  # noqa: F401  (registers the Gymnasium ids)
from deckgym.agents.ppo import ModelMismatchError, model_metadata, read_metadata, save_model
from deckgym.agents.registry import make_agent
from deckgym.registration import game


def _plain_model(tmp_path, name, **env_kwargs):
    from sb3_contrib import MaskablePPO

    env = gymnasium.make("deckgym/RackO-v0", **env_kwargs)
    model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=32, n_epochs=1, seed=0, device="cpu",
                        policy_kwargs={"net_arch": [16]})
    model.learn(32)
    path = str(tmp_path / name)
    model.save(path)
    return model, env, path + ".zip"


@pytest.mark.parametrize("features", [False, True])
def test_a_plain_sb3_model_plays_with_a_warning_naming_the_rules(tmp_path, features):
    _, _, path = _plain_model(tmp_path, "plain", num_players=2, features=features)
    assert read_metadata(path, missing_ok=True) is None
    with pytest.raises(ValueError, match="no deckgym_meta.json"):
        read_metadata(path)
    core = game("racko").make_core()
    with pytest.warns(UserWarning, match=r"no deckgym_meta.json .*assuming it was trained for racko with "
                                         r"RackoRules\(num_players=2.*attach the metadata with deckgym.agents.ppo.save_model"):
        agent = make_agent(f"ppo:{path}", core, game="racko")
    assert agent.meta["features"] is features and agent.meta["assumed"] is True
    st = core.init(16, 0)
    masks = core.legal_action_mask(st)
    a = agent.act(core.observe(st, core.current_player(st)), masks)
    assert masks[np.arange(16), a].all()


def test_a_plain_sb3_model_of_other_sizes_is_refused_with_the_sizes(tmp_path):
    _, _, path = _plain_model(tmp_path, "p3", num_players=3)
    with pytest.raises(ModelMismatchError, match=r"observations of size 144, but racko .* gives 112 \(raw\)"):
        make_agent(f"ppo:{path}", game("racko").make_core(), game="racko")
    with pytest.raises(ModelMismatchError, match="has 13 actions but leastscore has"):
        make_agent(f"ppo:{path}", game("leastscore").make_core(), game="leastscore")


def test_save_model_attaches_the_metadata_and_silences_the_warning(tmp_path, recwarn):
    model, env, _ = _plain_model(tmp_path, "x", num_players=2)
    path = save_model(model, str(tmp_path / "mine"), model_metadata(env.unwrapped.core, "racko", features=False))
    agent = make_agent(f"ppo:{path}", game("racko").make_core(), game="racko")
    assert "assumed" not in agent.meta and not [w for w in recwarn if "deckgym_meta" in str(w.message)]
