"""Scale-out on a fake 2-node Ray cluster (``ray.cluster_utils.Cluster``, both nodes on 127.0.0.1).

The head node has no CPUs, so everything that asks for a CPU (an env runner, an arena
chunk) must be placed on the worker node: the tests check where it ran. The workers also
know one test-only agent, ``racko:killonce``, that kills its own worker process the first
time it acts anywhere (a marker file remembers it), to show a lost chunk is played again.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap

import pytest

from agents.rllib_support import loopback_only

loopback_only()  # before Ray is imported anywhere in this process
pytest.importorskip("ray.rllib")

import ray  # noqa: E402
from ray.cluster_utils import Cluster  # noqa: E402

from deckgym.cli import main as cli  # noqa: E402
from training import rllib_train  # noqa: E402
from training.args import build_parser  # noqa: E402
from evaluation.arena import evaluate, play_chunks_on_ray  # noqa: E402

FAULT_MODULE = """
import os
from agents.racko_heuristics import BucketAgent
from agents.registry import register_agent

class KillOnceAgent(BucketAgent):
    def act(self, observations, action_masks):
        marker = os.environ["DECKGYM_KILL_MARKER"]
        if not os.path.exists(marker):
            open(marker, "w").close()
            os._exit(1)  # the worker process dies in the middle of its chunk
        return super().act(observations, action_masks)

def setup():
    register_agent("racko:killonce", "deckgym_killonce:KillOnceAgent")
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("fault")
    (tmp / "deckgym_killonce.py").write_text(textwrap.dedent(FAULT_MODULE))
    marker = str(tmp / "killed")
    sys.path.insert(0, str(tmp))
    os.environ["DECKGYM_KILL_MARKER"] = marker
    import deckgym_killonce

    deckgym_killonce.setup()
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "node_ip_address": "127.0.0.1",
                                                      "include_dashboard": False})
    worker = c.add_node(num_cpus=2, node_ip_address="127.0.0.1")
    pythonpath = os.pathsep.join([str(tmp), os.environ.get("PYTHONPATH", os.getcwd())])
    rllib_train.init_ray(c.address, runtime_env={"env_vars": {"PYTHONPATH": pythonpath, "DECKGYM_KILL_MARKER": marker},
                                                 "worker_process_setup_hook": "deckgym_killonce.setup"})
    yield c, worker.node_id, marker
    ray.shutdown()
    c.shutdown()
    sys.path.remove(str(tmp))


def test_env_runners_are_placed_on_the_worker_node(cluster, tmp_path):
    _, worker_id, _ = cluster
    args = build_parser(engine="rllib").parse_args(["racko", "--env-runners", "2", "--envs-per-runner", "1",
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


def test_arena_chunks_run_on_the_worker_node_and_equal_the_local_run(cluster):
    _, worker_id, _ = cluster
    # random breaks its ties with its own generator: the chunk seeding is what makes them equal
    kw = dict(deals=21, seed=4, batch=16, rules_kwargs={"max_turns": 40})  # 8 deals a chunk: 3 chunks
    local = evaluate("racko", ["random", "racko:bucket"], **kw)
    seen: list[int] = []
    remote = evaluate("racko", ["random", "racko:bucket"], ray=True, progress=seen.append, **kw)
    assert json.dumps(remote.to_json()) == json.dumps(local.to_json())
    assert sorted(seen) == [10, 16, 16]  # one call per finished chunk (in any order), with its games
    jobs = [("racko", {"num_players": 2, "max_turns": 40}, False, ["random", "racko:bucket"],
             ["random", "racko:bucket"], 4, k, 8 * k, min(21, 8 * k + 8)) for k in range(3)]
    assert [node for _, node in play_chunks_on_ray(jobs)] == [worker_id] * 3


def test_a_chunk_whose_worker_dies_is_played_again_with_the_same_result(cluster, tmp_path):
    _, _, marker = cluster
    assert not os.path.exists(marker)
    out_ray, out_local = tmp_path / "ray.json", tmp_path / "local.json"
    args = ["eval", "racko", "racko:killonce", "racko:bucket", "--games", "12", "--seed", "2", "--quiet",
            "--rule", "max_turns=30"]
    assert cli([*args, "--ray", "auto", "--json", str(out_ray)]) == 0
    assert os.path.exists(marker)  # a worker did die, and the chunk was retried
    assert cli([*args, "--json", str(out_local)]) == 0  # the marker exists: no death in this process
    assert json.loads(out_ray.read_text()) == json.loads(out_local.read_text())
