"""Scale-out on a fake 2-node Ray cluster (``ray.cluster_utils.Cluster``, both nodes on 127.0.0.1).

The head node has no CPUs, so everything that asks for a CPU (an env runner, an arena
chunk) must be placed on the worker node: the tests check where it ran.
"""

from __future__ import annotations

import pytest

from agents.rllib_support import loopback_only

loopback_only()  # before Ray is imported anywhere in this process
pytest.importorskip("ray.rllib")

import ray  # noqa: E402
from ray.cluster_utils import Cluster  # noqa: E402

from training import rllib_train  # noqa: E402


@pytest.fixture(scope="module")
def cluster():
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "node_ip_address": "127.0.0.1",
                                                      "include_dashboard": False})
    worker = c.add_node(num_cpus=2, node_ip_address="127.0.0.1")
    rllib_train.init_ray(c.address)
    yield c, worker.node_id
    ray.shutdown()
    c.shutdown()


def test_env_runners_are_placed_on_the_worker_node(cluster, tmp_path):
    _, worker_id = cluster
    args = rllib_train.build_parser().parse_args(["racko", "--env-runners", "2", "--envs-per-runner", "1",
                                                  "--train-batch", "64", "--batch-size", "32", "--epochs", "1",
                                                  "--net", "16"])
    env_config = {"game": "racko", "rules_kwargs": {"num_players": 2}, "opponents": [("racko:bucket", 1.0)]}
    algo = rllib_train.build_config(args, env_config).build_algo()
    try:
        nodes = algo.env_runner_group.foreach_env_runner(lambda er: ray.get_runtime_context().get_node_id(),
                                                         local_env_runner=False)
        assert nodes == [worker_id, worker_id]
        res = algo.train()
        assert res["env_runners"]["num_env_steps_sampled_lifetime"] >= 64  # sampled there, learned here
    finally:
        algo.stop()
    assert all(n["NodeManagerAddress"] == "127.0.0.1" for n in ray.nodes())
