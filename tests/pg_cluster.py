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
        os.chmod(self.tmp, 0o755)
        self.data = os.path.join(self.tmp, "data")
        self.port = _free_port()
        self.count = 0
        shutil.chown(self.tmp, "postgres", "postgres")
        self._as_pg([str(BIN / "initdb"), "-D", self.data, "-A", "trust", "-U", "postgres", "--no-sync",
                     "-E", "UTF8", "--locale=C"])
        log = os.path.join(self.tmp, "server.log")
        opts = f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.tmp} -c fsync=off -c max_connections=40"
        self._as_pg([str(BIN / "pg_ctl"), "-D", self.data, "-l", log, "-o", opts, "-w", "-t", "60", "start"])
        with open(os.path.join(self.data, "postmaster.pid")) as f:
            self.pid = int(f.readline())
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}"

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
        try:
            os.kill(self.pid, signal.SIGINT)  # the server's "fast" shutdown
            for _ in range(200):
                os.kill(self.pid, 0)
                time.sleep(0.05)
        except ProcessLookupError:
            pass
        shutil.rmtree(self.tmp, ignore_errors=True)
