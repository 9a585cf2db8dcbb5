"""A throwaway PostgreSQL cluster in a temporary folder, from Debian's ``postgresql`` binaries
(initdb + pg_ctl; as root they run as the ``postgres`` user, since the server refuses root).
Tests that need it skip with a message when the binaries are missing."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest


def _bin_dir() -> Path | None:
    found = shutil.which("pg_ctl")
    if found:
        return Path(os.path.realpath(found)).parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin"))
    return Path(versions[-1]) if versions else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ThrowawayCluster:
    """initdb in a temp folder, start on a free port, drop everything on stop."""

    def __init__(self) -> None:
        bin_dir = _bin_dir()
        if bin_dir is None or not (bin_dir / "initdb").exists():
            raise FileNotFoundError("PostgreSQL binaries (initdb, pg_ctl) not found")
        self.bin_dir = bin_dir
        self.root = Path(tempfile.mkdtemp(prefix="voxeval-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self.user = "voxeval"
        self._as_postgres = os.geteuid() == 0

    def _run(self, *args: str) -> None:
        command = [str(self.bin_dir / args[0]), *args[1:]]
        if self._as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        subprocess.run(command, check=True, capture_output=True, timeout=120)

    def start(self) -> ThrowawayCluster:
        if self._as_postgres:
            shutil.chown(self.root, user="postgres")
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", self.user, "-E", "UTF8")
        options = f"-k {self.root} -p {self.port} -h 127.0.0.1 -c max_connections=200 -c fsync=off"
        self._run(
            "pg_ctl",
            "-D",
            str(self.data),
            "-o",
            options,
            "-l",
            str(self.root / "log"),
            "-w",
            "start",
        )
        return self

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://{self.user}@127.0.0.1:{self.port}/{database}"

    def create_database(self) -> str:
        """A new empty database; returns its SQLAlchemy URL."""
        import psycopg

        name = "t_" + uuid.uuid4().hex[:12]
        conninfo = f"host=127.0.0.1 port={self.port} user={self.user} dbname=postgres"
        with psycopg.connect(conninfo, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[ThrowawayCluster]:
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip("psycopg is not installed (the 'web' extra)")
    try:
        cluster = ThrowawayCluster().start()
    except (FileNotFoundError, subprocess.CalledProcessError, OSError) as exc:
        pytest.skip(
            f"no local PostgreSQL server could be started ({exc}); "
            "`apt-get install postgresql` (make setup tries it)"
        )
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def postgres_url(postgres_cluster: ThrowawayCluster) -> str:
    """The SQLAlchemy URL of a fresh, empty database on the session's throwaway cluster."""
    return postgres_cluster.create_database()
