"""Model files from strangers: payloads that would run when unpickled never run, through every entry point.

Each payload creates a marker file when it is unpickled (``open(marker, "w")``, no shell). The
tests feed it to everything that reads a model: the ``ppo:``/``rllib:`` specs in ``deckgym eval``
and ``deckgym play``, ``train --init``, expert iteration's ``--resume`` (its network and its data
set), ``deckgym convert``, the demo's lineup; with and without the user's switch. Without the
switch the file is refused in one line naming the risk and the switch; with it, the weights are
read without running anything in the file (the marker still never appears).
"""

from __future__ import annotations

import base64
import io
import json
import os
import pickle
import shutil
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

from deckgym.agents.policy_file import PickleRefused
from deckgym.agents.registry import make_agent
from deckgym.cli import main as cli
from tests.conftest import make_core, torch_threads

torch = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")
torch.set_num_threads(torch_threads())


class Payload:
    """Unpickled, it creates ``marker`` (what a real attack would do with os.system)."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def payload_bytes(marker) -> bytes:
    data = pickle.dumps(Payload(str(marker)))
    pickle.loads(data).close()  # the payload is real: it does create the marker when unpickled
    assert os.path.exists(marker)
    os.remove(marker)
    return data


@pytest.fixture(scope="module")
def sb3_zip(tmp_path_factory):
    """A MaskablePPO zip as SB3 writes it (with deckgym's former metadata member)."""
    from sb3_contrib import MaskablePPO

    from deckgym.agents.ppo import model_metadata
    from deckgym.training.vec_env import CoreVecEnv

    env = CoreVecEnv("racko", num_envs=4, opponents=["random"], features=True, seed=0)
    model = MaskablePPO("MlpPolicy", env, n_steps=8, batch_size=16, seed=0, device="cpu",
                        policy_kwargs={"net_arch": [16]})
    path = str(tmp_path_factory.mktemp("sb3") / "clean.zip")
    model.save(path)
    old = {**model_metadata(env.core, "racko", features=True), "format": "deckgym-ppo", "features": True,
           "features_version": 3}
    del old["arch"], old["engine"]
    with zipfile.ZipFile(path, "a") as zf:
        zf.writestr("deckgym_meta.json", json.dumps(old))
    return path


def evil_zip(clean: str, out, marker, where: str = "data") -> str:
    """``clean`` with a payload: a ``:serialized:`` entry in ``data`` (SB3 cloudpickle-loads every
    one), or the pickle in ``policy.pth`` replaced by the payload."""
    with zipfile.ZipFile(clean) as src, zipfile.ZipFile(out, "w") as dst:
        for item in src.infolist():
            body = src.read(item.filename)
            if item.filename == "data" and where == "data":
                data = json.loads(body)
                data["evil"] = {":type:": "<class 'function'>",
                                ":serialized:": base64.b64encode(payload_bytes(marker)).decode()}
                body = json.dumps(data).encode()
            if item.filename == "policy.pth" and where == "policy.pth":
                buf = io.BytesIO()
                torch.save({"x": Payload(str(marker))}, buf)
                body = buf.getvalue()
            dst.writestr(item, body)
    return str(out)


def rllib_folder(folder, marker, evil_state: bool = False) -> str:
    """An RLlib module checkpoint whose class_and_ctor_args.pkl (what RLModule.from_checkpoint
    unpickles first) is a payload; its module_state.pkl holds plain weights, or a payload too."""
    core = make_core("racko", 2)
    rng = np.random.default_rng(0)
    n_in, n_act = core.obs_size, core.num_actions
    state = OrderedDict()
    for enc, head, out in (("actor", "pi", n_act), ("critic", "vf", 1)):
        state[f"encoder.{enc}_encoder.net.mlp.0.weight"] = rng.normal(size=(8, n_in)).astype(np.float32)
        state[f"encoder.{enc}_encoder.net.mlp.0.bias"] = rng.normal(size=8).astype(np.float32)
        state[f"{head}.net.mlp.0.weight"] = rng.normal(size=(out, 8)).astype(np.float32)
        state[f"{head}.net.mlp.0.bias"] = rng.normal(size=out).astype(np.float32)
    os.makedirs(folder)
    (folder / "class_and_ctor_args.pkl").write_bytes(payload_bytes(marker))
    state_bytes = pickle.dumps(state) if not evil_state else payload_bytes(marker)
    (folder / "module_state.pkl").write_bytes(state_bytes)
    (folder / "metadata.json").write_text(json.dumps({"class_and_ctor_args_file": "class_and_ctor_args.pkl",
                                                      "state_file": "module_state", "checkpoint_version": "2.1"}))
    from deckgym.agents.rllib_agent import model_metadata_rllib

    old = {**model_metadata_rllib(core, "racko", features=False), "format": "deckgym-rllib", "features": False,
           "features_version": None}
    del old["arch"]
    (folder / "deckgym_meta.json").write_text(json.dumps(old))
    return str(folder)


def test_eval_refuses_an_sb3_zip_with_a_payload_in_data(sb3_zip, tmp_path, capsys):
    """The issue's attack: `deckgym eval racko ppo:evil.zip random --games 2`."""
    marker = tmp_path / "marker"
    evil = evil_zip(sb3_zip, tmp_path / "evil.zip", marker)
    assert cli(["eval", "racko", f"ppo:{evil}", "random", "--games", "2", "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "runs any code" in err and f"ppo:{evil}?allow_pickle=true" in err and "deckgym convert" in err
    assert cli(["play", "racko", "--vs", f"ppo:{evil}", "--seed", "1"]) == 2
    assert not marker.exists()


def test_the_switch_reads_the_weights_without_running_the_payload(sb3_zip, tmp_path, capsys):
    marker = tmp_path / "marker"
    evil = evil_zip(sb3_zip, tmp_path / "evil.zip", marker)
    assert cli(["eval", "racko", f"ppo:{evil}?allow_pickle=true", "random", "--games", "2", "--quiet"]) == 0
    assert "win rate" in capsys.readouterr().out
    assert not marker.exists()  # data is read as JSON: its ':serialized:' entries stay text
    # a payload in policy.pth: torch.load(weights_only=True) refuses it even with the switch
    evil_pth = evil_zip(sb3_zip, tmp_path / "evil_pth.zip", marker, where="policy.pth")
    with pytest.raises(ValueError, match="policy.pth holds more than tensors"):
        make_agent(f"ppo:{evil_pth}?allow_pickle=true", make_core("racko", 2), game="racko")
    assert not marker.exists()


def test_convert_needs_the_switch_and_runs_nothing(sb3_zip, tmp_path, capsys):
    marker = tmp_path / "marker"
    evil = evil_zip(sb3_zip, tmp_path / "evil.zip", marker)
    assert cli(["convert", evil]) == 2
    assert "--allow-pickle" in capsys.readouterr().err and not (tmp_path / "evil.safetensors").exists()
    assert cli(["convert", evil, "--allow-pickle"]) == 0
    out = tmp_path / "evil.safetensors"
    assert out.exists() and not marker.exists()
    core = make_core("racko", 2)
    st = core.init(8, 0)
    obs, masks = core.observe(st, core.current_player(st)), core.legal_action_mask(st)
    a = make_agent(f"ppo:{out}", core, game="racko").act(obs, masks)
    b = make_agent(f"ppo:{sb3_zip}?allow_pickle=true", core, game="racko").act(obs, masks)
    np.testing.assert_array_equal(a, b)


def test_rllib_folder_with_a_payload_in_class_and_ctor_args(tmp_path, capsys):
    marker = tmp_path / "marker"
    folder = rllib_folder(tmp_path / "evil_rllib", marker)
    core = make_core("racko", 2)
    assert cli(["eval", "racko", f"rllib:{folder}", "random", "--games", "2", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "RLlib checkpoint" in err and "allow_pickle=true" in err
    for spec in (f"ppo:{folder}", f"rllib:{folder}"):
        with pytest.raises(PickleRefused):
            make_agent(spec, core, game="racko")
    agent = make_agent(f"rllib:{folder}?allow_pickle=true", core, game="racko")  # weights only
    assert agent.meta["engine"] == "rllib" and agent.meta["arch"]["pi"] == [8]
    assert cli(["convert", folder, "--allow-pickle", "--out", str(tmp_path / "r.safetensors")]) == 0
    assert not marker.exists()
    # a payload in module_state.pkl: the arrays-only unpickler refuses it, with the switch too
    bad = rllib_folder(tmp_path / "evil_state", marker, evil_state=True)
    with pytest.raises(ValueError, match="refused global"):
        make_agent(f"rllib:{bad}?allow_pickle=true", core, game="racko")
    assert not marker.exists()


def _train_args(tmp_path, *extra):
    return ["racko", "--players", "2", "--total-steps", "64", "--num-envs", "4", "--n-steps", "16",
            "--batch-size", "32", "--epochs", "1", "--net", "16", "--opponents", "random=1", "--eval-every", "64",
            "--eval-deals", "2", "--eval-against", "random", "--final-deals", "0", "--runs", str(tmp_path / "runs"),
            "--quiet", "--seed", "1", *extra]


def test_train_init_refuses_a_pickled_model_before_any_work(sb3_zip, tmp_path, capsys):
    marker = tmp_path / "marker"
    evil = evil_zip(sb3_zip, tmp_path / "evil.zip", marker)
    assert cli(["train", *_train_args(tmp_path, "--init", evil)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("deckgym train: error: --init: ") and f"deckgym convert {evil} --allow-pickle" in err
    assert not marker.exists() and not (tmp_path / "runs").exists()


def test_expert_resume_refuses_pickled_state(tmp_path, capsys):
    """--resume of a run folder whose network is an SB3 zip (the former format) or whose data set
    holds object arrays: refused, the payload never runs."""
    from deckgym.training import train

    marker = tmp_path / "marker"
    args = _train_args(tmp_path, "--expert", "racko:bucket", "--expert-iterations", "1", "--expert-samples", "32",
                       "--expert-epochs", "1", "--expert-buffer", "64", "--run-name", "ex")
    train.main(args)
    run = tmp_path / "runs" / "ex"
    assert (run / "expert_model.safetensors").exists() and not list(run.rglob("*.zip"))
    resume = ["racko", "--expert", "racko:bucket", "--resume", str(run), "--expert-iterations", "2"]
    # the data set: an object array holding the payload (np.load refuses object arrays)
    shutil.copy(run / "expert_data.npz", tmp_path / "good.npz")
    with np.load(tmp_path / "good.npz") as z:
        arrays = dict(z)
    arrays["obs"] = np.array([Payload(str(marker))], dtype=object)
    np.savez(run / "expert_data.npz", **arrays)
    assert cli(["train", *resume]) == 2
    assert "not a data set of plain arrays" in capsys.readouterr().err and not marker.exists()
    # the former model format, with a payload
    shutil.copy(tmp_path / "good.npz", run / "expert_data.npz")
    os.remove(run / "expert_model.safetensors")
    with zipfile.ZipFile(run / "expert_model.zip", "w") as zf:
        zf.writestr("data", json.dumps({"evil": {":serialized:": base64.b64encode(payload_bytes(marker)).decode()}}))
        zf.writestr("policy.pth", payload_bytes(marker))
    assert cli(["train", *resume]) == 2
    err = capsys.readouterr().err
    assert "expert_model.zip" in err and "--allow-pickle" in err and not marker.exists()


def test_the_demo_lineup_takes_policy_files_only(sb3_zip, tmp_path):
    from deckgym.evaluation.demo import lineup

    marker = tmp_path / "marker"
    evil_zip(sb3_zip, tmp_path / "racko_2p_evil.zip", marker)
    rllib_folder(tmp_path / "racko_2p_evil_rllib", marker)
    shutil.copy("models/racko_2p.safetensors", tmp_path / "racko_2p.safetensors")
    models = [s for s in lineup("racko", 2, str(tmp_path)) if s.startswith(("ppo:", "rllib:"))]
    assert models == [f"ppo:{tmp_path / 'racko_2p.safetensors'}"]
    assert not marker.exists()


def test_no_pickled_file_is_shipped():
    from deckgym.agents.policy_file import pickled_kind

    shipped = [os.path.join(d, f) for d, _, files in os.walk("models") for f in files]
    assert shipped and not [p for p in shipped if pickled_kind(p)]
    assert not [d for d, _, _ in os.walk("models") if d != "models"]


def test_pickles_under_other_names_are_refused(tmp_path):
    """A payload renamed .safetensors is not a policy file (its header is checked, never
    unpickled); a torch.save file or a bare pickle is refused as a pickle, with the switch too."""
    marker = tmp_path / "marker"
    core = make_core("racko", 2)
    renamed = tmp_path / "evil.safetensors"
    renamed.write_bytes(payload_bytes(marker))
    with pytest.raises(ValueError, match="not a deckgym policy file"):
        make_agent(f"ppo:{renamed}", core, game="racko")
    saved = tmp_path / "evil.pt"
    torch.save({"x": Payload(str(marker))}, saved)
    bare = tmp_path / "evil.bin"
    bare.write_bytes(payload_bytes(marker))
    for path in (saved, bare):
        with pytest.raises(PickleRefused, match="allow_pickle=true"):
            make_agent(f"ppo:{path}", core, game="racko")
        with pytest.raises(ValueError, match="neither an SB3 model zip nor an RLlib model folder|not an SB3 model zip"):
            make_agent(f"ppo:{path}?allow_pickle=true", core, game="racko")
    assert not marker.exists()
