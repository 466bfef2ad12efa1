"""TorchRL environments over the batched cores: ``RackoEnv`` and ``LeastScoreEnv``.

    from deckgym.torchrl import RackoEnv
    env = RackoEnv(num_envs=1024, num_players=2, opponents=["racko:ranges"], features=True, seed=0)
    td = env.rollout(100, break_when_any_done=False)     # a masked random policy by default

Each is a TorchRL ``EnvBase`` with ``batch_size=[B]`` over ``B`` games of one core state
(:mod:`deckgym.torchrl.env`); ``deckgym.training.torchrl_ppo`` trains PPO on it and saves the policy
in the safe policy format (:mod:`deckgym.agents.policy_file`). Needs the ``torchrl`` extra.
"""

from __future__ import annotations

from deckgym.extras import require_extra

require_extra("torchrl", "deckgym.torchrl")  # one line naming the extra, before anything else is imported

from deckgym.torchrl.env import GAME_ENVS, DeckGymTorchEnv, deprecated_name  # noqa: E402

# RackoEnv, LeastScoreEnv, ...: one class per registered game (deckgym.torchrl.env.GAME_ENVS)
globals().update({cls.__name__: cls for cls in GAME_ENVS.values()})
__all__ = ["DeckGymTorchEnv", "GAME_ENVS", *(cls.__name__ for cls in GAME_ENVS.values())]


def __getattr__(name: str) -> type:
    # RackOEnv: the old spelling, with a DeprecationWarning for one release
    return deprecated_name(name)
