"""Trained policies in the safe policy format: one ``.safetensors`` file, no pickle.

The file holds the tensors of two MLPs and, in its metadata under ``"deckgym"``, a JSON
object ``meta``: ``format: "deckgym-policy"``, ``format_version: 1``, ``engine``, ``game``,
``num_players``, ``rules`` (the rules dataclass's fields), ``episode``, ``reward``, ``obs``
(``"default"`` or ``"infostate"``), ``obs_version``, ``obs_size``, ``features`` (the derived
features version appended to the observation, or ``null``), ``num_actions``, ``arch`` (``{"type":
"mlp", "pi": [hidden sizes], "vf": [hidden sizes], "activation": "tanh"|"relu"}``) and the
training config. Tensors: ``pi.{i}.weight``/``pi.{i}.bias`` per hidden layer, ``pi.out.*``
(the logits), and the same under ``vf.`` for the value net. The network's input is the
core's observation followed, when ``features`` is set, by the derived features exactly as a
``ppo:`` agent computes them (``<game>_env.features.derived_features``).

:func:`save_policy` writes it; :class:`PolicyFileAgent` plays it as a deckgym agent (the
most probable legal action, or sampled); :func:`register_policy` names a file as an agent
spec (``"racko:torchrl-NAME"``) that the arena and the env's opponent pool accept.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections import OrderedDict
from typing import Any, Sequence

import numpy as np

try:
    import torch
    from torch import nn
except ImportError:  # one line naming the extra
    raise ImportError("deckgym.agents.torchrl_policy needs torch and safetensors: pip install 'deckgym[torchrl]'") from None

from deckgym.agents.base import Agent, masked_softmax
from deckgym.registration import game as game_entry

FORMAT = "deckgym-policy"
FORMAT_VERSION = 1
ACTIVATIONS = {"tanh": nn.Tanh, "relu": nn.ReLU}

__all__ = ["FORMAT", "FORMAT_VERSION", "mlp", "policy_metadata", "save_policy", "load_policy", "PolicyFileAgent",
           "register_policy"]


def _safetensors() -> Any:
    try:
        import safetensors
        import safetensors.torch  # noqa: F401
    except ImportError:
        raise ImportError("policy files need safetensors: pip install 'deckgym[torchrl]'") from None
    return safetensors


def mlp(n_in: int, hidden: Sequence[int], n_out: int, activation: str = "tanh") -> nn.Sequential:
    """An MLP whose ``state_dict`` names match the file's: ``{i}.weight`` per hidden layer, ``out.*``."""
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, got {activation!r}")
    layers: dict[str, nn.Module] = {}
    width = n_in
    for i, h in enumerate(hidden):
        layers[str(i)] = nn.Linear(width, int(h))
        layers[f"act{i}"] = ACTIVATIONS[activation]()
        width = int(h)
    layers["out"] = nn.Linear(width, n_out)
    return nn.Sequential(OrderedDict(layers))


def _rules_dict(rules: Any) -> dict[str, Any]:
    return json.loads(json.dumps(dataclasses.asdict(rules), default=str))


def policy_metadata(env: Any, arch: dict[str, Any], config: dict[str, Any] | None = None,
                    engine: str = "torchrl", **extra: Any) -> dict[str, Any]:
    """The ``meta`` of a policy trained on ``env`` (a :class:`~deckgym.torchrl.env.DeckGymTorchEnv`)."""
    core = env.core
    meta = {
        "format": FORMAT, "format_version": FORMAT_VERSION, "engine": engine, "game": env.game,
        "num_players": int(core.num_players), "rules": _rules_dict(core.rules), "episode": env.episode,
        "reward": env.reward_mode, "obs": env.obs_kind, "obs_version": int(core.obs_version),
        "obs_size": int(core.obs_size), "features": env.features_version, "num_actions": int(core.num_actions),
        "arch": dict(arch), "config": dict(config or {}),
    }
    meta.update(json.loads(json.dumps(extra, default=str)))
    return meta


def save_policy(path: str, pi: nn.Module, vf: nn.Module, meta: dict[str, Any]) -> str:
    """Write ``pi`` and ``vf`` (:func:`mlp` networks) and ``meta`` to ``path`` (``.safetensors``), atomically."""
    save_file = _safetensors().torch.save_file
    tensors = {f"pi.{k}": v.detach().to("cpu").contiguous() for k, v in pi.state_dict().items()}
    tensors.update({f"vf.{k}": v.detach().to("cpu").contiguous() for k, v in vf.state_dict().items()})
    d = os.path.dirname(str(path))
    if d:
        os.makedirs(d, exist_ok=True)
    tmp = f"{path}.tmp"
    save_file(tensors, tmp, metadata={"deckgym": json.dumps(meta)})
    os.replace(tmp, path)
    return str(path)


def load_policy(path: str) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
    """``(meta, tensors)`` of a policy file; ``ValueError`` naming the problem if it is not one."""
    safe_open = _safetensors().safe_open
    if not os.path.exists(path):
        raise FileNotFoundError(f"policy file not found: {path}")
    try:
        with safe_open(path, framework="pt") as f:
            header = f.metadata() or {}
            tensors = {k: f.get_tensor(k) for k in f.keys()}
    except Exception as exc:  # safetensors raises its own error types for a damaged header
        raise ValueError(f"{path}: not a safetensors file ({type(exc).__name__}: {exc})") from None
    try:
        meta = json.loads(header["deckgym"])
    except (KeyError, json.JSONDecodeError):
        raise ValueError(f"{path}: not a deckgym policy (no 'deckgym' metadata)") from None
    if meta.get("format") != FORMAT or meta.get("format_version") != FORMAT_VERSION:
        raise ValueError(f"{path}: not a deckgym policy of format {FORMAT} v{FORMAT_VERSION} "
                         f"(format {meta.get('format')!r} v{meta.get('format_version')!r})")
    return meta, tensors


def _net(tensors: dict[str, torch.Tensor], prefix: str, hidden: Sequence[int], activation: str) -> nn.Sequential:
    own = {k[len(prefix) + 1:]: v for k, v in tensors.items() if k.startswith(prefix + ".")}
    if "out.weight" not in own:
        raise ValueError(f"policy file has no {prefix}.out.weight")
    net = mlp(int(own["0.weight" if hidden else "out.weight"].shape[1]), hidden, int(own["out.weight"].shape[0]), activation)
    net.load_state_dict(own)
    return net.eval()


class PolicyFileAgent(Agent):
    """A policy file playing as a batched deckgym agent (the arena, the env's opponent pool)."""

    def __init__(self, core: Any, path: str | None = None, seed: int = 0, game: str | None = None,
                 deterministic: bool = True, meta: dict[str, Any] | None = None,
                 tensors: dict[str, torch.Tensor] | None = None) -> None:
        super().__init__(core, seed=seed)
        if path is not None:
            meta, tensors = load_policy(path)
        elif meta is None or tensors is None:
            raise ValueError("PolicyFileAgent needs a policy file path (or its meta and tensors)")
        where = f"policy {path}" if path else "policy"
        self._check(meta, core, game, where)
        self.meta, self.deterministic = meta, bool(deterministic)
        arch = meta["arch"]
        self.net = _net(tensors, "pi", arch["pi"], arch.get("activation", "tanh"))
        self._feat = game_entry(meta["game"]).features() if meta.get("features") is not None else None
        self.spec = f"torchrl:{path}" if path else "torchrl:<in memory>"

    @staticmethod
    def _check(meta: dict[str, Any], core: Any, game: str | None, where: str) -> None:
        from deckgym.agents.ppo import game_of_core

        game = game or game_of_core(core)
        if meta.get("game") != game:
            raise ValueError(f"{where} was trained for game {meta.get('game')!r}, not {game!r}")
        if meta.get("rules") != _rules_dict(core.rules):
            diff = sorted(k for k in set(meta.get("rules", {})) | set(_rules_dict(core.rules))
                          if meta.get("rules", {}).get(k) != _rules_dict(core.rules).get(k))
            raise ValueError(f"{where} was trained for other {game} rules (fields {', '.join(diff)})")
        for key in ("obs_version", "obs_size", "num_actions"):
            if meta.get(key) != int(getattr(core, key)):
                raise ValueError(f"{where} has {key} {meta.get(key)!r} but this core has {getattr(core, key)!r}")
        if meta.get("obs", "default") != "default":
            raise ValueError(f"{where} reads {meta.get('obs')!r} observations; this agent plays on the default ones")

    def inputs(self, observations: np.ndarray) -> np.ndarray:
        """The network's input: the observation, then the derived features if the policy was trained with them."""
        obs = np.asarray(observations, dtype=np.float32)
        if self._feat is None:
            return obs
        return np.concatenate([obs, self._feat.derived_features(self.core, obs, version=int(self.meta["features"]))], axis=1)

    def logits(self, observations: np.ndarray) -> np.ndarray:
        with torch.inference_mode():
            return self.net(torch.from_numpy(self.inputs(observations))).numpy()

    def action_probs(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """``(B, A)`` the policy's probabilities over the legal actions (replays draw them)."""
        return masked_softmax(self.logits(observations), action_masks)

    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        masks = np.asarray(action_masks, dtype=bool)
        if len(masks) == 0:
            return np.zeros(0, np.int64)
        logits = np.where(masks, self.logits(observations), -np.inf)
        if not self.deterministic:
            logits = logits + self.rng.gumbel(size=logits.shape)  # Gumbel-max: a sample of softmax(logits)
        return np.argmax(logits, axis=1).astype(np.int64)


def register_policy(path: str, name: str | None = None, deterministic: bool = True) -> str:
    """Register the policy file ``path`` as the agent spec ``"<game>:torchrl-<name>"`` (default
    name: the file's stem) and return the spec, for the arena (``evaluate(game, [spec, ...])``)
    and the envs' opponent pools, in this process."""
    from deckgym.agents.registry import register_agent

    meta, _ = load_policy(path)
    stem = name or os.path.splitext(os.path.basename(path))[0]
    safe = re.sub(r"[^A-Za-z0-9_]", "_", stem)
    abspath = os.path.abspath(path)

    class _Registered(PolicyFileAgent):
        def __init__(self, core: Any, seed: int = 0) -> None:
            super().__init__(core, path=abspath, seed=seed, deterministic=deterministic)

    cls_name = f"Registered_{safe}"
    _Registered.__name__ = _Registered.__qualname__ = cls_name
    globals()[cls_name] = _Registered  # the registry imports agents as "module:Class"
    spec = f"{meta['game']}:torchrl-{stem}"
    register_agent(spec, f"{__name__}:{cls_name}")
    return spec
