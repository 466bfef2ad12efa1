"""How legal a policy-less rollout is, for a masked env alone and inside TorchRL's batched envs.

TorchRL's batched envs (``SerialEnv``, ``ParallelEnv``) build their specs once, from the
metadata of a throwaway env made for that purpose, and ``EnvBase.rand_action`` (what
``rollout()`` without a policy calls) samples from that copy. No sub-env's mask reaches it, so
an env that keeps its own action spec's mask current (deckgym's envs, TorchRL's own
``TicTacToeEnv``) draws legal actions alone but not once batched. Wrapping the batched env in
``ActionMask`` reads the mask from the data, and is legal again.

Reported per case: the illegal actions drawn, out of all drawn (an action is illegal when the
``action_mask`` of the state it was drawn in forbids it).

    python -m experiments.torchrl_batched_masks --steps 50
"""

from __future__ import annotations

import argparse
import functools
import json
import warnings

import torch
from torchrl.envs import ActionMask, SerialEnv, TransformedEnv
from torchrl.envs.custom.tictactoeenv import TicTacToeEnv

from deckgym.torchrl import RackoEnv


def illegal(td, mask_key: str) -> tuple[int, int]:
    """(illegal actions, actions) of a rollout."""
    mask, action = td[mask_key], td["action"]
    ok = mask.gather(-1, action.unsqueeze(-1)).squeeze(-1)
    return int((~ok).sum()), int(action.numel())


def racko(num_envs: int) -> RackoEnv:
    return RackoEnv(num_envs=num_envs, num_players=2, opponents=["random"], illegal_action="terminate")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=50, help="steps per rollout")
    ap.add_argument("--seed", type=int, default=0, help="torch's seed (the random actions)")
    args = ap.parse_args()
    cases = {
        "TicTacToeEnv alone": (TicTacToeEnv, "mask"),
        "SerialEnv(2, TicTacToeEnv)": (lambda: SerialEnv(2, TicTacToeEnv), "mask"),
        "RackoEnv(4) alone": (lambda: racko(4), "action_mask"),
        "SerialEnv(2, RackoEnv(4))": (lambda: SerialEnv(2, functools.partial(racko, 4)), "action_mask"),
        "TransformedEnv(SerialEnv(2, RackoEnv(4)), ActionMask())":
            (lambda: TransformedEnv(SerialEnv(2, functools.partial(racko, 4)), ActionMask()), "action_mask"),
    }
    rows = []
    for name, (make, key) in cases.items():
        torch.manual_seed(args.seed)
        env = make()
        env.set_seed(args.seed)
        with warnings.catch_warnings():  # each illegal move of the plain batched case warns
            warnings.simplefilter("ignore")
            bad, total = illegal(env.rollout(args.steps, break_when_any_done=False), key)
        env.close()
        rows.append({"case": name, "illegal": bad, "actions": total})
        print(f"{name:60s} illegal {bad:5d} of {total}")
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
