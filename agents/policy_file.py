"""The policy file: a trained network as weights and JSON, holding no code (spec ``ppo:PATH``).

A policy file is one ``.safetensors`` file (the ``safetensors`` format: a JSON header, then
raw little-endian arrays; reading it never unpickles anything). It is written by every
training engine (SB3 ``MaskablePPO``, the RLlib module, TorchRL) and played by
:class:`PolicyAgent` through the agent spec ``ppo:PATH.safetensors``, whichever engine
trained it.

**Metadata.** The header's ``__metadata__`` holds one key, ``"deckgym"``, whose value is a
JSON string with at least:

- ``format`` ``"deckgym-policy"``, ``format_version`` 1, ``engine`` (``"sb3"``, ``"rllib"``,
  ``"torchrl"``);
- ``game`` (``"racko"``, ``"leastscore"``), ``num_players``, ``rules`` (the rules dataclass's
  fields), ``episode``, ``reward``: what the network was trained for;
- ``obs`` (``"default"`` or ``"infostate"``), ``obs_version``, ``obs_size``: the core's
  observation the network reads; ``features``: the version of the derived features appended
  to it (``<game>_env/planning/features.py``), or ``null``; ``num_actions``;
- ``arch``: ``{"type": "mlp", "pi": [hidden sizes], "vf": [hidden sizes], "activation":
  "tanh" | "relu"}``;
- anything else the trainer records (``train_config``, ``arena``, ``steps``, ...).

A file is shared with its metadata, so :func:`save_policy` writes no path of the machine: an
absolute path becomes relative to the working folder, or ``.../NAME`` if it lies outside it
(``SECURITY.md`` lists what a shared file still tells).

**Tensors** (float32; a weight is ``(out_features, in_features)``, as ``torch.nn.Linear``):
``pi.{i}.weight``, ``pi.{i}.bias`` for the hidden layers ``i = 0, 1, ...`` and
``pi.out.weight``, ``pi.out.bias`` for the action logits; optionally the value head
``vf.{i}.*`` and ``vf.out.*``. The network's input is the core's observation (default or
information state) with the derived features of version ``features`` appended when that is
not null: ``logits = out(act(... act(W0 x + b0) ...))``. The logits are masked by the
legal actions before the argmax (or the sample).

:func:`save_policy` / :func:`load_policy` write and read the file, :func:`read_meta` reads
only the header, :func:`policy_meta` builds the metadata for a core, and
:func:`check_policy_meta` refuses a policy trained for another game, other rules, another
observation layout or features version, with an error naming the field.

**Pickles.** Files that would be unpickled to be read (an SB3 ``.zip``, an RLlib checkpoint
folder, a ``.pt``/``.pkl`` file) are refused with :class:`PickleRefused`, one line that names
the risk and the switch accepting that one file (``?allow_pickle=true`` after the spec, or
``deckgym convert PATH --allow-pickle``, see ``SECURITY.md``).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import struct
import zipfile
from typing import Any

import numpy as np

from deckgym import strict_json
from deckgym.agents.base import Agent, masked_softmax
from deckgym.extras import require_extra

FORMAT = "deckgym-policy"
FORMAT_VERSION = 1
META_KEY = "deckgym"
SUFFIX = ".safetensors"
ENGINES = ("sb3", "rllib", "torchrl")
ACTIVATIONS = ("tanh", "relu")
REQUIRED = ("format", "format_version", "engine", "game", "num_players", "rules", "episode", "reward", "obs",
            "obs_version", "obs_size", "features", "num_actions", "arch")
_MAX_HEADER = 100 * 2**20  # a header larger than this is not a policy file (the header is read whole)


class ModelMismatchError(ValueError):
    """The policy was trained for another game, rules, observation or features version."""


class PickleRefused(ValueError):
    """The file can only be read by unpickling it, and the user has not accepted that."""


# -- the metadata -----------------------------------------------------------------------------------

def _json_norm(x: Any) -> Any:
    return json.loads(json.dumps(x, default=str))


# an absolute path inside a metadata string: POSIX (after a space, a quote, ':' of a spec or '=' of
# a flag; not a URL's '//'), home-relative (~/), or a Windows drive path
_ABS_PATH = re.compile(r"""(?<![\w.~/-])(?:~/|[A-Za-z]:\\|/(?=[^/\s,?;'"=]))[^\s,?;'"=]*""")


def _portable_path(path: str, cwd: str) -> str:
    if path in ("/", "~"):
        return "..."
    full = os.path.expanduser(path)
    if os.path.isabs(full):
        rel = os.path.relpath(full, cwd)
        if not rel.startswith(os.pardir):
            return rel
    return ".../" + os.path.basename(full.rstrip("/\\").replace("\\", "/"))


def shareable(x: Any, cwd: str | None = None) -> Any:
    """``x`` (JSON values) with every absolute path in its strings made relative to ``cwd`` (the
    working folder), or ``.../NAME`` outside it: what a run needs to be repeated, not the machine."""
    cwd = os.path.abspath(cwd or os.getcwd())
    if isinstance(x, str):
        return _ABS_PATH.sub(lambda m: _portable_path(m.group(0), cwd), x)
    if isinstance(x, list):
        return [shareable(v, cwd) for v in x]
    if isinstance(x, dict):
        return {k: shareable(v, cwd) for k, v in x.items()}
    return x


def rules_dict(rules: Any) -> dict[str, Any]:
    """The rules dataclass's fields as JSON values (tuples become lists)."""
    if dataclasses.is_dataclass(rules) and not isinstance(rules, type):
        return _json_norm(dataclasses.asdict(rules))
    return {"repr": repr(rules)}


def game_of_core(core: Any) -> str:
    """The registered name of ``core``'s game (``racko``, ``leastscore``)."""
    from deckgym.registration import GAMES

    mod = type(core).__module__
    for name, entry in GAMES.items():
        if mod.startswith(entry.module + "."):
            return name
    raise ValueError(f"cannot tell the game of core {type(core).__name__}")


def features_module(game: str) -> Any:
    """The game's derived-features module (``<game>_env.planning.features``)."""
    from deckgym.registration import game as game_entry

    return game_entry(game).features()


def _obs_core(core: Any, obs: str) -> Any:
    """The core whose observation a policy reading ``obs`` sees (the information-state twin for ``infostate``)."""
    from deckgym.playout import infostate_core

    return infostate_core(core) if obs == "infostate" else core


def policy_meta(core: Any, game: str, engine: str, arch: dict[str, Any], features: int | None,
                obs: str = "default", **extra: Any) -> dict[str, Any]:
    """The metadata of a policy for ``core`` (see the module doc); ``extra`` is added as is (JSON)."""
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    seen = _obs_core(core, obs)
    meta: dict[str, Any] = {
        "format": FORMAT, "format_version": FORMAT_VERSION, "engine": engine, "game": game,
        "num_players": int(core.num_players), "rules": rules_dict(core.rules), "rules_repr": repr(core.rules),
        "episode": getattr(core, "episode", "round"), "reward": getattr(core, "reward", "win"),
        "obs": obs, "obs_version": int(getattr(seen, "obs_version", 0)), "obs_size": int(seen.obs_size),
        "features": None if features is None else int(features), "num_features": 0,
        "num_actions": int(core.num_actions), "arch": _json_norm(arch),
    }
    if features is not None:
        meta["num_features"] = int(features_module(game).num_features(core, version=int(features)))
    meta.update(_json_norm(extra))
    return meta


def check_policy_meta(meta: dict[str, Any], core: Any, game: str, where: str = "policy") -> None:
    """Raise :class:`ModelMismatchError` naming the first field that does not match ``core``."""
    if meta.get("game") != game:
        raise ModelMismatchError(f"{where} was trained for game {meta.get('game')!r}, not {game!r}")
    want, have = rules_dict(core.rules), meta.get("rules", {})
    if have != want:
        diff = [k for k in sorted(set(want) | set(have)) if want.get(k) != have.get(k)]
        detail = ", ".join(f"{k}: policy {have.get(k)!r} vs game {want.get(k)!r}" for k in diff)
        raise ModelMismatchError(f"{where} was trained for other {game} rules ({detail})")
    obs = meta.get("obs", "default")
    if obs not in ("default", "infostate"):
        raise ModelMismatchError(f"{where} reads observations {obs!r}, not 'default' or 'infostate'")
    seen = _obs_core(core, obs)
    for key, value in (("obs_version", int(getattr(seen, "obs_version", 0))), ("obs_size", int(seen.obs_size)),
                       ("num_actions", int(core.num_actions))):
        if meta.get(key) != value:
            raise ModelMismatchError(f"{where} has {key} {meta.get(key)!r} but this {game} core has {value!r}"
                                     " (observation layout changed: retrain the policy)")
    if meta.get("features") is not None:
        if obs == "infostate":
            raise ModelMismatchError(f"{where}: derived features are computed from the default observation, "
                                     "not from information states")
        feature_set = features_module(game)
        supported = tuple(getattr(feature_set, "SUPPORTED_VERSIONS", (feature_set.FEATURES_VERSION,)))
        if meta["features"] not in supported:
            raise ModelMismatchError(f"{where} uses derived features version {meta['features']!r}, "
                                     f"this code computes versions {supported}: retrain the policy")


# -- the file -----------------------------------------------------------------------------------------

def layer_names(arch: dict[str, Any], head: str) -> list[str]:
    """The layer prefixes of one head (``pi`` or ``vf``) in order: ``pi.0``, ``pi.1``, ..., ``pi.out``."""
    return [f"{head}.{i}" for i in range(len(arch.get(head) or []))] + [f"{head}.out"]


def input_size(tensors: dict[str, Any], arch: dict[str, Any]) -> int:
    """The width of the network's input (the observation plus the derived features)."""
    return int(tensors[layer_names(arch, "pi")[0] + ".weight"].shape[1])


def _check_arch(arch: Any, where: str) -> None:
    if not isinstance(arch, dict) or arch.get("type") != "mlp":
        raise ValueError(f"{where}: arch must be {{'type': 'mlp', ...}}, got {arch!r}")
    if arch.get("activation") not in ACTIVATIONS:
        raise ValueError(f"{where}: arch activation must be one of {ACTIVATIONS}, got {arch.get('activation')!r}")
    for head in ("pi", "vf"):
        sizes = arch.get(head, [])
        if not isinstance(sizes, list) or not all(isinstance(h, int) and h > 0 for h in sizes):
            raise ValueError(f"{where}: arch {head} must be a list of layer widths, got {sizes!r}")


def check_tensors(tensors: dict[str, np.ndarray], meta: dict[str, Any], where: str) -> None:
    """The tensors are the ones ``meta['arch']`` names, with chained shapes from the input to the logits."""
    arch = meta["arch"]
    _check_arch(arch, where)
    heads = ["pi"] + (["vf"] if "vf.out.weight" in tensors else [])
    expected = {f"{p}.{k}" for h in heads for p in layer_names(arch, h) for k in ("weight", "bias")}
    if set(tensors) != expected:
        extra, missing = sorted(set(tensors) - expected), sorted(expected - set(tensors))
        raise ValueError(f"{where}: tensors do not match arch {arch} (missing {missing}, unexpected {extra})")
    n_in = input_size(tensors, arch)
    if "num_features" in meta and n_in != int(meta["obs_size"]) + int(meta["num_features"] or 0):
        raise ValueError(f"{where}: the network takes {n_in} inputs, the metadata says obs_size {meta['obs_size']} "
                         f"+ num_features {meta['num_features']}")
    for head in heads:
        width = n_in
        sizes = list(arch.get(head) or []) + [int(meta["num_actions"]) if head == "pi" else 1]
        for prefix, out in zip(layer_names(arch, head), sizes):
            w, b = tensors[f"{prefix}.weight"], tensors[f"{prefix}.bias"]
            if w.shape != (out, width) or b.shape != (out,):
                raise ValueError(f"{where}: {prefix} has shapes {tuple(w.shape)}, {tuple(b.shape)}; "
                                 f"arch and sizes say {(out, width)}, {(out,)}")
            width = out


def _check_meta(meta: Any, where: str) -> dict[str, Any]:
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        fmt = meta.get("format") if isinstance(meta, dict) else type(meta).__name__
        raise ValueError(f"{where}: not a deckgym policy file (format {fmt!r})")
    if meta.get("format_version") != FORMAT_VERSION:
        raise ValueError(f"{where}: policy format_version {meta.get('format_version')!r}; this deckgym reads "
                         f"{FORMAT_VERSION} (a newer deckgym wrote it?)")
    missing = [k for k in REQUIRED if k not in meta]
    if missing:
        raise ValueError(f"{where}: policy metadata lacks {', '.join(missing)}")
    if meta["engine"] not in ENGINES:
        raise ValueError(f"{where}: unknown engine {meta['engine']!r} (one of {ENGINES})")
    _check_arch(meta["arch"], where)
    return meta


def save_policy(path: str, tensors: dict[str, Any], meta: dict[str, Any]) -> str:
    """Write ``tensors`` (numpy or torch arrays) and ``meta`` to ``path`` (``.safetensors`` added if
    missing), replacing it atomically; returns the path. The tensors must match ``meta['arch']``."""
    from safetensors.numpy import save

    from deckgym.outputs import write_bytes

    path = str(path)
    if not path.endswith(SUFFIX):
        path += SUFFIX
    arrays = {k: np.ascontiguousarray(v.detach().cpu().numpy() if hasattr(v, "detach") else v, dtype=np.float32)
              for k, v in tensors.items()}
    meta = _check_meta(shareable(_json_norm(meta)), f"policy for {path}")
    check_tensors(arrays, meta, f"policy for {path}")
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    write_bytes(path, save(arrays, metadata={META_KEY: json.dumps(meta, indent=1)}))  # never a half-written policy
    return path


def pickled_kind(path: str) -> str | None:
    """What ``path`` is if reading it means unpickling (an SB3 zip, an RLlib checkpoint, a pickle), else None."""
    if os.path.isdir(path):
        names = set(os.listdir(path))
        if "model" in names and os.path.isdir(os.path.join(path, "model")):
            return pickled_kind(os.path.join(path, "model"))
        if any(n.endswith((".pkl", ".pickle", ".pt", ".pth")) for n in names) or "rllib_checkpoint.json" in names:
            return "an RLlib checkpoint folder (class_and_ctor_args.pkl, module_state.pkl)"
        return None
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as zf:
            names = set(zf.namelist())
        if "data" in names or "policy.pth" in names:
            return "an SB3 model zip (its data and .pth members are pickles)"
        return "a zip archive (torch.save)" if any(n.endswith("data.pkl") for n in names) else None
    with open(path, "rb") as f:
        head = f.read(2)
    if path.endswith((".pkl", ".pickle", ".pt", ".pth", ".ckpt")) or head[:1] == b"\x80":
        return "a Python pickle"
    return None


def refuse_pickle(path: str, kind: str, switch: str) -> PickleRefused:
    """The one-line refusal of a pickled file: the risk, and ``switch``, the way to accept this file."""
    return PickleRefused(f"{path} is {kind}: unpickling it runs any code its author put in it, so deckgym does not "
                         f"open it. If you trust its source, {switch}")


def convert_hint(path: str) -> str:
    """The switch for a pickled file outside an agent spec: convert it once to a policy file."""
    return f"convert it once: deckgym convert {path} --allow-pickle (see SECURITY.md)"


def read_meta(path: str) -> dict[str, Any]:
    """The metadata of the policy file ``path`` (its header only); ``ValueError`` in one line if it is
    not one (:class:`PickleRefused` if it is a pickle), ``FileNotFoundError`` if missing."""
    if not os.path.exists(path):
        raise FileNotFoundError(f"model file not found: {path}")
    if os.path.isdir(path) or not path.endswith(SUFFIX):
        kind = pickled_kind(path)
        if kind is not None:
            raise refuse_pickle(path, kind, convert_hint(path))
        raise ValueError(f"{path}: not a deckgym policy file (expected a {SUFFIX} file)")
    try:
        with open(path, "rb") as f:
            (n,) = struct.unpack("<Q", f.read(8))
            if n > min(_MAX_HEADER, os.path.getsize(path) - 8):
                raise ValueError("header length beyond the file")
            header = strict_json.loads(f.read(n), "the header")
        meta = strict_json.loads(header["__metadata__"][META_KEY], "the metadata")
    except (struct.error, ValueError, KeyError, TypeError, UnicodeDecodeError, OSError) as exc:
        raise ValueError(f"{path}: not a deckgym policy file, or a damaged one ({type(exc).__name__}: {exc})") from None
    return _check_meta(meta, path)


def load_policy(path: str) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The tensors (numpy float32) and the metadata of the policy file ``path``, checked against each other."""
    from safetensors.numpy import load_file

    meta = read_meta(path)
    try:
        tensors = load_file(path)
    except Exception as exc:  # safetensors' own error for a truncated or inconsistent file
        raise ValueError(f"{path}: damaged policy file ({type(exc).__name__}: {exc})") from None
    check_tensors(tensors, meta, path)
    return {k: v.astype(np.float32, copy=False) for k, v in tensors.items()}, meta


# -- the network and the agent -----------------------------------------------------------------------

def _torch() -> Any:
    require_extra("train", "playing a policy file", ("torch",))
    import torch

    return torch


def network_input(core: Any, feat: Any, meta: dict[str, Any], observations: np.ndarray) -> np.ndarray:
    """What a policy's network reads: the observations, with the derived features of version
    ``meta['features']`` appended (``feat``: the game's features module, None without features),
    recomputed from the observation alone, as the training env did."""
    obs = np.asarray(observations, dtype=np.float32)
    if feat is None:
        return obs
    return np.concatenate([obs, feat.derived_features(core, obs, version=int(meta["features"]))], axis=1)


class PolicyNet:
    """The network of a policy file, rebuilt from its tensors and ``arch`` (torch, CPU, inference only).

    The layers are the ones ``torch.nn.Linear`` computes (``F.linear``) with the activation
    between them: on the same processor and BLAS kernel the logits are bit for bit those of the
    engine that trained it. Another kernel sums the float32 products in another order, so on
    another machine they agree within a few ulps times the square root of the layer sizes (the
    bound of ``tests/float_bounds.py``), and the moves agree wherever the best one leads by more.
    """

    def __init__(self, tensors: dict[str, Any], meta: dict[str, Any]) -> None:
        torch = _torch()
        arch = meta["arch"]
        self.act = torch.tanh if arch["activation"] == "tanh" else torch.relu
        as_t = {k: torch.as_tensor(np.ascontiguousarray(v, dtype=np.float32)) for k, v in tensors.items()}
        self.heads = {h: [(as_t[f"{p}.weight"], as_t[f"{p}.bias"]) for p in layer_names(arch, h)]
                      for h in ("pi", "vf") if f"{h}.out.weight" in as_t}

    def _run(self, head: str, x: np.ndarray) -> np.ndarray:
        torch = _torch()
        F = torch.nn.functional
        layers = self.heads[head]
        with torch.inference_mode():
            h = torch.as_tensor(np.asarray(x, dtype=np.float32))
            for w, b in layers[:-1]:
                h = self.act(F.linear(h, w, b))
            return F.linear(h, *layers[-1]).numpy()

    def logits(self, x: np.ndarray) -> np.ndarray:
        """``(B, A)`` action logits of the network input ``x`` ``(B, D)``."""
        return self._run("pi", x)

    def values(self, x: np.ndarray) -> np.ndarray:
        """``(B,)`` the value head's estimates (``ValueError`` if the file has none)."""
        if "vf" not in self.heads:
            raise ValueError("this policy file has no value head")
        return self._run("vf", x)[:, 0]


class PolicyAgent(Agent):
    """A policy file acting as a batched, masked agent (spec ``ppo:PATH.safetensors``).

    Built from a path (read without unpickling) or from ``tensors`` and ``meta`` in memory
    (a training run's snapshot). It recomputes the derived features from its own
    observation (as the training env did), runs the network once per batch, masks illegal
    actions and plays the most probable legal action (``deterministic=True``) or samples one
    with its own seeded generator. A policy trained on information states asks for them
    (its ``observation`` is ``"infostate"``).
    """

    def __init__(self, core: Any, path: str | None = None, seed: int = 0, game: str | None = None,
                 deterministic: bool = True, tensors: dict[str, Any] | None = None,
                 meta: dict[str, Any] | None = None) -> None:
        if not isinstance(deterministic, (bool, np.bool_)):
            raise ValueError(f"policy agent: deterministic must be True or False, got {deterministic!r}")
        super().__init__(core, seed=seed)
        self.game = game or game_of_core(core)
        if path is not None:
            check_policy_meta(read_meta(path), core, self.game, where=f"policy {path}")  # before the tensors
            tensors, meta = load_policy(path)
            self.spec = f"ppo:{path}"
        elif tensors is None or meta is None:
            raise ValueError("PolicyAgent needs a policy file path (or tensors and their metadata)")
        else:
            meta = _check_meta(_json_norm(meta), "policy")
            tensors = {k: np.asarray(v.detach().cpu().numpy() if hasattr(v, "detach") else v, np.float32)
                       for k, v in tensors.items()}
            check_tensors(tensors, meta, "policy")
            check_policy_meta(meta, core, self.game)
            self.spec = "ppo:<in memory>"
        want = int(meta["obs_size"])
        if meta.get("features") is not None:
            want += int(features_module(self.game).num_features(core, version=int(meta["features"])))
        if input_size(tensors, meta["arch"]) != want:
            raise ModelMismatchError(f"policy {path or ''}: its network takes {input_size(tensors, meta['arch'])} "
                                     f"inputs, but the observation and features version {meta.get('features')} of "
                                     f"this {self.game} core are {want}")
        self.meta, self.deterministic = meta, bool(deterministic)
        self.observation = meta.get("obs", "default")
        self.net = PolicyNet(tensors, meta)
        self._feat = features_module(self.game) if meta.get("features") is not None else None

    def inputs(self, observations: np.ndarray) -> np.ndarray:
        """The network input: the observation, with the derived features appended if the policy uses them."""
        return network_input(self.core, self._feat, self.meta, observations)

    def logits(self, observations: np.ndarray) -> np.ndarray:
        """``(B, A)`` the network's action logits (unmasked)."""
        return self.net.logits(self.inputs(observations))

    def action_probs(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """``(B, A)`` the policy's probabilities over the legal actions (0 for illegal ones),
        what replays show as policy bars; draws no random numbers."""
        return masked_softmax(self.logits(observations), action_masks)

    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        masks = np.asarray(action_masks, dtype=bool)
        if len(masks) == 0:
            return np.zeros(0, np.int64)
        logits = np.where(masks, self.logits(observations), -np.inf)
        if not self.deterministic:
            logits = logits + self.rng.gumbel(size=logits.shape)  # Gumbel-max: a sample of softmax(logits)
        return np.argmax(logits, axis=1).astype(np.int64)
