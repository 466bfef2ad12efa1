"""The policy file format (deckgym.agents.policy_file): save/load, checks, the rebuilt network, the shipped models."""

from __future__ import annotations

import copy
import json
import struct

import numpy as np
import pytest

from deckgym.agents.policy_file import (ModelMismatchError, PolicyAgent, load_policy, policy_meta, read_meta,
                                        save_policy)
from deckgym.agents.registry import make_agent
from tests.conftest import make_core, torch_threads
from tests.float_bounds import U64, decisive_rows, logit_tolerance

torch = pytest.importorskip("torch")
torch.set_num_threads(torch_threads())
SHIPPED = [("racko_2p", "racko", 2), ("racko_4p", "racko", 4), ("leastscore_4p", "leastscore", 4),
           ("racko_2p_rllib", "racko", 2)]


def shipped_states(game, players, B=32, steps=60, every=6, seed=7):
    """Observations and masks of uniformly random play, every ``every`` steps (the golden states)."""
    core = make_core(game, players)
    st = core.init(B, seed=seed)
    rng = np.random.default_rng(seed)
    obs, masks = [], []
    for t in range(steps):
        cp = core.current_player(st)
        m = core.legal_action_mask(st)
        if t % every == 0:
            obs.append(core.observe(st, cp))
            masks.append(m.copy())
        res = core.step(st, core.sample_legal(m, rng))
        core.reset_where(st, res.terminated | res.truncated)
    return core, np.concatenate(obs), np.concatenate(masks).astype(bool)


def tiny_policy(core, game="racko", hidden=(8,), features=None, vf=True, seed=0, obs="default"):
    """Random tensors of an MLP for ``core`` and their metadata."""
    rng = np.random.default_rng(seed)
    meta = policy_meta(core, game, "torchrl", {"type": "mlp", "pi": list(hidden), "vf": list(hidden) if vf else [],
                                               "activation": "relu"}, features, obs=obs)
    n_in = meta["obs_size"] + meta["num_features"]
    tensors = {}
    for head in ("pi", "vf") if vf else ("pi",):
        width = n_in
        sizes = list(hidden) + [core.num_actions if head == "pi" else 1]
        names = [f"{head}.{i}" for i in range(len(hidden))] + [f"{head}.out"]
        for name, out in zip(names, sizes):
            tensors[f"{name}.weight"] = rng.normal(size=(out, width)).astype(np.float32)
            tensors[f"{name}.bias"] = rng.normal(size=out).astype(np.float32)
            width = out
    return tensors, meta


NEAR_TIE_SHARE = 0.02  # of the golden states: more near-ties than this means the bound is too loose to test much


def _pi_layers(agent):
    return [(w.numpy(), b.numpy()) for w, b in agent.net.heads["pi"]]


@pytest.mark.parametrize("key,game,players", SHIPPED)
def test_shipped_policies_play_as_the_models_they_were_converted_from(key, game, players):
    """tests/data/shipped_policies_golden.npz holds what the SB3 zips and the RLlib checkpoint
    played on these states (argmax, seeded samples) and their logits, computed on another
    processor. Here the policy files give logits within the float32 bound of tests/float_bounds.py
    (another BLAS kernel sums in another order), and the same moves wherever the best logit leads
    the others by more than that bound; near-ties are counted and must stay rare."""
    golden = np.load("tests/data/shipped_policies_golden.npz")
    core, obs, masks = shipped_states(game, players)
    agent = make_agent(f"ppo:models/{key}.safetensors", core, game=game)
    assert agent.meta["engine"] == ("rllib" if key.endswith("rllib") else "sb3")
    logits = agent.logits(obs)
    tol = logit_tolerance(_pi_layers(agent), agent.inputs(obs), agent.meta["arch"]["activation"])
    want = golden[f"{key}/logits"]
    if key.endswith("rllib"):  # the RLlib module masked its logits itself
        logits, tol = np.where(masks, logits, 0), np.where(masks, tol, 0)
    np.testing.assert_array_less(np.abs(logits - want), tol + np.finfo(np.float32).tiny)
    assert np.median(tol) < 1e-3  # the bound is tight enough to catch a wrong weight or input

    sure = decisive_rows(want, tol, masks)
    assert (~sure).mean() <= NEAR_TIE_SHARE, f"{(~sure).sum()} near-ties of {len(sure)}"
    np.testing.assert_array_equal(agent.act(obs, masks)[sure], golden[f"{key}/actions"][sure])

    sampler = make_agent(f"ppo:models/{key}.safetensors?deterministic=false", core, seed=5, game=game)
    noise = copy.deepcopy(sampler.rng).gumbel(size=want.shape)  # the sampler's Gumbel-max draw
    sure = decisive_rows(want + noise, tol + 4 * U64 * np.abs(noise), masks)
    assert (~sure).mean() <= NEAR_TIE_SHARE, f"{(~sure).sum()} near-ties of {len(sure)}"
    np.testing.assert_array_equal(sampler.act(obs, masks)[sure], golden[f"{key}/sampled"][sure])


def test_the_float_bound_holds_between_two_kernels_and_catches_a_changed_weight():
    """torch (MKL) and numpy (OpenBLAS) sum the same float32 layers in different orders: they
    differ, but within the bound; one weight changed by 1e-3 breaks it."""
    core, obs, masks = shipped_states("racko", 2, B=8)
    agent = make_agent("ppo:models/racko_2p.safetensors", core, game="racko")
    layers, x = _pi_layers(agent), agent.inputs(obs).astype(np.float32)
    tol = logit_tolerance(layers, x, "tanh")

    def by_numpy(layers):
        h = x
        for w, b in layers[:-1]:
            h = np.tanh(h @ w.T + b)
        return h @ layers[-1][0].T + layers[-1][1]

    np.testing.assert_array_less(np.abs(by_numpy(layers) - agent.logits(obs)), tol + np.finfo(np.float32).tiny)
    bent = [(w.copy(), b) for w, b in layers]
    bent[0][0][0, :] += 1e-3
    assert (np.abs(by_numpy(bent) - agent.logits(obs)) > tol).any()


def test_shipped_files_hold_the_agreed_metadata():
    for key, game, players in SHIPPED:
        meta = read_meta(f"models/{key}.safetensors")
        assert meta["format"] == "deckgym-policy" and meta["format_version"] == 1
        assert meta["game"] == game and meta["num_players"] == players and meta["features"] == 3
        assert meta["obs"] == "default" and meta["episode"] == "round" and meta["reward"] == "win"
        assert meta["arch"] == {"type": "mlp", "pi": [256, 256], "vf": [256, 256], "activation": "tanh"}
        assert "train_config" in meta and "arena" in meta
        from safetensors.numpy import load_file  # the file is plain safetensors: any reader opens it

        assert set(load_file(f"models/{key}.safetensors")) == {
            f"{h}.{n}.{k}" for h in ("pi", "vf") for n in ("0", "1", "out") for k in ("weight", "bias")}


def test_save_load_round_trip_and_forward_by_hand(tmp_path):
    core = make_core("racko", 2)
    tensors, meta = tiny_policy(core, hidden=(8, 4))
    path = save_policy(str(tmp_path / "p"), tensors, {**meta, "note": "hello"})
    assert path.endswith(".safetensors")
    got, m = load_policy(path)
    assert m["note"] == "hello" and m["engine"] == "torchrl"
    for k in tensors:
        np.testing.assert_array_equal(got[k], tensors[k])
    st = core.init(16, 2)
    obs, masks = core.observe(st, core.current_player(st)), core.legal_action_mask(st)
    relu = lambda x: np.maximum(x, 0)  # noqa: E731
    h = relu(obs @ tensors["pi.0.weight"].T + tensors["pi.0.bias"])
    h = relu(h @ tensors["pi.1.weight"].T + tensors["pi.1.bias"])
    want = h @ tensors["pi.out.weight"].T + tensors["pi.out.bias"]
    agent = PolicyAgent(core, path=path)
    tol = logit_tolerance([(tensors[f"pi.{n}.weight"], tensors[f"pi.{n}.bias"]) for n in ("0", "1", "out")], obs, "relu")
    np.testing.assert_array_less(np.abs(agent.logits(obs) - want), tol + np.finfo(np.float32).tiny)
    np.testing.assert_array_equal(agent.act(obs, masks), np.argmax(np.where(masks, agent.logits(obs), -np.inf), 1))
    assert agent.net.values(obs).shape == (16,)


def test_save_refuses_tensors_that_do_not_fit_the_arch(tmp_path):
    core = make_core("racko", 2)
    tensors, meta = tiny_policy(core)
    bad = dict(tensors, **{"pi.0.weight": tensors["pi.0.weight"][:-1]})
    with pytest.raises(ValueError, match="pi.0 has shapes"):
        save_policy(str(tmp_path / "a"), bad, meta)
    narrow = dict(tensors, **{"pi.0.weight": tensors["pi.0.weight"][:, :-1]})
    with pytest.raises(ValueError, match="takes 111 inputs, the metadata says obs_size 112"):
        save_policy(str(tmp_path / "a2"), narrow, meta)
    with pytest.raises(ValueError, match="missing"):
        save_policy(str(tmp_path / "b"), {k: v for k, v in tensors.items() if k != "pi.out.bias"}, meta)
    with pytest.raises(ValueError, match="activation"):
        save_policy(str(tmp_path / "c"), tensors, {**meta, "arch": {**meta["arch"], "activation": "gelu"}})
    with pytest.raises(ValueError, match="engine"):
        policy_meta(core, "racko", "tf", meta["arch"], None)
    assert not list(tmp_path.iterdir())  # nothing written


def test_mismatch_and_damage_are_one_line_errors(tmp_path):
    core = make_core("racko", 2)
    tensors, meta = tiny_policy(core, features=3)
    path = save_policy(str(tmp_path / "p.safetensors"), tensors, meta)
    with pytest.raises(ModelMismatchError, match="rules.*num_players"):
        PolicyAgent(make_core("racko", 3), path=path)
    with pytest.raises(ModelMismatchError, match="game"):
        PolicyAgent(make_core("leastscore", 4), path=path, game="leastscore")
    with pytest.raises(ModelMismatchError, match="features version 99"):
        PolicyAgent(core, tensors=tensors, meta={**meta, "features": 99})
    newer = save_policy(str(tmp_path / "v2.safetensors"), tensors, meta)
    data = bytearray(open(newer, "rb").read())
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    header["__metadata__"]["deckgym"] = header["__metadata__"]["deckgym"].replace('"format_version": 1', '"format_version": 2')
    body = json.dumps(header).encode()
    open(newer, "wb").write(struct.pack("<Q", len(body)) + body + bytes(data[8 + n:]))
    with pytest.raises(ValueError, match="format_version 2"):
        read_meta(newer)
    huge = tmp_path / "huge.safetensors"
    huge.write_bytes(struct.pack("<Q", 2**62) + b"{}")
    with pytest.raises(ValueError, match="not a deckgym policy file"):
        read_meta(str(huge))


def test_the_agreed_keys_are_enough_and_the_input_width_is_checked_against_the_game(tmp_path):
    """A writer that records only the agreed keys (no num_features) loads; a network whose input
    is not the observation plus that features version is refused with both sizes."""
    core = make_core("racko", 2)
    tensors, meta = tiny_policy(core, features=3)
    del meta["num_features"], meta["rules_repr"]
    path = save_policy(str(tmp_path / "agreed.safetensors"), tensors, meta)
    agent = make_agent(f"ppo:{path}", core, game="racko")
    st = core.init(8, 1)
    masks = core.legal_action_mask(st)
    assert masks[np.arange(8), agent.act(core.observe(st, 0), masks)].all()
    with pytest.raises(ModelMismatchError, match=r"takes 206 inputs.*features version 1 .* are 180"):
        PolicyAgent(core, path=save_policy(str(tmp_path / "v1.safetensors"), tensors, {**meta, "features": 1}))


def test_infostate_policy_asks_for_information_states(tmp_path):
    """A policy trained on information states (a TorchRL policy, say) is fed them by the arena."""
    from deckgym.agents.registry import acts_on_infostates
    from deckgym.evaluation.arena import evaluate
    from deckgym.playout import infostate_core

    core = make_core("racko", 2)
    tensors, meta = tiny_policy(core, obs="infostate")
    assert meta["obs_size"] == infostate_core(core).obs_size != core.obs_size
    path = save_policy(str(tmp_path / "info.safetensors"), tensors, meta)
    assert acts_on_infostates(f"ppo:{path}") and not acts_on_infostates("ppo:models/racko_2p.safetensors")
    agent = make_agent(f"ppo:{path}", core, game="racko")
    assert agent.observation == "infostate"
    rep = evaluate("racko", [f"ppo:{path}", "random"], deals=4, seed=0)  # raises on an illegal action
    assert rep.agents[0].games == 8
    with pytest.raises(ModelMismatchError, match="default observation"):
        PolicyAgent(core, tensors=tensors, meta={**meta, "features": 3})


def test_sb3_export_import_round_trip(tmp_path):
    """A MaskablePPO policy → policy file → a fresh MaskablePPO (--init): the same network."""
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO

    from deckgym.agents.ppo import model_metadata, rebuild_model, save_model
    from deckgym.training.vec_env import CoreVecEnv

    env = CoreVecEnv("racko", num_envs=4, opponents=["random"], features=True, seed=0)
    model = MaskablePPO("MlpPolicy", env, n_steps=8, batch_size=16, seed=0, device="cpu",
                        policy_kwargs={"net_arch": {"pi": [16, 8], "vf": [12]}})
    path = save_model(model, str(tmp_path / "m"), model_metadata(env.core, "racko", features=True))
    assert read_meta(path)["arch"] == {"type": "mlp", "pi": [16, 8], "vf": [12], "activation": "tanh"}
    again = rebuild_model(path, env, where="test", n_steps=8, batch_size=16, seed=1)
    for (k, a), (k2, b) in zip(model.policy.state_dict().items(), again.policy.state_dict().items()):
        assert k == k2
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    obs = env.reset()
    masks = env.action_masks()
    agent = PolicyAgent(env.core, path=path)
    pred, _ = model.predict(obs, action_masks=masks, deterministic=True)
    np.testing.assert_array_equal(agent.act(obs[:, :env.core.obs_size], masks), pred)
