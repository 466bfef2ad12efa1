"""What every Ray feature needs before it imports Ray: one clear error when Ray is missing.

Ray (with RLlib) is the optional extra ``rllib``; nothing in deckgym imports it at module
level. Code that needs it calls :func:`require_ray` first, so a user without the extra
gets one line naming it instead of a traceback from deep inside an import.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

INSTALL_HINT = "pip install 'deckgym[rllib]'"


class RayMissingError(ImportError):
    """Ray or RLlib is not installed (the ``rllib`` extra)."""


def require_ray(feature: str = "this feature") -> Any:
    """The ``ray`` module, with RLlib importable; :class:`RayMissingError` in one line otherwise."""
    try:
        ray = importlib.import_module("ray")
        importlib.import_module("ray.rllib")
    except ImportError as exc:
        raise RayMissingError(f"{feature} needs Ray with RLlib, which is not installed ({exc.name or exc}): "
                              f"{INSTALL_HINT}") from None
    return ray


def loopback_only() -> None:
    """Make a Ray started by this process bind and advertise 127.0.0.1 only.

    Ray turns ``_node_ip_address="127.0.0.1"`` into the machine's reachable address (and
    listens on every interface) unless its "no cluster" switch is off; the switch is read
    when Ray is imported, so it is set in the environment first (inherited by the raylet
    and the workers) and, if Ray is already imported, in its constants too. Only for a
    local Ray: a process that joins a real cluster must not call this.
    """
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    constants = sys.modules.get("ray._private.ray_constants")
    if constants is not None:
        constants.ENABLE_RAY_CLUSTER = False


def init_ray(address: str | None, num_cpus: int | None = None, runtime_env: dict[str, Any] | None = None) -> Any:
    """Join ``address``, or start a local Ray bound to 127.0.0.1 without a dashboard.

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
        ray.init(address=address, runtime_env=runtime_env, log_to_driver=False)
    else:
        # "local": always a fresh Ray of our own, never one found on this machine (another
        # user's, or a test cluster that may stop under us)
        ray.init(address="local", include_dashboard=False, _node_ip_address="127.0.0.1", num_cpus=num_cpus,
                 runtime_env=runtime_env, log_to_driver=False)
    return ray
