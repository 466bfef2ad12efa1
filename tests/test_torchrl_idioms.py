"""TorchRL's own parts on the deckgym envs, unchanged: masked specs, random policies,
collectors, batched envs, the ActionMask transform, batch_size and device, and the PPO
tutorial's pattern (GAE + ClipPPOLoss over a Collector with a MaskedCategorical policy).

Every env here refuses an illegal learner action (``illegal_action="raise"``), so a run that
finishes played only legal actions.
"""

from __future__ import annotations

import functools

import pytest

pytest.importorskip("torchrl")

import torch  # noqa: E402
from tensordict.nn import TensorDictModule  # noqa: E402
from torchrl.collectors import Collector  # noqa: E402
from torchrl.envs import ActionMask, ParallelEnv, SerialEnv, TransformedEnv  # noqa: E402
from torchrl.envs.utils import check_env_specs  # noqa: E402
from torchrl.modules import MaskedCategorical, ProbabilisticActor, ValueOperator  # noqa: E402
from torchrl.modules.tensordict_module.exploration import RandomPolicy  # noqa: E402
from torchrl.objectives import ClipPPOLoss  # noqa: E402
from torchrl.objectives.value import GAE  # noqa: E402

from deckgym.torchrl import LeastScoreEnv, RackoEnv  # noqa: E402


def strict(cls=RackoEnv, n=4, **kw):
    return cls(n, opponents=["random"], seed=0, illegal_action="raise", **kw)


def legal(td) -> bool:
    """Every action in a rollout was legal in the state it was played in."""
    a, m = td["action"], td["action_mask"]
    return bool(m.gather(-1, a.unsqueeze(-1)).all())


@pytest.mark.parametrize("cls", [RackoEnv, LeastScoreEnv])
def test_the_action_spec_mask_is_kept_current(cls):
    env = strict(cls)
    td = env.reset()
    assert torch.equal(env.action_spec.mask, td["action_mask"])
    for _ in range(60):
        out, td = env.step_and_maybe_reset(env.rand_action(td))  # with TorchRL's partial reset of finished games
        assert legal(out)
        assert torch.equal(env.action_spec.mask, td["action_mask"])
    check_env_specs(strict(cls))


def test_rollout_rand_action_and_random_policy_are_legal():
    env = strict(n=8)
    td = env.rollout(60, break_when_any_done=False)  # env.rand_action, no override
    assert legal(td)
    td = env.rollout(60, RandomPolicy(env.action_spec), break_when_any_done=False)
    assert legal(td)
    assert "rand_action" not in type(env).__dict__ and "rand_action" not in RackoEnv.__mro__[1].__dict__


def test_collector_without_a_policy_is_legal():
    env = strict(n=8)
    collector = Collector(env, None, frames_per_batch=64, total_frames=256)
    batches = [b for b in collector]
    collector.shutdown()
    assert len(batches) == 4 and all(legal(b) for b in batches)


def test_action_mask_transform_and_batched_envs():
    env = TransformedEnv(strict(), ActionMask())
    assert legal(env.rollout(30, break_when_any_done=False))
    serial = TransformedEnv(SerialEnv(2, functools.partial(strict, RackoEnv, 3)), ActionMask())
    td = serial.rollout(30, break_when_any_done=False)
    assert td.batch_size[:1] == torch.Size([2]) and legal(td)
    serial.close()


def test_batch_size_is_an_alias_of_num_envs():
    assert RackoEnv(batch_size=[8], opponents=["random"]).batch_size == torch.Size([8])
    assert RackoEnv(batch_size=torch.Size([3]), self_play=True).num_envs == 3
    assert RackoEnv(6, batch_size=[6], opponents=["random"]).num_envs == 6
    with pytest.raises(ValueError, match=r"disagree: give num_envs=B alone"):
        RackoEnv(4, batch_size=[8])
    with pytest.raises(ValueError, match=r"batch_size must be \[B\], one dimension .*num_envs"):
        RackoEnv(batch_size=[2, 4])


def test_an_unavailable_device_is_one_line_of_ours():
    bad = "cuda:999" if torch.cuda.is_available() else "cuda"
    with pytest.raises(ValueError) as err:
        RackoEnv(4, device=bad, opponents=["random"])
    assert f"device {bad!r} is not available" in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(ValueError, match="device must be a torch device"):
        RackoEnv(4, device="nowhere")


def make_env():
    return RackoEnv(4, opponents=["random"], seed=0, illegal_action="raise", max_turns=40)


def test_the_ppo_tutorial_pattern_runs_in_a_parallel_env():
    """TorchRL's PPO tutorial: GAE + ClipPPOLoss over a Collector, a MaskedCategorical actor."""
    torch.manual_seed(0)
    env = ParallelEnv(2, make_env)
    probe = make_env()
    D, A = probe.observation_size, probe.num_actions
    actor_net = TensorDictModule(torch.nn.Sequential(torch.nn.Linear(D, 32), torch.nn.Tanh(), torch.nn.Linear(32, A)),
                                 in_keys=["observation"], out_keys=["logits"])
    actor = ProbabilisticActor(actor_net, in_keys={"logits": "logits", "mask": "action_mask"}, out_keys=["action"],
                               distribution_class=MaskedCategorical, return_log_prob=True)
    critic = ValueOperator(torch.nn.Sequential(torch.nn.Linear(D, 32), torch.nn.Tanh(), torch.nn.Linear(32, 1)),
                           in_keys=["observation"])
    gae = GAE(gamma=0.99, lmbda=0.95, value_network=critic)
    loss = ClipPPOLoss(actor, critic)
    opt = torch.optim.Adam(loss.parameters(), lr=1e-3)
    collector = Collector(env, actor, frames_per_batch=128, total_frames=384)
    losses = []
    try:
        for batch in collector:
            assert legal(batch)
            with torch.no_grad():
                gae(batch)
            out = loss(batch.reshape(-1))
            total = out["loss_objective"] + out["loss_critic"] + out["loss_entropy"]
            opt.zero_grad()
            total.backward()
            opt.step()
            collector.update_policy_weights_()
            losses.append(float(total))
    finally:
        collector.shutdown()  # closes the env too
    assert len(losses) == 3 and all(torch.isfinite(torch.tensor(losses)))
