"""What every Ray feature needs before it uses Ray: the extra, a local Ray, or a cluster joined as typed.

Ray (with RLlib) is the optional extra ``rllib``; nothing in deckgym imports it at module
level. Code that needs it calls :func:`require_ray` (one line naming the extra when it is
missing) or :func:`init_ray` (a Ray to work on).

**A local Ray** (no address) is bound to and advertised on 127.0.0.1. Ray turns
``127.0.0.1`` into the machine's reachable address (and listens on every interface)
unless its "no cluster" switch ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` is set, so it is set
first. Ray 2.60 turns token authentication on for every Ray that ``ray.init()`` starts
and writes a token to ``~/.ray/auth_token`` if there is none; that file then switches
token auth on for every later ``ray start --head`` of the user. Unless ``RAY_AUTH_MODE``
or a token is already set, the local Ray gets a fresh token in the environment
(``RAY_AUTH_TOKEN``, inherited by the raylet and the workers): authenticated, and no file
is written. Ray keeps each session's files (logs, sockets) in ``ray/`` of the temp dir after the
session ends; the local Ray writes them in a folder of its own instead, removed when it stops
(:func:`shutdown_ray`, or at exit).

**A cluster** (``HOST:PORT`` or ``auto``) is checked before Ray is handed the address:

1. a TCP connection to the GCS port (5 s): nothing listening fails at once;
2. a GCS handshake in a child process (at most 15 s; Ray's own client retries for
   minutes): it tells an unauthorised client (no token, or not the head's) and a port
   that is not a Ray head, and lists where the nodes registered;
3. the join, as typed: a head registered on 127.0.0.1 (``ray start --head
   --node-ip-address 127.0.0.1`` with the switch above) is joined on 127.0.0.1 (without
   the switch Ray would rewrite the address to the machine's other interface, where such
   a head does not listen, and retry forever); a head registered elsewhere is joined at
   that address.

Token auth: with ``RAY_AUTH_MODE`` unset, a client that finds a token (``RAY_AUTH_TOKEN``,
the file named by ``RAY_AUTH_TOKEN_PATH``, or ``~/.ray/auth_token``) and meets a cluster
that asks for one uses it (``RAY_AUTH_MODE=token``); every failure is one
:class:`RayConnectError` line naming the address and the likely cause.
"""

from __future__ import annotations

import atexit
import importlib
import ipaddress
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
from typing import Any

from deckgym.extras import MissingExtraError, install_hint

CLUSTER_SWITCH = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
TCP_TIMEOUT_S = 5.0
HANDSHAKE_TIMEOUT_S = 15.0
_own_token: str | None = None  # the token this process made up for its local Ray
# Ray puts its Unix sockets under its temp folder, and an AF_UNIX path has at most 107 bytes on
# Linux: the deepest, <folder>/session_<date>_<pid>/sockets/plasma_store, adds 64 to the folder's
RAY_SOCKET_TAIL = 64
AF_UNIX_MAX = 107
RAY_TEMP_PREFIX = "deckgym-ray-"
_own_dirs: list[str] = []  # the folders of the local Rays this process started (removed when they stop)


class RayMissingError(MissingExtraError):
    """Ray or RLlib is not installed (the ``rllib`` extra)."""


class RayConnectError(ConnectionError):
    """A Ray cluster address that cannot be joined; the message names the address and why."""


def require_ray(feature: str = "this feature") -> Any:
    """The ``ray`` module, with RLlib importable; :class:`RayMissingError` in one line otherwise."""
    try:
        ray = importlib.import_module("ray")
        importlib.import_module("ray.rllib")
    except ImportError as exc:
        raise RayMissingError(f"{feature} needs the 'rllib' extra (Ray with RLlib), which is not installed "
                              f"(no module {exc.name or exc!r}): {install_hint('rllib')}") from None
    return ray


def _cluster_switch(on: bool) -> None:
    """Ray's "no cluster" switch, in the environment (children) and, if Ray is imported, its constants."""
    os.environ[CLUSTER_SWITCH] = "1" if on else "0"
    constants = sys.modules.get("ray._private.ray_constants")
    if constants is not None:
        constants.ENABLE_RAY_CLUSTER = on


def loopback_only() -> None:
    """Make a Ray started (or joined on 127.0.0.1) by this process bind and advertise 127.0.0.1 only.

    The switch is read when Ray is imported, so it is set in the environment first
    (inherited by the raylet and the workers) and, if Ray is already imported, in its
    constants too.
    """
    _cluster_switch(False)
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")


def _refresh_auth() -> None:
    """Make an imported Ray re-read ``RAY_AUTH_MODE`` and the token after the environment changed."""
    raylet = sys.modules.get("ray._raylet")
    if raylet is None:
        return
    raylet.Config.initialize("")
    raylet.AuthenticationTokenLoader.instance().reset_cache()


def token_source() -> str | None:
    """Where this process would find a Ray token (the variable or the file), or None."""
    if os.environ.get("RAY_AUTH_TOKEN") and os.environ["RAY_AUTH_TOKEN"] != _own_token:
        return "RAY_AUTH_TOKEN"
    path = os.environ.get("RAY_AUTH_TOKEN_PATH") or os.path.join(os.path.expanduser("~"), ".ray", "auth_token")
    return path if os.path.isfile(path) and os.path.getsize(path) > 0 else None


def _local_auth() -> None:
    """Token auth for a local Ray without writing ``~/.ray/auth_token`` (see the module doc)."""
    global _own_token
    if os.environ.get("RAY_AUTH_MODE") is not None and _own_token is None:
        return  # the user's choice
    os.environ["RAY_AUTH_MODE"] = "token"
    if token_source() is None:
        _own_token = os.environ["RAY_AUTH_TOKEN"] = _own_token or secrets.token_hex(32)
    _refresh_auth()


def _forget_local_auth() -> None:
    """Before joining a cluster: drop what :func:`_local_auth` set (the cluster has its own token)."""
    global _own_token
    if _own_token is None:
        return
    if os.environ.get("RAY_AUTH_TOKEN") == _own_token:
        del os.environ["RAY_AUTH_TOKEN"]
    os.environ.pop("RAY_AUTH_MODE", None)
    _own_token = None
    _refresh_auth()


def parse_address(address: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[v6]:PORT`` too) as ``(host, port)``; ``ValueError`` naming the address otherwise."""
    host, sep, port = str(address).strip().rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"Ray address {address!r} must be HOST:PORT (such as 10.0.0.5:6379) or 'auto'")
    return host, int(port)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


# Run in a child process: Ray's GCS client blocks for minutes on a wrong port, and its
# auth mode is read once per process.
_HANDSHAKE = r"""
import json, sys, time
try:
    from ray._raylet import GcsClient
    client = GcsClient(address=sys.argv[1])
    for _ in range(10):  # a head just started registers its raylet a few seconds after the GCS opens
        nodes = client.get_all_node_info(timeout=5)
        alive = [n.node_manager_address for n in nodes.values() if n.state == 0]
        head = [n.node_manager_address for n in nodes.values() if n.state == 0 and n.is_head_node]
        if alive:
            break
        time.sleep(1)
    print(json.dumps({"ok": True, "nodes": alive, "head": head}))
except Exception as exc:
    auth = type(exc).__name__ == "AuthenticationError" or "InvalidAuthToken" in str(exc)
    print(json.dumps({"ok": False, "auth": auth, "error": str(exc).splitlines()[0] if str(exc) else type(exc).__name__}))
"""


def _handshake(address: str, token_mode: bool | None) -> dict[str, Any]:
    env = {**os.environ, "RAY_BACKEND_LOG_LEVEL": "fatal"}
    if token_mode is not None:
        env["RAY_AUTH_MODE"] = "token" if token_mode else "disabled"
    try:
        out = subprocess.run([sys.executable, "-c", _HANDSHAKE, address], env=env, capture_output=True, text=True,
                             timeout=HANDSHAKE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return {"ok": False, "auth": False, "timeout": True}
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        return {"ok": False, "auth": False, "error": (out.stderr.strip().splitlines() or ["no answer"])[-1]}
    return json.loads(lines[-1])


def check_cluster(address: str) -> dict[str, Any]:
    """Check that a Ray head answers at ``address`` and lets this process in (see the module doc).

    Returns the handshake's answer (``nodes``: where the alive nodes registered, ``head``,
    ``token``: whether a token is needed); :class:`RayConnectError` in one line otherwise.
    Sets ``RAY_AUTH_MODE=token`` in this process when the cluster asks for the token it has.
    """
    host, port = parse_address(address)
    try:
        socket.create_connection((host, port), timeout=TCP_TIMEOUT_S).close()
    except socket.timeout:
        raise RayConnectError(f"Ray cluster at {address}: no answer within {TCP_TIMEOUT_S:.0f} s (a firewall, "
                              f"or no such host)") from None
    except OSError as exc:
        why = "nothing listening there (is `ray start --head` running, on that port?)" \
            if isinstance(exc, ConnectionRefusedError) else (exc.strerror or str(exc))
        raise RayConnectError(f"Ray cluster at {address}: cannot connect: {why}") from None
    explicit = os.environ.get("RAY_AUTH_MODE")
    answer = _handshake(address, None)
    if not answer["ok"] and answer.get("auth") and explicit is None and token_source() is not None:
        answer = _handshake(address, True)
        if answer["ok"]:
            os.environ["RAY_AUTH_MODE"] = "token"
            _refresh_auth()
            answer["token"] = True
    if answer["ok"]:
        if not answer["nodes"]:
            raise RayConnectError(f"Ray cluster at {address}: the head answers but has no alive node")
        return answer
    if answer.get("timeout"):
        raise RayConnectError(f"Ray cluster at {address}: something listens there but it is not a Ray head "
                              f"(no GCS handshake within {HANDSHAKE_TIMEOUT_S:.0f} s; the port of "
                              f"`ray start --head --port`?)")
    if answer.get("auth"):
        src = token_source()
        if src is None:
            why = ("the cluster requires a token and none was found here (~/.ray/auth_token, RAY_AUTH_TOKEN or "
                   "RAY_AUTH_TOKEN_PATH): copy the head's ~/.ray/auth_token to this machine")
        elif explicit is not None and explicit.lower() != "token":
            why = f"the cluster requires a token but RAY_AUTH_MODE={explicit} here: unset it or set it to token"
        else:
            why = f"the cluster rejected the token from {src}: it is not the head's ~/.ray/auth_token"
        raise RayConnectError(f"Ray cluster at {address}: not authorised: {why}")
    raise RayConnectError(f"Ray cluster at {address}: the handshake failed: {answer.get('error')}")


def resolve_address(address: str) -> str:
    """``auto`` as the address of the Ray this machine runs (``RAY_ADDRESS`` or the last ``ray start``)."""
    if address != "auto":
        return address
    from ray._private.services import get_ray_address_from_environment

    found = get_ray_address_from_environment("auto", None)
    if not found:
        raise RayConnectError("Ray cluster at 'auto': no running Ray found on this machine (RAY_ADDRESS unset and "
                              "no `ray start` here); give HOST:PORT")
    return found


def init_ray(address: str | None, num_cpus: int | None = None, runtime_env: dict[str, Any] | None = None) -> Any:
    """Join the cluster at ``address`` (checked first), or start a local Ray bound to 127.0.0.1.

    Workers get ``OMP_NUM_THREADS=1`` (a CPU per worker, not a thread pool each) and no
    usage reporting, plus ``runtime_env`` (its ``env_vars`` merged). Returns the ``ray``
    module; a Ray already initialised is reused as it is.
    """
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if not address:
        loopback_only()
    ray = require_ray("Ray (--engine rllib, --ray)")
    if ray.is_initialized():
        return ray
    extra = dict(runtime_env or {})
    runtime_env = {**extra, "env_vars": {"OMP_NUM_THREADS": "1", "RAY_USAGE_STATS_ENABLED": "0",
                                         **extra.get("env_vars", {})}}
    if address:
        if str(address).startswith("ray://"):
            raise ValueError(f"Ray address {address!r}: Ray Client (ray://) is not supported; give the head's "
                             f"GCS address HOST:PORT")
        _forget_local_auth()
        address = resolve_address(str(address))
        answer = check_cluster(address)
        host, port = parse_address(address)
        if is_loopback(host) and any(is_loopback(n) for n in answer["nodes"]):
            _cluster_switch(False)  # keep 127.0.0.1: the head listens there only
        else:
            _cluster_switch(True)
            if is_loopback(host) and answer["head"]:
                address = f"{answer['head'][0]}:{port}"  # where the head registered (and listens)
        ray.init(address=address, runtime_env=runtime_env, log_to_driver=False)
    else:
        _local_auth()
        # "local": always a fresh Ray of our own, never one found on this machine (another
        # user's, or a test cluster that may stop under us)
        temp_dir = _local_temp_dir()
        _own_dirs.append(temp_dir)
        try:
            ray.init(address="local", include_dashboard=False, _node_ip_address="127.0.0.1", num_cpus=num_cpus,
                     runtime_env=runtime_env, log_to_driver=False, _temp_dir=temp_dir)
        except BaseException:
            _stop_local_ray(ray, temp_dir)
            raise
        # registered after Ray's own exit hook (set when Ray was imported), so it runs first:
        # Ray stops its processes, then the folder they wrote in goes
        atexit.register(_stop_local_ray, ray, temp_dir)
    return ray


def _local_temp_dir() -> str:
    """A fresh folder of our own for a local Ray's session files (Ray's default, ``ray/`` in
    ``RAY_TMPDIR``, ``TMPDIR`` or ``/tmp``, keeps every session's folder after it ends).

    It is made where Ray's default would be when the socket paths fit under it, else in
    ``/tmp``: a deep temp dir would push them past the AF_UNIX limit (see ``RAY_SOCKET_TAIL``).
    """
    base = os.environ.get("RAY_TMPDIR") or tempfile.gettempdir()
    if len(os.path.join(base, RAY_TEMP_PREFIX + "x" * 8).encode()) + RAY_SOCKET_TAIL > AF_UNIX_MAX:
        base = "/tmp"
    return tempfile.mkdtemp(prefix=RAY_TEMP_PREFIX, dir=base)


def _stop_local_ray(ray: Any, temp_dir: str) -> None:
    """Stop the local Ray that wrote in ``temp_dir`` (its processes first), then remove that folder."""
    node = getattr(ray._private.worker, "_global_node", None)
    if node is not None and os.path.realpath(node.get_temp_dir_path()) == os.path.realpath(temp_dir):
        ray.shutdown(wait_for_processes=True)
    shutil.rmtree(temp_dir, ignore_errors=True)
    if temp_dir in _own_dirs:
        _own_dirs.remove(temp_dir)


def shutdown_ray() -> None:
    """Stop (or leave) the Ray of :func:`init_ray` now, not at exit; a local Ray's folder goes with it."""
    ray = sys.modules.get("ray")
    if ray is None:
        return
    for temp_dir in list(_own_dirs):
        _stop_local_ray(ray, temp_dir)
    ray.shutdown()
