"""``MaskedPPOModule``: RLlib's default PPO module (new API stack) with the illegal actions masked.

The env gives each agent a dict observation ``{"observations": (obs,), "action_mask":
(A,) float}``. The module builds its networks for ``observations`` only and adds
``log(action_mask)`` (clamped to the smallest float) to the action logits in every
forward pass, so sampling, the greedy action and the PPO loss all see only the legal
actions: RLlib never sends an illegal one. A row with no legal action (the terminal
observation of a finished game) gets uniform logits, never NaNs.

The class lives in ``agents`` (not ``training``): the module spec names it, and every Ray
worker of a run (env runners, the self-play pool) imports it from here. A trained module is
saved as a policy file (``deckgym.agents.policy_convert.rllib_export``), which plays without it.
"""

from __future__ import annotations

from deckgym.agents.rllib_support import require_ray

require_ray("an RLlib model")

from typing import Any  # noqa: E402

import gymnasium as gym  # noqa: E402
import torch  # noqa: E402
from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule  # noqa: E402
from ray.rllib.core.columns import Columns  # noqa: E402
from ray.rllib.utils.torch_utils import FLOAT_MIN  # noqa: E402
from ray.util import log_once  # noqa: E402

OBS_KEY, MASK_KEY = "observations", "action_mask"

# RLModule.__init__ (ray 2.60) builds RLlib's own deprecated RLModuleConfig for every module and
# logs, once per process, a deprecation warning that reads as if it were about this module. The
# warning's once-key is used up here, in every process that builds this class (the driver, the
# learner, each env runner), so a normal run is silent; a real deprecation of ours would not be.
log_once("RLModule(config=[RLModuleConfig object])")


def split_obs(batch: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    """A shallow copy of ``batch`` whose ``obs`` is the plain observation, and the mask.

    The caller's batch is left as it was (RLlib reuses it, e.g. for the value pass).
    """
    obs = batch[Columns.OBS]
    if not isinstance(obs, dict) or OBS_KEY not in obs or MASK_KEY not in obs:
        raise ValueError(f"MaskedPPOModule needs dict observations with keys {OBS_KEY!r} and {MASK_KEY!r}, "
                         f"got {type(obs).__name__} {sorted(obs) if isinstance(obs, dict) else ''}")
    return {**batch, Columns.OBS: obs[OBS_KEY]}, obs[MASK_KEY]


def mask_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``logits + log(mask)``, clamped so a masked action gets the smallest float (not -inf)."""
    return logits + torch.clamp(torch.log(mask.to(logits.dtype)), min=FLOAT_MIN)


class MaskedPPOModule(DefaultPPOTorchRLModule):
    """PPO actor-critic over ``observations`` whose logits are masked by ``action_mask``."""

    def __init__(self, *, observation_space: gym.Space | None = None, **kwargs: Any) -> None:
        if not isinstance(observation_space, gym.spaces.Dict) or set(observation_space.spaces) != {OBS_KEY, MASK_KEY}:
            raise ValueError(f"MaskedPPOModule needs a Dict observation space with keys {OBS_KEY!r} and "
                             f"{MASK_KEY!r}, got {observation_space}")
        self.observation_space_with_mask = observation_space
        # The networks are built for the plain observation ...
        super().__init__(observation_space=observation_space[OBS_KEY], **kwargs)

    def setup(self) -> None:
        super().setup()
        # ... while the module as RLlib sees it takes the dict.
        self.observation_space = self.observation_space_with_mask

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        inner, mask = split_obs(batch)
        out = super()._forward(inner, **kwargs)
        out[Columns.ACTION_DIST_INPUTS] = mask_logits(out[Columns.ACTION_DIST_INPUTS], mask)
        return out

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        inner, mask = split_obs(batch)
        out = super()._forward_train(inner, **kwargs)
        out[Columns.ACTION_DIST_INPUTS] = mask_logits(out[Columns.ACTION_DIST_INPUTS], mask)
        return out

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> Any:
        if embeddings is None and isinstance(batch[Columns.OBS], dict):
            batch, _ = split_obs(batch)
        return super().compute_values(batch, embeddings)
