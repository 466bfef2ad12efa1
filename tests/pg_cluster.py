"""A throwaway PostgreSQL server for the ladder tests: ``initdb`` and ``pg_ctl`` from Debian's
``postgresql`` package, run as the ``postgres`` user in a temporary folder, listening on
127.0.0.1 at a free port, stopped by its process id at the end.

Without the package (or without root, to run as ``postgres``) the tests that need it fail,
saying how to install it (``make test`` does, as root with apt); they are never skipped.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

BIN = Path(os.environ.get("DECKGYM_PG_BIN", "/usr/lib/postgresql/15/bin"))
INSTALL = "install it with: apt-get install -y postgresql (make test does it when run as root)"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PgCluster:
    """One running server; :meth:`database` makes a fresh, empty database and returns its URL."""

    def __init__(self) -> None:
        if not (BIN / "initdb").exists() or not (BIN / "pg_ctl").exists():
            pytest.fail(f"PostgreSQL 15 is not installed ({BIN}/initdb missing); {INSTALL}")
        if os.geteuid() != 0 or shutil.which("runuser") is None:
            pytest.fail("the PostgreSQL tests start a server as the postgres user: run them as root")
        self.tmp = tempfile.mkdtemp(prefix="deckgym-pg-")
        self.pid: int | None = None
        self.data = os.path.join(self.tmp, "data")
        self.port = _free_port()
        self.count = 0
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}"
        try:  # a server that does not come up leaves nothing behind either
            os.chmod(self.tmp, 0o755)
            shutil.chown(self.tmp, "postgres", "postgres")
            self._as_pg([str(BIN / "initdb"), "-D", self.data, "-A", "trust", "-U", "postgres", "--no-sync",
                         "-E", "UTF8", "--locale=C"])
            log = os.path.join(self.tmp, "server.log")
            opts = f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.tmp} -c fsync=off -c max_connections=40"
            self._as_pg([str(BIN / "pg_ctl"), "-D", self.data, "-l", log, "-o", opts, "-w", "-t", "60", "start"])
        finally:
            pid_file = os.path.join(self.data, "postmaster.pid")
            if os.path.exists(pid_file):
                with open(pid_file) as f:
                    self.pid = int(f.readline())
        if self.pid is None:
            self.stop()
            raise RuntimeError("the PostgreSQL server did not start (no postmaster.pid)")

    def _as_pg(self, cmd: list[str]) -> None:
        subprocess.run(["runuser", "-u", "postgres", "--"] + cmd, check=True, capture_output=True, timeout=120,
                       cwd=self.tmp)

    def database(self) -> str:
        import psycopg

        self.count += 1
        name = f"ladder{self.count}"
        with psycopg.connect(f"{self.url}/postgres", autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return f"{self.url}/{name}"

    def stop(self) -> None:
        """Stop the server by its process id (a "fast" shutdown, an immediate one if that hangs), then
        remove its folder."""
        for sig in (signal.SIGINT, signal.SIGQUIT):
            if self.pid is None or not _alive(self.pid):
                break
            os.kill(self.pid, sig)
            for _ in range(200):
                if not _alive(self.pid):
                    break
                time.sleep(0.05)
        shutil.rmtree(self.tmp, ignore_errors=True)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs. pg_ctl leaves the server an orphan, and where nothing reaps orphans its
    exit leaves a zombie that a signal still reaches."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0] != "Z"
    except OSError:  # no /proc: the signal's answer
        return True
