"""Training defaults come from the game's descriptor in every engine (``deckgym train`` with SB3,
the RLlib engine and the TorchRL example): opponents, evaluation opponents, features, shaping.
The toy game under ``tests/`` (no derived features) trains with its defaults."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("sb3_contrib")

from deckgym.registration import GAMES, game, register_game  # noqa: E402
from deckgym.training.args import parse_pool, validate, validate_rllib  # noqa: E402
from deckgym.training.config import TrainArgs, build_parser  # noqa: E402
from tests.test_third_game import ENTRY  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def toy_game():
    register_game(ENTRY)
    yield
    GAMES.pop("twentyone")


def _plan(name, tmp_path, engine="sb3", *extra):
    args = TrainArgs.from_namespace(build_parser(engine=engine).parse_args([name, "--runs", str(tmp_path), *extra]))
    return args, (validate_rllib if engine == "rllib" else validate)(args)


@pytest.mark.parametrize("engine", ["sb3", "rllib"])
@pytest.mark.parametrize("name", ["racko", "leastscore", "twentyone"])
def test_sb3_and_rllib_take_the_descriptors_defaults(name, engine, tmp_path):
    descriptor = game(name).descriptor
    args, plan = _plan(name, tmp_path, engine)
    assert plan.pool == parse_pool(descriptor.train_opponents)
    assert plan.eval_against == list(descriptor.eval_against)
    assert args.features is (descriptor.features is not None)
    assert args.shaping == (1.0 if descriptor.features is not None else 0.0)


def test_a_given_option_beats_the_descriptor(tmp_path):
    args, plan = _plan("racko", tmp_path, "sb3", "--no-features", "--shaping", "0.5", "--opponents", "random",
                       "--eval-against", "random")
    assert (args.features, args.shaping, plan.pool, plan.eval_against) == (False, 0.5, [("random", 1.0)], ["random"])


def test_features_on_a_game_without_them_is_refused_early(tmp_path):
    with pytest.raises(ValueError, match="twentyone has no derived features"):
        _plan("twentyone", tmp_path, "sb3", "--features")
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("name", ["racko", "leastscore", "twentyone"])
def test_the_torchrl_example_takes_the_descriptors_defaults(name):
    pytest.importorskip("torchrl")
    from deckgym.training.torchrl_ppo import Config, make_env, resolve

    descriptor = game(name).descriptor
    cfg = resolve(Config(game=name, num_envs=4))
    assert parse_pool(cfg.opponents) == parse_pool(descriptor.train_opponents)
    assert cfg.eval_against.split(",") == list(descriptor.eval_against)
    assert (cfg.lr, cfg.net) == (1e-3, "128,128")  # the engine's defaults
    assert cfg.features is (descriptor.features is not None)
    env = make_env(Config(game=name, num_envs=4))
    assert env.rollout(6, break_when_any_done=False)["next", "done"].shape == (4, 6, 1)


def test_deckgym_train_on_the_toy_game_with_its_defaults(tmp_path):
    """A short ``deckgym train`` of the third game, with nothing but sizes given: the pool, the
    ladder, features and shaping are its descriptor's."""
    from deckgym.training import train

    summary = train.main(["twentyone", "--players", "3", "--num-envs", "8", "--n-steps", "16", "--batch-size", "64",
                          "--epochs", "1", "--net", "16", "--total-steps", "256", "--eval-every", "256",
                          "--eval-deals", "2", "--final-deals", "2", "--quiet", "--runs", str(tmp_path),
                          "--run-name", "toy"])
    config = json.loads((tmp_path / "toy" / "config.json").read_text())
    assert summary["steps"] == 256 and not summary["interrupted"]
    assert config["features"] is False and config["shaping"] == 0.0
    assert config["pool"] == [["random", 1.0]] and config["eval_against"] == ["twentyone:cautious", "random"]
    assert set(summary["arena"]) == {"twentyone:cautious", "random"}


# -- one configuration base, old names kept for one release ---------------------------------

def test_the_engines_share_one_configuration_base():
    pytest.importorskip("torchrl")
    import dataclasses

    from deckgym.training.config import TrainConfig
    from deckgym.training.torchrl_ppo import Config

    shared = {f.name for f in dataclasses.fields(TrainConfig)}
    assert issubclass(TrainArgs, TrainConfig) and issubclass(Config, TrainConfig)
    for cls in (TrainArgs, Config):
        assert shared <= {f.name for f in dataclasses.fields(cls)}
    assert {"total_steps", "batch_size", "net", "players", "opponents", "eval_against", "features"} <= shared
    for cls in (TrainConfig, TrainArgs, Config):  # one help text each, the same for the same knob
        assert all(f.metadata.get("help") for f in dataclasses.fields(cls))
    helps = {f.name: f.metadata["help"] for f in dataclasses.fields(TrainConfig)}
    assert all(f.metadata["help"] == helps[f.name] for f in dataclasses.fields(Config) if f.name in helps)


def test_old_torchrl_names_work_with_a_deprecation_warning():
    pytest.importorskip("torchrl")
    from deckgym.training.torchrl_ppo import Config, parse_args

    with pytest.warns(DeprecationWarning, match="'total_frames'.*is now 'total_steps'"):
        cfg = Config(total_frames=640, minibatch=32, pi=(16, 8), vf=(16, 8), num_players=3, eval_every_frames=320,
                     snapshot_every_frames=192)
    assert cfg == Config(total_steps=640, batch_size=32, net="16,8", players=3, eval_every=320, snapshot_every=192)
    with pytest.warns(DeprecationWarning, match="is now .total_steps"):
        assert cfg.total_frames == 640
    with pytest.warns(DeprecationWarning, match="opponent_weights"):
        assert Config(opponents=("random", "racko:bucket"), opponent_weights=(1, 3)).opponents \
            == "random=1.0,racko:bucket=3.0"
    with pytest.warns(DeprecationWarning, match="'minibatch'"):
        assert parse_args(["--minibatch", "64", "--total-frames", "9"]) == Config(batch_size=64, total_steps=9)
    with pytest.raises(ValueError, match="same option"), pytest.warns(DeprecationWarning):
        Config(pi=(16,), vf=(8,))


def test_old_train_args_names_work_and_old_configs_resume(tmp_path):
    from deckgym.training.args import resume_settings

    with pytest.warns(DeprecationWarning, match="'no_features'"):
        args = TrainArgs(no_features=True)
    assert args.features is False
    with pytest.warns(DeprecationWarning):
        assert args.no_features is True
    assert build_parser().parse_args(["racko", "--no-features"]).features is False
    # a config.json written before the rename still resumes, its setting under the new name
    run = tmp_path / "run"
    run.mkdir()
    (run / "expert_state.json").write_text("{}")
    (run / "config.json").write_text(json.dumps({"game": "racko", "expert": "racko:bucket", "no_features": True}))
    args = TrainArgs(resume=str(run), expert="racko:bucket")
    resume_settings(args)
    assert args.features is False


def test_a_games_descriptor_has_one_name_and_the_old_one_still_works():
    entry = game("racko")
    with pytest.warns(DeprecationWarning, match="GameEntry.descriptor"):
        assert entry.spec is entry.descriptor
    assert entry.descriptor.name == "racko"
