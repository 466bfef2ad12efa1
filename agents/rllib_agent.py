"""``RLlibAgent`` (spec ``rllib:PATH``): a policy trained with ``--engine rllib`` as a batched agent.

``PATH`` is a model directory written by ``deckgym.training.rllib_train``: the policy's RLModule
checkpoint (RLlib's ``RLModule.save_to_path`` layout) plus ``deckgym_meta.json``, the same
metadata a ``ppo:`` model carries (game, rules, observation layout, features version,
training config), under ``format = "deckgym-rllib"``. A run directory works too (its
``model/`` is used). Loading checks the metadata against the core exactly as ``ppo:`` does
and refuses another game, other rules, another observation layout or features version
with one line naming the field; a missing or damaged checkpoint is one ``ValueError``.

The agent runs the module on the CPU in inference mode, once per batch: the observation
plus the derived features (recomputed from its own observation, as the env did) and the
float mask; the module masks the logits itself. It plays the most probable legal action
(``deterministic=True``, the default) or samples one with its own seeded generator.
"""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np

from deckgym.agents.base import Agent, masked_softmax
from deckgym.agents.ppo import check_metadata, features_module, game_of_core, model_metadata

META_NAME = "deckgym_meta.json"
FORMAT = "deckgym-rllib"
FORMAT_VERSION = 1


def model_metadata_rllib(core: Any, game: str, features: bool, features_version: int | None = None,
                         **extra: Any) -> dict[str, Any]:
    """The ``ppo:`` metadata (see :func:`deckgym.agents.ppo.model_metadata`) under the RLlib format name."""
    meta = model_metadata(core, game, features, features_version, **extra)
    meta.update(format=FORMAT, format_version=FORMAT_VERSION, engine="rllib")
    return meta


def model_dir(path: str) -> str:
    """The model directory of ``path`` (a model directory, or a run directory holding ``model/``)."""
    if not os.path.exists(path):
        raise FileNotFoundError(f"RLlib model not found: {path}")
    if os.path.isdir(path) and not os.path.exists(os.path.join(path, META_NAME)) \
            and os.path.exists(os.path.join(path, "model", META_NAME)):
        return os.path.join(path, "model")
    return path


def read_metadata(path: str) -> dict[str, Any]:
    """The ``deckgym_meta.json`` of a model directory; ``ValueError`` if it is not a deckgym RLlib model."""
    path = model_dir(path)
    if not os.path.isdir(path):
        raise ValueError(f"{path}: not a deckgym RLlib model (a file, not a model directory; a ppo: model?)")
    meta_path = os.path.join(path, META_NAME)
    if not os.path.exists(meta_path):
        raise ValueError(f"{path}: not a deckgym RLlib model (no {META_NAME} inside)")
    try:
        with open(meta_path) as f:
            meta = json.load(f)
    except (json.JSONDecodeError, UnicodeDecodeError, OSError) as exc:
        raise ValueError(f"{path}: corrupt model ({META_NAME}: {exc})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ValueError(f"{path}: not a deckgym RLlib model (format {meta.get('format') if isinstance(meta, dict) else meta!r})")
    return meta


def load_module(path: str) -> Any:
    """The RLModule stored in the model directory ``path`` (CPU, eval mode)."""
    import deckgym.agents.rllib_module  # noqa: F401  (the class the checkpoint names; silences RLlib's own deprecation)
    from ray.rllib.core.rl_module.rl_module import RLModule

    try:
        module = RLModule.from_checkpoint(os.path.abspath(model_dir(path)))
    except Exception as exc:  # pickle, pyarrow or torch errors of a damaged checkpoint
        raise ValueError(f"{path}: corrupt RLlib checkpoint, cannot load the module ({type(exc).__name__}: "
                         f"{str(exc).splitlines()[0] if str(exc) else ''})") from None
    module.eval()
    return module


class RLlibAgent(Agent):
    """A saved RLlib masked-PPO module acting as a batched agent (spec ``rllib:PATH``)."""

    def __init__(self, core: Any, path: str | None = None, seed: int = 0, game: str | None = None,
                 deterministic: bool = True, module: Any = None, meta: dict[str, Any] | None = None) -> None:
        super().__init__(core, seed=seed)
        self.game = game or game_of_core(core)
        if path is not None:
            from deckgym.agents.rllib_support import require_ray

            require_ray(f"the agent rllib:{path}")  # first: without Ray, the one useful message
            meta = read_metadata(path)
            check_metadata(meta, core, self.game, where=f"model {path}")
            module = load_module(path)
            self.spec = f"rllib:{path}"
        elif module is None or meta is None:
            raise ValueError("RLlibAgent needs a model path (or a module and its metadata)")
        else:
            check_metadata(meta, core, self.game, where="module")
            self.spec = "rllib:<in memory>"
        self.meta, self.module, self.deterministic = meta, module, deterministic
        self._feat = features_module(self.game) if meta.get("features") else None

    def inputs(self, observations: np.ndarray) -> np.ndarray:
        obs = np.asarray(observations, dtype=np.float32)
        if self._feat is not None:
            version = int(self.meta["features_version"])
            obs = np.concatenate([obs, self._feat.derived_features(self.core, obs, version=version)], axis=1)
        return obs

    def logits(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """The module's masked action logits, ``(B, A)``."""
        import torch
        from ray.rllib.core.columns import Columns

        batch = {Columns.OBS: {"observations": torch.as_tensor(self.inputs(observations)),
                               "action_mask": torch.as_tensor(np.asarray(action_masks, np.float32))}}
        with torch.inference_mode():
            return self.module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS].numpy()

    def action_probs(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """``(B, A)`` the module's probabilities over the legal actions (0 for illegal ones), what
        replays show as policy bars; draws no random numbers."""
        masks = np.asarray(action_masks, dtype=bool)
        return masked_softmax(self.logits(observations, masks), masks)

    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        masks = np.asarray(action_masks, dtype=bool)
        if len(masks) == 0:
            return np.zeros(0, np.int64)
        logits = np.where(masks, self.logits(observations, masks), -np.inf)  # the mask again: exact, not FLOAT_MIN
        if not self.deterministic:
            logits = logits + self.rng.gumbel(size=logits.shape)  # Gumbel-max: a sample of softmax(logits)
        return np.argmax(logits, axis=1).astype(np.int64)
