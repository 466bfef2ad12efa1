"""``RLlibAgent``: an RLlib masked-PPO module in memory acting as a batched agent (training's pool).

``deckgym train --engine rllib`` saves its policy as a policy file
(``deckgym.agents.policy_file``, played by the spec ``ppo:PATH.safetensors``); this class plays
the live module of a run: the self-play copy and the league's snapshots on the env runners.
Its metadata is the policy file's (``engine = "rllib"``) and is checked against the core as
``ppo:`` checks it.

The spec ``rllib:PATH`` names an RLlib checkpoint folder (the former model format), which
RLlib reads by unpickling: it is refused unless the spec says ``?allow_pickle=true``; then
its weights are read without running anything in it and play as a policy file would
(``deckgym.agents.policy_convert``). ``deckgym convert PATH --allow-pickle`` converts it once.

The agent runs the module on the CPU in inference mode, once per batch: the observation
plus the derived features (recomputed from its own observation, as the env did) and the
float mask; the module masks the logits itself. It plays the most probable legal action
(``deterministic=True``, the default) or samples one with its own seeded generator.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from deckgym.agents.base import Agent, masked_softmax
from deckgym.agents.policy_file import check_policy_meta, features_module, game_of_core, network_input
from deckgym.agents.ppo import model_metadata


def model_metadata_rllib(core: Any, game: str, features: bool, features_version: int | None = None,
                         **extra: Any) -> dict[str, Any]:
    """The policy-file metadata of an RLlib module for ``core`` (``arch`` is filled when it is saved)."""
    return {**model_metadata(core, game, features, features_version, **extra), "engine": "rllib"}


class RLlibAgent(Agent):
    """A live RLlib masked-PPO module acting as a batched agent (a run's self-play copy or snapshot)."""

    def __init__(self, core: Any, module: Any, meta: dict[str, Any], seed: int = 0, game: str | None = None,
                 deterministic: bool = True) -> None:
        super().__init__(core, seed=seed)
        self.game = game or game_of_core(core)
        check_policy_meta(meta, core, self.game, where="module")
        self.spec = "rllib:<in memory>"
        self.meta, self.module, self.deterministic = meta, module, deterministic
        self._feat = features_module(self.game) if meta.get("features") is not None else None

    def inputs(self, observations: np.ndarray) -> np.ndarray:
        return network_input(self.core, self._feat, self.meta, observations)

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
