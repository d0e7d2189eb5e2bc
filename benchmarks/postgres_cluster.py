"""A throw-away PostgreSQL cluster for tests and benchmarks: Debian's server binaries, a
temporary folder, loopback only, stopped and removed at the end.

``with throwaway_cluster() as url:`` gives ``postgresql://postgres@127.0.0.1:PORT/postgres``;
``with running_cluster() as cluster:`` gives the same URL as ``cluster.url`` and
``cluster.restart()``, which stops the server fast (every connection cut, as an operator's
``pg_ctl restart -m fast``) and starts it again with the same settings. Run as root, the server
runs as the ``postgres`` user (PostgreSQL refuses to run as root), in a folder that user owns.
:func:`server_binaries` says where the binaries are, or None.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Cluster", "ClusterError", "running_cluster", "server_binaries", "throwaway_cluster"]

SEARCHED = tuple(Path(f"/usr/lib/postgresql/{major}/bin") for major in range(18, 12, -1))
"""Where Debian's ``postgresql`` package puts the server binaries, newest first."""


class ClusterError(RuntimeError):
    """The throw-away cluster could not be made or started."""


def server_binaries() -> Path | None:
    """The folder holding ``initdb`` and ``pg_ctl``; None when PostgreSQL is not installed."""
    for folder in SEARCHED:
        if (folder / "initdb").exists() and (folder / "pg_ctl").exists():
            return folder
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _run(command: Sequence[str], as_postgres: bool) -> None:
    full = ["runuser", "-u", "postgres", "--", *command] if as_postgres else list(command)
    done = subprocess.run(full, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ClusterError(f"{' '.join(command[:2])} failed: {done.stderr.strip() or done.stdout}")


@dataclass(frozen=True)
class Cluster:
    """A running throw-away cluster: its URL, and its folders to restart it."""

    url: str
    binaries: Path
    data: Path
    log: Path
    as_postgres: bool

    def restart(self) -> None:
        """``pg_ctl restart -m fast``: the server ends every connection, stops and starts again
        with the settings it was started with; ClusterError when it does not come back."""
        _run(
            [str(self.binaries / "pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-m",
             "fast", "-w", "-t", "60", "restart"],
            self.as_postgres,
        )  # fmt: skip


@contextmanager
def throwaway_cluster(settings: Sequence[str] = ()) -> Iterator[str]:
    """A running cluster's URL; ``settings`` are extra server settings (``"fsync=off"``).

    ClusterError when the binaries are missing or the server does not start (its log's tail
    in the message)."""
    with running_cluster(settings) as cluster:
        yield cluster.url


@contextmanager
def running_cluster(settings: Sequence[str] = ()) -> Iterator[Cluster]:
    """A running cluster (:class:`Cluster`), stopped and removed at the end; ``settings`` and
    errors as :func:`throwaway_cluster`'s."""
    binaries = server_binaries()
    if binaries is None:
        raise ClusterError("PostgreSQL's server binaries are not installed (Debian: postgresql)")
    as_postgres = os.geteuid() == 0
    folder = Path(tempfile.mkdtemp(prefix="handreader-postgres-"))
    data, log = folder / "data", folder / "server.log"
    if as_postgres:
        shutil.chown(folder, "postgres", "postgres")
    port = _free_port()
    options = [
        "-c listen_addresses=127.0.0.1",
        f"-c port={port}",
        f"-c unix_socket_directories={folder}",
        "-c max_connections=200",
        *(f"-c {setting}" for setting in settings),
    ]
    started = False
    try:
        _run(
            [str(binaries / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust",
             "-E", "UTF8", "--no-sync"],
            as_postgres,
        )  # fmt: skip
        try:
            _run(
                [str(binaries / "pg_ctl"), "-D", str(data), "-l", str(log), "-w", "-t", "60",
                 "-o", " ".join(options), "start"],
                as_postgres,
            )  # fmt: skip
        except ClusterError as error:
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise ClusterError(f"{error}\n{tail}") from None
        started = True
        url = f"postgresql://postgres@127.0.0.1:{port}/postgres"
        yield Cluster(url, binaries, data, log, as_postgres)
    finally:
        if started:
            stop = [str(binaries / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"]
            _run(stop, as_postgres)
        shutil.rmtree(folder, ignore_errors=True)
