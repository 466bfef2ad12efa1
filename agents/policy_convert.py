"""Engine networks to policy files and back; pickled models converted only on the user's word.

Export: :func:`sb3_export` (a ``MaskablePPO`` policy) and :func:`rllib_export` (an RLlib
``MaskedPPOModule``'s state) give the tensors and ``arch`` of the policy file format
(``deckgym.agents.policy_file``). Import: :func:`sb3_import` loads a policy file's weights
into a freshly built ``MaskablePPO`` policy (``deckgym train --init``, expert iteration's
``--resume``).

How each engine's network maps onto ``arch = {"type": "mlp", "pi", "vf", "activation"}``:

- SB3 ``MlpPolicy`` (separate ``net_arch`` ``pi``/``vf``, no shared layers):
  ``mlp_extractor.policy_net.{2i}`` → ``pi.{i}``, ``action_net`` → ``pi.out``,
  ``mlp_extractor.value_net.{2i}`` → ``vf.{i}``, ``value_net`` → ``vf.out``.
- RLlib ``DefaultPPOTorchRLModule`` with ``vf_share_layers=False`` and no hidden head layers:
  ``encoder.actor_encoder.net.mlp.{2i}`` → ``pi.{i}``, ``pi.net.mlp.0`` → ``pi.out``, and the
  critic encoder and ``vf`` likewise. A shared encoder or hidden head layers are refused
  by name (the format has no ``arch.type`` for them yet).

**Trusted conversion** (:func:`read_trusted`, ``deckgym convert PATH --allow-pickle``, the
spec switch ``?allow_pickle=true``): reached only after the user accepted the file.
Even then nothing in the file is called: an SB3 zip's ``data`` is read as JSON (never
deserialised) and its ``policy.pth`` with ``torch.load(weights_only=True)`` (tensors only);
an RLlib folder's ``module_state.pkl`` is unpickled with an unpickler that builds only
dicts and numpy arrays, and ``class_and_ctor_args.pkl`` is not read: the architecture is
read from the weights' shapes (activation tanh, what deckgym's RLlib engine builds). A zip
without deckgym's metadata (plain SB3) needs the core it is meant for: its observation
size must be the core's, alone or with one derived-features version.
"""

from __future__ import annotations

import io
import os
import pickle
import re
import zipfile
from typing import Any

import numpy as np

from deckgym import strict_json
from deckgym.agents.policy_file import (SUFFIX, ModelMismatchError, features_module, layer_names, pickled_kind,
                                         policy_meta, save_policy)

META_NAME = "deckgym_meta.json"  # the metadata member of the former SB3 zips and RLlib folders
ACT_NAMES = {"Tanh": "tanh", "ReLU": "relu"}


# -- SB3 ----------------------------------------------------------------------------------------------

def _sb3_map(arch: dict[str, Any]) -> dict[str, str]:
    """policy-file layer prefix → SB3 module prefix."""
    out = {}
    for head, net, last in (("pi", "policy_net", "action_net"), ("vf", "value_net", "value_net")):
        names = layer_names(arch, head)
        for i, name in enumerate(names[:-1]):
            out[name] = f"mlp_extractor.{net}.{2 * i}"
        out[names[-1]] = last
    return out


def sb3_arch(policy: Any) -> dict[str, Any]:
    """The ``arch`` of a MaskablePPO ``MlpPolicy`` (``ValueError`` for what the format cannot hold)."""
    net_arch = policy.net_arch
    if isinstance(net_arch, list):
        net_arch = {"pi": net_arch, "vf": net_arch}
    act = ACT_NAMES.get(getattr(policy.activation_fn, "__name__", ""))
    extractors = {policy.features_extractor, getattr(policy, "pi_features_extractor", None),
                  getattr(policy, "vf_features_extractor", None)} - {None}
    if act is None or not isinstance(net_arch, dict) or any(list(e.parameters()) for e in extractors):
        raise ValueError(f"this SB3 policy ({policy.activation_fn}, net_arch {policy.net_arch}) has no policy-file "
                         f"arch: an MLP with {' or '.join(ACT_NAMES)} and separate pi/vf layers")
    return {"type": "mlp", "pi": [int(h) for h in net_arch.get("pi", [])], "vf": [int(h) for h in net_arch.get("vf", [])],
            "activation": act}


def sb3_export(policy: Any) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The tensors and ``arch`` of a MaskablePPO policy (copies; the policy is not changed)."""
    arch = sb3_arch(policy)
    state = policy.state_dict()
    tensors = {}
    for name, src in _sb3_map(arch).items():
        for k in ("weight", "bias"):
            tensors[f"{name}.{k}"] = state[f"{src}.{k}"].detach().cpu().numpy().astype(np.float32, copy=True)
    return tensors, arch


def sb3_import(policy: Any, tensors: dict[str, np.ndarray], where: str) -> None:
    """Load a policy file's tensors into a MaskablePPO policy built with the same ``arch``."""
    import torch

    arch = sb3_arch(policy)
    if "vf.out.weight" not in tensors:
        raise ValueError(f"{where} has no value head (vf.*): PPO cannot continue from it")
    state = {f"{src}.{k}": torch.as_tensor(tensors[f"{name}.{k}"])
             for name, src in _sb3_map(arch).items() for k in ("weight", "bias")}
    try:
        policy.load_state_dict(state, strict=True)
    except RuntimeError as exc:
        raise ValueError(f"{where}: its layers do not fit the network built for it ({str(exc).splitlines()[0]})") from None


# -- RLlib --------------------------------------------------------------------------------------------

def rllib_export(state: dict[str, Any], activation: str = "tanh") -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The tensors and ``arch`` of a ``MaskedPPOModule`` state dict (numpy or torch values)."""
    def linear(prefix: str) -> list[tuple[int, str]]:
        pat = re.compile(re.escape(prefix) + r"\.(\d+)\.weight$")
        return sorted((int(m.group(1)), k[:-len(".weight")]) for k in state for m in [pat.match(k)] if m)

    def arr(key: str) -> np.ndarray:
        v = state[key]
        return np.array(v.detach().cpu().numpy() if hasattr(v, "detach") else v, dtype=np.float32)

    if any(k.startswith("encoder.encoder.") for k in state):
        raise ValueError("this RLlib module shares its encoder between policy and value (vf_share_layers=True): "
                         "the policy file format has no arch for it")
    tensors: dict[str, np.ndarray] = {}
    arch: dict[str, Any] = {"type": "mlp", "activation": activation}
    for head, enc in (("pi", "encoder.actor_encoder.net.mlp"), ("vf", "encoder.critic_encoder.net.mlp")):
        hidden, out = linear(enc), linear(f"{head}.net.mlp")
        if len(out) != 1:
            raise ValueError(f"this RLlib module's {head} head has hidden layers ({len(out) - 1}): the policy file "
                             "format has no arch for them")
        arch[head] = [int(arr(f"{p}.weight").shape[0]) for _, p in hidden]
        for name, (_, p) in zip(layer_names(arch, head), hidden + out):
            tensors[f"{name}.weight"], tensors[f"{name}.bias"] = arr(f"{p}.weight"), arr(f"{p}.bias")
    return tensors, arch


class _ArraysOnly(pickle.Unpickler):
    """Builds dicts and numpy arrays only: any other global in the pickle is refused, not imported."""

    ALLOWED = {("collections", "OrderedDict"), ("numpy", "dtype"), ("numpy", "ndarray"),
               ("numpy._core.numeric", "_frombuffer"), ("numpy.core.numeric", "_frombuffer"),
               ("numpy._core.multiarray", "_reconstruct"), ("numpy.core.multiarray", "_reconstruct")}

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in self.ALLOWED:
            raise pickle.UnpicklingError(f"refused global {module}.{name} (only numpy arrays are read)")
        return super().find_class(module, name)


def _rllib_state(folder: str) -> dict[str, Any]:
    path = os.path.join(folder, "module_state.pkl")
    if not os.path.isfile(path):
        raise ValueError(f"{folder}: no module_state.pkl (not an RLlib module checkpoint)")
    with open(path, "rb") as f:
        try:
            state = _ArraysOnly(io.BytesIO(f.read())).load()
        except Exception as exc:
            raise ValueError(f"{path}: cannot read the weights ({type(exc).__name__}: {exc})") from None
    if not isinstance(state, dict):
        raise ValueError(f"{path}: not a module state (a {type(state).__name__})")
    return state


# -- trusted reading and conversion -------------------------------------------------------------------

def _read_sb3_zip(path: str) -> tuple[dict[str, np.ndarray], dict[str, Any], dict[str, Any] | None]:
    """Tensors, arch and deckgym metadata (None for a plain SB3 zip) of an SB3 model zip."""
    import torch

    with zipfile.ZipFile(path) as zf:
        names = set(zf.namelist())
        if not {"data", "policy.pth"} <= names:
            raise ValueError(f"{path}: not an SB3 model zip (no data and policy.pth members)")
        data = strict_json.loads(zf.read("data"), f"{path}: data")  # plain JSON: the ':serialized:' entries stay text
        meta = strict_json.loads(zf.read(META_NAME), f"{path}: {META_NAME}") if META_NAME in names else None
        try:  # tensors only: torch's restricted unpickler refuses any other object
            state = torch.load(io.BytesIO(zf.read("policy.pth")), map_location="cpu", weights_only=True)
        except Exception as exc:
            raise ValueError(f"{path}: policy.pth holds more than tensors, refused even with the switch "
                             f"({type(exc).__name__}: {str(exc).strip().splitlines()[-1][:200]})") from None
    kwargs = data.get("policy_kwargs", {})
    plain = {"net_arch", "ortho_init", "share_features_extractor", "normalize_images", "optimizer_kwargs"}
    if not isinstance(kwargs, dict) or ":serialized:" in kwargs or set(kwargs) - plain:
        raise ValueError(f"{path}: its policy_kwargs ({sorted(kwargs) if isinstance(kwargs, dict) else kwargs}) can "
                         "only be read by unpickling them; only MlpPolicy with net_arch (tanh) is converted")
    net_arch = kwargs.get("net_arch", {"pi": [64, 64], "vf": [64, 64]})  # SB3's default MlpPolicy
    if isinstance(net_arch, list):
        net_arch = {"pi": net_arch, "vf": net_arch}
    arch = {"type": "mlp", "pi": list(net_arch.get("pi", [])), "vf": list(net_arch.get("vf", [])), "activation": "tanh"}
    tensors = {}
    for name, src in _sb3_map(arch).items():
        for k in ("weight", "bias"):
            if f"{src}.{k}" not in state:
                raise ValueError(f"{path}: policy.pth lacks {src}.{k} (not a MaskablePPO MlpPolicy)")
            tensors[f"{name}.{k}"] = state[f"{src}.{k}"].numpy().astype(np.float32)
    return tensors, arch, meta


def _read_rllib(path: str) -> tuple[dict[str, np.ndarray], dict[str, Any], dict[str, Any] | None]:
    folder = path
    if not os.path.exists(os.path.join(folder, META_NAME)) and os.path.isdir(os.path.join(folder, "model")):
        folder = os.path.join(folder, "model")  # a run folder
    meta = None
    if os.path.exists(os.path.join(folder, META_NAME)):
        meta = strict_json.load_json(os.path.join(folder, META_NAME))
    tensors, arch = rllib_export(_rllib_state(folder))
    return tensors, arch, meta


def upgrade_meta(old: dict[str, Any], engine: str, arch: dict[str, Any]) -> dict[str, Any]:
    """The policy-file metadata of a former ``deckgym-ppo`` / ``deckgym-rllib`` model (same game fields,
    training config and arena results)."""
    cfg = old.get("train_config") or {}
    meta = {k: v for k, v in old.items() if k not in ("format", "format_version", "features", "features_version")}
    meta.update(format="deckgym-policy", format_version=1, engine=engine, arch=arch, obs="default",
                episode=old.get("episode", cfg.get("episode", "round")),
                reward=old.get("reward", cfg.get("reward", "win")),
                features=old.get("features_version") if old.get("features") else None,
                num_features=int(old.get("num_features") or 0))
    return meta


def assumed_meta(tensors: dict[str, np.ndarray], arch: dict[str, Any], core: Any, game: str, engine: str,
                 path: str) -> dict[str, Any]:
    """Metadata for a model with none (plain SB3): its sizes must fit ``core``, raw or with one
    derived-features version (the newest that fits); the core's rules are assumed."""
    size, n_act = tensors["pi.0.weight" if arch["pi"] else "pi.out.weight"].shape[1], tensors["pi.out.weight"].shape[0]
    if n_act != core.num_actions:
        raise ModelMismatchError(f"model {path} has {n_act} actions but {game} has {core.num_actions}")
    feature_set = features_module(game)
    versions = sorted(getattr(feature_set, "SUPPORTED_VERSIONS", (feature_set.FEATURES_VERSION,)), reverse=True)
    fitting = [v for v in versions if core.obs_size + feature_set.num_features(core, version=v) == size]
    if size != core.obs_size and not fitting:
        raise ModelMismatchError(f"model {path} takes observations of size {size}, but {game} with {core.rules!r} "
                                 f"gives {core.obs_size} (raw) or other sizes with derived features {versions}")
    features = None if size == core.obs_size else fitting[0]
    import warnings

    warnings.warn(f"model {path} has no {META_NAME} (saved by plain SB3?): assuming it was trained for {game} with "
                  f"{core.rules!r} and derived features {features}; save it with deckgym.agents.ppo.save_model to "
                  "record them", stacklevel=3)
    return policy_meta(core, game, engine, arch, features, assumed=True,
                       note=f"converted from {os.path.basename(path)} without metadata: rules assumed {core.rules!r}")


def read_trusted(path: str, core: Any = None, game: str | None = None) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Tensors and policy-file metadata of a pickled model the user accepted (see the module doc).

    ``core`` and ``game``: what a model without deckgym metadata (plain SB3) is assumed to be for."""
    if not os.path.exists(path):
        raise FileNotFoundError(f"model not found: {path}")
    if os.path.isdir(path):
        engine, (tensors, arch, old) = "rllib", _read_rllib(path)
    elif zipfile.is_zipfile(path):
        engine, (tensors, arch, old) = "sb3", _read_sb3_zip(path)
    else:
        raise ValueError(f"{path}: neither an SB3 model zip nor an RLlib model folder ({pickled_kind(path) or 'unknown'})")
    if old is not None:
        if old.get("format") not in ("deckgym-ppo", "deckgym-rllib"):
            raise ValueError(f"{path}: {META_NAME} has format {old.get('format')!r}, not a deckgym model")
        return tensors, upgrade_meta(old, engine, arch)
    if core is None or game is None:
        raise ValueError(f"{path} has no {META_NAME} (saved by plain SB3?): give the game it was trained for "
                         "(deckgym convert PATH --allow-pickle --game GAME --players N)")
    return tensors, assumed_meta(tensors, arch, core, game, engine, path)


def default_output(path: str) -> str:
    """``x.zip`` → ``x.safetensors``; a folder ``d/`` → ``d.safetensors`` beside it."""
    path = os.path.normpath(path)
    return (path[:-4] if path.endswith(".zip") else path) + SUFFIX


def convert(path: str, out: str | None = None, core: Any = None, game: str | None = None) -> str:
    """Convert the trusted pickled model ``path`` to the policy file ``out`` (default: beside it); returns it."""
    tensors, meta = read_trusted(path, core, game)
    if core is not None and game is not None:
        from deckgym.agents.policy_file import check_policy_meta

        check_policy_meta(meta, core, game, where=f"model {path}")
    return save_policy(out or default_output(path), tensors, meta)
