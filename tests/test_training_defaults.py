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
    spec = game(name).spec
    args, plan = _plan(name, tmp_path, engine)
    assert plan.pool == parse_pool(spec.train_opponents)
    assert plan.eval_against == list(spec.eval_against)
    assert args.features is (spec.features is not None)
    assert args.shaping == (1.0 if spec.features is not None else 0.0)


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

    spec = game(name).spec
    cfg = resolve(Config(game=name, num_envs=4))
    pool = parse_pool(spec.train_opponents)
    assert list(zip(cfg.opponents, cfg.opponent_weights)) == pool
    assert cfg.eval_against == spec.eval_against[0]
    assert cfg.features is (spec.features is not None)
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
