"""A real Redis server on loopback, for the follow store's tests and the replica tests that share one.

``RedisServer`` runs Debian's ``redis-server`` (``apt-get install redis-server``) on a free
loopback port with persistence off, from a temporary folder of its own, and is ready when it
answers PING. ``stop()`` and ``start()`` (on the same port, so a client keeps its URL) let a test
take Redis away mid-way and bring it back; ``pause()`` and ``resume()`` freeze it (SIGSTOP), for a
Redis that accepts connections and never answers. Nothing survives a stop: persistence is off.

Without redis-server, ``require_redis_server()`` skips, except where PE_REQUIRE_BROWSER=1 (CI),
where it fails, as a missing HAProxy does for the replica tests (tests/deploy/test_deploy.py).
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

from .st_client import free_port

REDIS_START_TIMEOUT_S = 15.0
LOG_FILE = "redis.log"


def redis_server_binary() -> str | None:
    """redis-server's path, or None where it is not installed."""
    return shutil.which("redis-server") or next(
        (path for path in ("/usr/bin/redis-server", "/usr/sbin/redis-server") if Path(path).exists()), None
    )


def require_redis_server() -> str:
    """redis-server's path, or skip the test (fail where PE_REQUIRE_BROWSER=1: CI must run it)."""
    import pytest  # here, so that benchmarks can import the harness without pytest

    found = redis_server_binary()
    if found is None:
        reason = "redis-server is not installed (apt-get install redis-server)"
        if os.environ.get("PE_REQUIRE_BROWSER") == "1":
            pytest.fail(f"PE_REQUIRE_BROWSER=1 but {reason}", pytrace=False)
        pytest.skip(reason)
    return found


def _ping(port: int, timeout_s: float = 0.5) -> bool:
    """Whether Redis on 127.0.0.1:``port`` answers PING (plain RESP over a socket: no client library needed)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout_s) as sock:
            sock.sendall(b"PING\r\n")
            # With --requirepass, it answers NOAUTH: it is up all the same.
            return sock.recv(64).startswith((b"+PONG", b"-NOAUTH"))
    except OSError:
        return False


class RedisServer:
    """``redis-server`` on 127.0.0.1 at a free port, persistence off (use ``with``).

    ``url`` (``redis://127.0.0.1:<port>/0``) stays the same across ``stop()`` and ``start()``.
    """

    def __init__(self, *extra_args: str) -> None:
        binary = redis_server_binary()
        if binary is None:
            raise FileNotFoundError("redis-server is not installed (apt-get install redis-server)")
        self._binary = binary
        self._extra_args = list(extra_args)
        self.folder = Path(tempfile.mkdtemp(prefix="pe-redis-"))
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._process: subprocess.Popen[bytes] | None = None
        try:
            self.start()
        except BaseException:
            self.close()
            raise

    def start(self) -> None:
        """Start the server (again) on the same port, and wait until it answers PING."""
        if self.running:
            return
        command = [
            self._binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
            "--dir", str(self.folder), "--daemonize", "no", *self._extra_args,
        ]
        with open(self.folder / LOG_FILE, "ab") as log:
            self._process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + REDIS_START_TIMEOUT_S
        while not _ping(self.port):
            if self._process.poll() is not None:
                raise RuntimeError(f"redis-server exited with {self._process.returncode}:\n{self.log()[-3000:]}")
            if time.monotonic() > deadline:
                self.stop()
                raise TimeoutError(f"redis-server did not answer PING within {REDIS_START_TIMEOUT_S:.0f} s:\n"
                                   f"{self.log()[-3000:]}")
            time.sleep(0.05)

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def stop(self) -> None:
        """Stop the server (its data is gone: persistence is off); the port is free until ``start()``."""
        if self._process is None:
            return
        if self._process.poll() is None:
            os.killpg(self._process.pid, signal.SIGCONT)  # a paused server cannot handle SIGTERM
            os.killpg(self._process.pid, signal.SIGTERM)
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self._process.pid, signal.SIGKILL)
                self._process.wait(timeout=10)
        self._process = None

    def pause(self) -> None:
        """Freeze the server: the kernel still accepts connections, and nothing answers."""
        if not self.running:
            raise RuntimeError("redis-server is not running")
        os.killpg(self._process.pid, signal.SIGSTOP)  # type: ignore[union-attr]  # running checked it

    def resume(self) -> None:
        """Unfreeze a paused server."""
        if not self.running:
            raise RuntimeError("redis-server is not running")
        os.killpg(self._process.pid, signal.SIGCONT)  # type: ignore[union-attr]

    def log(self) -> str:
        path = self.folder / LOG_FILE
        return path.read_text(errors="replace") if path.exists() else ""

    def close(self) -> None:
        """Stop the server for good and remove its folder."""
        self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> RedisServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
