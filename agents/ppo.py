"""SB3 ``MaskablePPO`` models as policy files: save, rebuild, and the agent of ``ppo:PATH``.

A trained MaskablePPO model is saved as a policy file (``deckgym.agents.policy_file``: weights
in ``safetensors``, the game, rules, observation layout, features version, architecture,
training config and arena results in JSON; no pickles). :func:`save_model` writes one,
:func:`rebuild_model` builds a fresh ``MaskablePPO`` from one (``deckgym train --init``,
expert iteration's ``--resume``): the network's weights are loaded into a newly constructed
policy, and the optimizer starts afresh (its moments are not in the file); the PPO
hyperparameters are the command line's.

The spec ``ppo:PATH`` plays a policy file through :class:`deckgym.agents.policy_file.PolicyAgent`
(``PPOAgent`` is the same class). SB3's own zips (``model.save``) are pickles: ``ppo:`` refuses
them unless the spec says ``?allow_pickle=true``, and ``deckgym convert PATH --allow-pickle``
turns a trusted one into a policy file once (``deckgym.agents.policy_convert``).

For a model trained with plain SB3 on a Gymnasium view, save it through :func:`save_model`::

    env = gymnasium.make("deckgym/RackO-v0", num_players=2)
    model = MaskablePPO("MlpPolicy", env).learn(100_000)
    meta = model_metadata(env.unwrapped.core, "racko", features=False)  # features=True if the view had them
    save_model(model, "racko_mine.safetensors", meta)
"""

from __future__ import annotations

from typing import Any

from deckgym.agents.policy_file import (
    PolicyAgent, check_policy_meta, features_module, load_policy, policy_meta, read_meta, save_policy,
)

#: the agent the spec ``ppo:PATH`` builds (one class for every engine's policy files)
PPOAgent = PolicyAgent


def model_metadata(core: Any, game: str, features: bool, features_version: int | None = None,
                   **extra: Any) -> dict[str, Any]:
    """The metadata of an SB3 policy for ``core`` (``arch`` is filled by :func:`save_model`)."""
    version = None
    if features:
        feature_set = features_module(game)
        version = int(feature_set.FEATURES_VERSION if features_version is None else features_version)
    return policy_meta(core, game, "sb3", None, version, **extra)


def save_model(model: Any, path: str, meta: dict[str, Any]) -> str:
    """Save a MaskablePPO ``model``'s policy and value networks with ``meta`` as a policy file
    (``.safetensors`` added if missing); returns the path."""
    from deckgym.agents.policy_convert import sb3_export

    tensors, arch = sb3_export(model.policy)
    return save_policy(path, tensors, {**meta, "engine": "sb3", "arch": arch})


def read_metadata(path: str) -> dict[str, Any]:
    """The metadata of the policy file ``path`` (see :func:`deckgym.agents.policy_file.read_meta`)."""
    return read_meta(path)


def check_metadata(meta: dict[str, Any], core: Any, game: str, where: str = "model") -> None:
    """Raise :class:`ModelMismatchError` naming the first field that does not match ``core``."""
    check_policy_meta(meta, core, game, where)


def without_log_folder(model: Any) -> Any:
    """``model`` (an SB3 algorithm) with a logger that writes nowhere; returns it. Without a logger
    of its own, every ``learn`` call makes a new empty ``SB3-<time>`` folder in the temp dir."""
    from stable_baselines3.common.logger import Logger

    model.set_logger(Logger(folder=None, output_formats=[]))
    return model


def update_metadata(path: str, meta: dict[str, Any]) -> None:
    """Replace the metadata of the policy file ``path`` (same tensors; rewritten atomically)."""
    tensors, _ = load_policy(path)
    save_policy(path, tensors, meta)


def snapshot(core: Any, policy: Any, meta: dict[str, Any], seed: int = 0, name: str = "snapshot",
             deterministic: bool = False) -> PolicyAgent:
    """A frozen copy of a MaskablePPO policy being trained (for self-play opponents)."""
    from deckgym.agents.policy_convert import sb3_export

    tensors, arch = sb3_export(policy)
    agent = PolicyAgent(core, seed=seed, tensors=tensors, meta={**meta, "engine": "sb3", "arch": arch},
                        deterministic=deterministic)
    agent.spec = name
    return agent


def rebuild_model(path: str, env: Any, where: str, **ppo_kwargs: Any) -> Any:
    """A fresh ``MaskablePPO`` on ``env`` with the network of the policy file ``path`` (its ``arch``,
    its weights); ``ppo_kwargs`` are the PPO hyperparameters. The optimizer starts afresh."""
    import torch
    from sb3_contrib import MaskablePPO

    from deckgym.agents.policy_convert import sb3_import

    tensors, meta = load_policy(path)
    arch = meta["arch"]
    if meta.get("obs", "default") != "default":
        raise ValueError(f"{where} reads {meta['obs']} observations; PPO training feeds the default observation")
    act = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[arch["activation"]]
    model = MaskablePPO("MlpPolicy", env, device="cpu", verbose=0,
                        policy_kwargs={"net_arch": {"pi": list(arch["pi"]), "vf": list(arch["vf"])},
                                       "activation_fn": act}, **ppo_kwargs)
    sb3_import(model.policy, tensors, where)
    return model
