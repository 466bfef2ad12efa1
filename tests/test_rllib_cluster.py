"""Scale-out: a fake 2-node Ray cluster in this process, and a real ``ray start --head`` joined as typed.

The fake cluster (``ray.cluster_utils.Cluster``, both nodes on 127.0.0.1): its head node has no CPUs, so everything that asks for a CPU (an env runner, an arena
chunk) must be placed on the worker node: the tests check where it ran. The workers also
know one test-only agent, ``racko:killonce``, that kills its own worker process the first
time it acts anywhere (a marker file remembers it), to show a lost chunk is played again.

The real head (``ray start --head --node-ip-address 127.0.0.1``, token auth on, a temporary
HOME and temp dir, stopped by its own process group): ``deckgym eval --ray`` and ``deckgym
train --ray-address`` join it with no variable set; a client without the token, a dead
address and a malformed one each fail in one line naming the address.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from deckgym.agents import rllib_support
from deckgym.agents.rllib_support import loopback_only

loopback_only()  # before Ray is imported anywhere in this process
pytest.importorskip("ray.rllib")

import ray  # noqa: E402
from ray._common.utils import get_default_ray_temp_dir  # noqa: E402
from ray.cluster_utils import Cluster  # noqa: E402

from deckgym.cli import main as cli  # noqa: E402
from deckgym.training import rllib_train  # noqa: E402
from deckgym.training.config import build_parser  # noqa: E402
from deckgym.evaluation.arena import evaluate, play_chunks_on_ray  # noqa: E402

FAULT_MODULE = """
import os
from deckgym.agents.racko_heuristics import BucketAgent
from deckgym.agents.registry import register_agent

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
    # A local Ray of another module (init_ray(None)) leaves this process in token-auth mode with
    # its own token; the test head stands for a user's `ray start`, which inherits none of that.
    rllib_support.shutdown_ray()
    rllib_support._forget_local_auth()
    # its session files in a short folder of its own (Ray's default keeps them after the cluster stops);
    # Ray still notes the cluster's address in its default folder (and fails if that is absent): made
    # here if absent, removed after
    temp_dir = tempfile.mkdtemp(prefix="rayc", dir="/tmp")
    default = get_default_ray_temp_dir()
    made_default = not os.path.exists(default)
    c = None
    try:
        os.makedirs(default, exist_ok=True)
        c = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "node_ip_address": "127.0.0.1",
                                                          "include_dashboard": False, "temp_dir": temp_dir})
        worker = c.add_node(num_cpus=2, node_ip_address="127.0.0.1", temp_dir=temp_dir)
        pythonpath = os.pathsep.join([str(tmp), os.environ.get("PYTHONPATH", os.getcwd())])
        rllib_train.init_ray(c.address, runtime_env={"env_vars": {"PYTHONPATH": pythonpath,
                                                                  "DECKGYM_KILL_MARKER": marker},
                                                     "worker_process_setup_hook": "deckgym_killonce.setup"})
        yield c, worker.node_id, marker
    finally:
        rllib_support.shutdown_ray()
        if c is not None:
            c.shutdown()  # its processes stopped, its address note deleted
        shutil.rmtree(temp_dir, ignore_errors=True)
        if made_default:
            with contextlib.suppress(OSError):
                os.rmdir(default)  # only if empty: another Ray may have come to use it meanwhile
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


# -- a real `ray start --head` on 127.0.0.1, joined as a user types it ---------------------------------
# The head is its own process group with a temporary HOME and temp dir; the clients are the CLI in
# fresh interpreters with none of Ray's variables set (this module's own loopback switch removed).
RAY_VARS = ("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH",
            "RAY_ADDRESS")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def client_env(home) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in RAY_VARS}
    env.update(HOME=str(home), PYTHONPATH=os.environ.get("PYTHONPATH", os.getcwd()), OMP_NUM_THREADS="1",
               RAY_USAGE_STATS_ENABLED="0")
    return env


def run_cli(args: list[str], home) -> subprocess.CompletedProcess:
    # the timeout only stops a hang from blocking the suite; the assertions are on the output
    return subprocess.run([sys.executable, "-m", "deckgym", *args], env=client_env(home), capture_output=True,
                          text=True, timeout=600)


@pytest.fixture(scope="module")
def head(tmp_path_factory):
    """The README's one-machine recipe with token auth on (a token in the head's HOME)."""
    tmp = tmp_path_factory.mktemp("head")
    home = tmp / "home"
    (home / ".ray").mkdir(parents=True)
    (home / ".ray" / "auth_token").write_text(secrets.token_hex(32))
    # Ray's socket paths live under its temp dir and may not exceed 107 bytes: a short folder,
    # not pytest's deep (and run-numbered) one
    temp_dir = Path(tempfile.mkdtemp(prefix="rayh", dir="/tmp"))
    port = free_port()
    env = {**client_env(home), "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
    cmd = [os.path.join(os.path.dirname(sys.executable), "ray"), "start", "--head", "--node-ip-address", "127.0.0.1",
           "--port", str(port), "--num-cpus", "2", "--include-dashboard=false", "--dashboard-port", str(free_port()),
           "--ray-client-server-port", str(free_port()), "--temp-dir", str(temp_dir), "--block"]
    proc = None
    try:  # the folder goes whatever happens from here on, even if `ray start` cannot be started
        with open(tmp / "head.log", "w") as log:
            proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        for _ in range(180):  # `ray start` says so once the GCS and the raylet are up
            if proc.poll() is not None:
                pytest.fail(f"ray start --head exited: {(tmp / 'head.log').read_text()[-2000:]}")
            if "Ray runtime started" in (tmp / "head.log").read_text(errors="replace"):
                break
            time.sleep(1)
        yield {"address": f"127.0.0.1:{port}", "home": home, "pid": proc.pid, "tmp": tmp}
    finally:
        if proc is not None:
            stop_head(proc)
        shutil.rmtree(temp_dir, ignore_errors=True)


def stop_head(proc: subprocess.Popen) -> None:
    """Stop `ray start --block` and what it started: its own process group, never `ray stop`."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:  # it exited by itself (the failure above says why)
        pass
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # what did not drain in time
    except ProcessLookupError:
        pass
    proc.wait()


def test_the_head_listens_on_loopback_only(head):
    import psutil

    group = []
    for p in psutil.process_iter():
        try:
            if os.getpgid(p.pid) == head["pid"]:
                group.append(p)
        except ProcessLookupError:
            pass
    listening = []
    for p in group:
        try:
            listening += [(p.name(), c.laddr) for c in p.net_connections(kind="inet") if c.status == psutil.CONN_LISTEN]
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            pass
    assert any(addr.port == int(head["address"].rsplit(":", 1)[1]) for _, addr in listening)  # the GCS
    assert all(addr.ip in ("127.0.0.1", "::1", "::ffff:127.0.0.1") for _, addr in listening), listening


def test_eval_and_train_join_the_head_as_typed(head, tmp_path):
    home = head["home"]  # the same machine: the head's token is this user's ~/.ray/auth_token
    out_ray, out_local = tmp_path / "ray.json", tmp_path / "local.json"
    args = ["eval", "racko", "random", "racko:bucket", "--games", "8", "--seed", "1", "--quiet",
            "--rule", "max_turns=30"]
    r = run_cli([*args, "--ray", head["address"], "--json", str(out_ray)], home)
    assert r.returncode == 0, r.stderr[-3000:]
    r = run_cli([*args, "--ray", "--json", str(out_local)], tmp_path)  # a local Ray of its own
    assert r.returncode == 0, r.stderr[-3000:]
    assert json.loads(out_ray.read_text()) == json.loads(out_local.read_text())
    r = run_cli(["train", "racko", "--engine", "rllib", "--ray-address", head["address"], "--players", "2",
                 "--env-runners", "1", "--envs-per-runner", "4", "--train-batch", "64", "--batch-size", "32",
                 "--epochs", "1", "--net", "16", "--total-steps", "64", "--runs", str(tmp_path / "runs"),
                 "--run-name", "joined", "--opponents", "racko:bucket=1", "--quiet"], home)
    assert r.returncode == 0, r.stderr[-3000:]
    summary = json.loads((tmp_path / "runs" / "joined" / "summary.json").read_text())
    assert summary["steps"] >= 64 and os.path.isfile(summary["model"])
    assert not (tmp_path / ".ray" / "auth_token").exists()  # the local Ray above wrote no token file


def test_a_client_without_the_token_is_told_so_in_one_line(head, tmp_path):
    r = run_cli(["eval", "racko", "random", "racko:bucket", "--games", "2", "--quiet", "--ray", head["address"]],
                tmp_path)  # a HOME without ~/.ray/auth_token
    assert r.returncode != 0
    last = r.stderr.strip().splitlines()[-1]
    assert head["address"] in last and "not authorised" in last and "token" in last, r.stderr[-2000:]


def test_a_dead_address_fails_in_one_line_naming_it(tmp_path):
    address = f"127.0.0.1:{free_port()}"  # nothing listens there
    r = run_cli(["eval", "racko", "random", "racko:bucket", "--games", "2", "--quiet", "--ray", address], tmp_path)
    assert r.returncode != 0
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and address in lines[0] and "nothing listening" in lines[0], r.stderr[-2000:]
    r = run_cli(["train", "racko", "--engine", "rllib", "--ray-address", "127.0.0.1:notaport", "--quiet"], tmp_path)
    assert r.returncode != 0 and "HOST:PORT" in r.stderr.strip().splitlines()[-1]
