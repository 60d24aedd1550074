"""App replicas behind a real HAProxy on loopback, for tests/deploy/test_deploy.py and
``benchmarks/load_test.py --replicas``: one way to start them, used by both.

HAProxy runs a copy of deploy/haproxy.cfg in which three things change: it listens on a
free loopback port instead of ``:8080``; the replicas are one ``server appN
127.0.0.1:<port>`` line each instead of the ``server-template`` that finds compose's
containers through Docker's DNS (same names, and the options of ``default-server``); and
``global`` gains an admin socket, from which the tests read each replica's health-check
state and open connections. Everything else (the stickiness cookie, the balance, the
health checks, the timeouts, the foreign-Origin refusal) is the file's own.

The replicas share one ``server.cookieSecret``, given as compose and the Kubernetes
manifests give it: in the environment variable STREAMLIT_SERVER_COOKIE_SECRET.
"""

from __future__ import annotations

import csv
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .st_client import StreamlitServer, free_port

HAPROXY_CFG = Path(__file__).resolve().parents[2] / "deploy" / "haproxy.cfg"
HAPROXY_START_TIMEOUT_S = 20.0
#: HAProxy writes its log on standard output (``log stdout``): the harness keeps it in a file.
LOG_FILE = "haproxy.log"


def haproxy_binary() -> str | None:
    """HAProxy's path, or None where it is not installed (``apt-get install haproxy``)."""
    return shutil.which("haproxy") or next((p for p in ("/usr/sbin/haproxy",) if Path(p).exists()), None)


def _config_value(pattern: str) -> str:
    match = re.search(pattern, HAPROXY_CFG.read_text(), flags=re.MULTILINE)
    if match is None:
        raise ValueError(f"deploy/haproxy.cfg no longer matches {pattern!r}: update tests/proxy_harness.py")
    return match.group(1)


def sticky_cookie_name() -> str:
    """The name of the cookie HAProxy inserts to keep a tab on its replica."""
    return _config_value(r"^\s*cookie\s+(\S+)\s+insert\b")


def replica_names(count: int) -> list[str]:
    """HAProxy's names of the first ``count`` replicas, as its ``server-template`` numbers them."""
    prefix = _config_value(r"^\s*server-template\s+(\S+)\s")
    return [f"{prefix}{number}" for number in range(1, count + 1)]


def _replace_once(pattern: str, replacement: str, text: str) -> str:
    new, count = re.subn(pattern, lambda _: replacement, text, count=1, flags=re.MULTILINE)
    if count != 1:
        raise ValueError(f"deploy/haproxy.cfg no longer matches {pattern!r}: update tests/proxy_harness.py")
    return new


def local_haproxy_cfg(*, listen_port: int, replicas: Mapping[str, int], admin_socket: Path) -> str:
    """deploy/haproxy.cfg on 127.0.0.1:``listen_port``, with ``replicas`` (name: loopback port)."""
    text = HAPROXY_CFG.read_text()
    text = _replace_once(r"^global\n", f"global\n    stats socket {admin_socket} mode 600 level admin\n", text)
    text = _replace_once(r"^(\s*)bind :\d+$", f"    bind 127.0.0.1:{listen_port}", text)
    servers = "\n".join(f"    server {name} 127.0.0.1:{port}" for name, port in replicas.items())
    return _replace_once(r"^\s*server-template .*$", servers, text)


class HAProxy:
    """HAProxy in the foreground, from a temporary folder of its own, on a free loopback port."""

    def __init__(self, replicas: Mapping[str, int]) -> None:
        binary = haproxy_binary()
        if binary is None:
            raise FileNotFoundError("haproxy is not installed (apt-get install haproxy)")
        self.folder = Path(tempfile.mkdtemp(prefix="pe-haproxy-"))
        self.admin_socket = self.folder / "admin.sock"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.names = list(replicas)
        config = self.folder / "haproxy.cfg"
        config.write_text(local_haproxy_cfg(listen_port=self.port, replicas=replicas, admin_socket=self.admin_socket))
        with open(self.folder / LOG_FILE, "wb") as log:
            self._process = subprocess.Popen(
                [binary, "-db", "-f", str(config)], stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            )
        try:
            # Ready when every replica has passed a health check (HAProxy counts a server
            # as up from the start; L7OK says the check itself got Streamlit's "ok").
            self.wait_until(
                lambda servers: all(s["status"] == "UP" and s["check_status"] == "L7OK" for s in servers.values()),
                HAPROXY_START_TIMEOUT_S, "every replica passes its first health check",
            )
        except BaseException:
            self.stop()
            raise

    def admin(self, command: str) -> str:
        """One command on HAProxy's admin socket, and its answer."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(5)
            sock.connect(str(self.admin_socket))
            sock.sendall(command.encode() + b"\n")
            chunks = []
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        return b"".join(chunks).decode()

    def servers(self) -> dict[str, dict[str, str]]:
        """The replicas' rows of ``show stat`` by name: ``status`` (UP, DOWN...), ``check_status``
        (L7OK, L4CON...), ``scur`` (connections open now), ``stot`` (connections so far)..."""
        header, *rows = self.admin("show stat").lstrip("# ").splitlines()
        table = csv.DictReader([header, *rows])
        return {row["svname"]: row for row in table if row["svname"] in self.names}

    def wait_until(
        self, condition: Callable[[dict[str, dict[str, str]]], bool], timeout_s: float, what: str,
    ) -> dict[str, dict[str, str]]:
        """Poll ``servers()`` until ``condition`` holds for it; its last reading."""
        deadline = time.monotonic() + timeout_s
        while True:
            if self._process.poll() is not None:
                raise RuntimeError(f"haproxy exited with {self._process.returncode}:\n{self.log()}")
            try:
                servers = self.servers()
                if condition(servers):
                    return servers
            except OSError:  # the admin socket is not there yet
                servers = {}
            if time.monotonic() > deadline:
                raise TimeoutError(f"not within {timeout_s:.0f} s: {what}; servers: {servers}\n{self.log()[-3000:]}")
            time.sleep(0.1)

    def log(self) -> str:
        """HAProxy's output so far: a line per request (its replica, or <NOSRV>), then its warnings."""
        path = self.folder / LOG_FILE
        return path.read_text(errors="replace") if path.exists() else ""

    def logged(self, pattern: str, count: int, timeout_s: float = 15.0) -> list[str]:
        """The log's matches of ``pattern`` once there are ``count`` of them (or ``timeout_s`` has passed):
        HAProxy writes a request's line a moment after it has answered it (a full suite's load once left one of
        three lines unwritten after 5 s)."""
        deadline = time.monotonic() + timeout_s
        while len(found := re.findall(pattern, self.log())) < count and time.monotonic() < deadline:
            time.sleep(0.05)
        return found

    def stop(self) -> None:
        if self._process.poll() is None:
            os.killpg(self._process.pid, signal.SIGTERM)
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self._process.pid, signal.SIGKILL)
                self._process.wait(timeout=10)
        shutil.rmtree(self.folder, ignore_errors=True)


class ReplicasBehindProxy:
    """``count`` replicas of the app, started together, behind HAProxy (use ``with``).

    ``replicas`` maps HAProxy's name of each replica (the value of the X-Replica header the
    proxy adds) to its server; ``url`` is the proxy's address. ``env`` is added to every
    replica's environment, as a deployment gives each the same (PE_REDIS_URL, say).
    """

    def __init__(self, count: int, script: str = "app.py", *, env: Mapping[str, str] | None = None) -> None:
        self.cookie_secret = secrets.token_hex(32)
        shared = {**(env or {}), "STREAMLIT_SERVER_COOKIE_SECRET": self.cookie_secret}
        with ThreadPoolExecutor(count) as pool:
            futures = [pool.submit(StreamlitServer, script, env=shared) for _ in range(count)]
        started = [future.result() for future in futures if future.exception() is None]
        try:
            for future in futures:
                future.result()  # the first replica that failed to start, if any
            self.replicas = dict(zip(replica_names(count), started, strict=True))
            self.proxy = HAProxy({name: server.port for name, server in self.replicas.items()})
        except BaseException:
            for server in started:
                server.stop()
            raise
        self.url = self.proxy.url

    def stop(self) -> None:
        self.proxy.stop()
        for server in self.replicas.values():
            server.stop()

    def __enter__(self) -> ReplicasBehindProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def health(base_url: str) -> str:
    """What ``/_stcore/health`` answers at ``base_url`` (a replica's, or the proxy's)."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(f"{base_url}/_stcore/health", timeout=5) as response:
        return response.read().decode().strip()
