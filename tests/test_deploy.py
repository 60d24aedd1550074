"""Self-hosting as README "Deployment" describes it: the Dockerfile, and replicas behind nginx.

The fault test starts two app replicas and a real nginx on loopback, with a config made
from deploy/nginx.conf (its upstream, stickiness, WebSocket upgrade and failure settings;
only ports and file paths changed), then kills the replica that serves the session and
checks that the class can carry on through the proxy.

Without nginx these tests skip, except where PE_REQUIRE_BROWSER=1 (CI), where a missing
nginx is a failure, as a missing browser is for the browser tests.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import websockets
from st_client import StreamlitServer, StreamlitSession, free_port, open_once

from explorer.ui import PAGE_FAILED

pytestmark = pytest.mark.deploy

ROOT = Path(__file__).resolve().parents[1]
DEPLOY_CONF = ROOT / "deploy" / "nginx.conf"
DOCKERFILE = ROOT / "Dockerfile"
NGINX_START_TIMEOUT_S = 15.0
#: What nginx logs when it cannot reach an upstream, and when max_fails takes it out of rotation.
REFUSED = re.compile(r"connect\(\) failed \(111: Connection refused\) while connecting to upstream.*upstream: \"\w+://"
                     r"127\.0\.0\.1:(\d+)")
DISABLED = re.compile(r"upstream server temporarily disabled while connecting to upstream.*upstream: \"\w+://"
                      r"127\.0\.0\.1:(\d+)")


def nginx_binary() -> str:
    """nginx's path, or skip (fail where PE_REQUIRE_BROWSER=1: CI must run these tests)."""
    found = shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if Path(p).exists()), None)
    if found is None:
        reason = "nginx is not installed (apt-get install nginx)"
        if os.environ.get("PE_REQUIRE_BROWSER") == "1":
            pytest.fail(f"PE_REQUIRE_BROWSER=1 but {reason}", pytrace=False)
        pytest.skip(reason)
    return found


def _replace_once(pattern: str, replacement: str, text: str) -> str:
    new, count = re.subn(pattern, replacement, text, count=1, flags=re.MULTILINE)
    assert count == 1, f"deploy/nginx.conf no longer has {pattern!r}: update this test with it"
    return new


def local_nginx_conf(prefix: Path, *, listen_port: int | None = None, upstream_ports: list[int] | None = None) -> str:
    """deploy/nginx.conf made to run from ``prefix`` by any user: pid, logs and temporary
    files under ``prefix``; optionally on ``listen_port`` (loopback) with ``upstream_ports``.

    Everything else (ip_hash, max_fails, the WebSocket location) is the file's own.
    """
    text = DEPLOY_CONF.read_text()
    top = [f"pid {prefix}/nginx.pid;", f"error_log {prefix}/error.log warn;"]
    if os.geteuid() == 0:
        top.append("user root;")  # workers as root too: nobody could not write the temporary files below
    text = "\n".join(top) + "\n" + text
    paths = "\n".join(
        f"    {kind}_temp_path {prefix}/{kind}_temp;" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    text = _replace_once(
        r"^http \{\n",
        "http {\n    log_format upstreams '$request_uri $status upstream=$upstream_addr';\n"
        f"    access_log {prefix}/access.log upstreams;\n{paths}\n",
        text,
    )
    if listen_port is not None:
        text = _replace_once(r"^(\s*)listen \d+;", rf"\g<1>listen 127.0.0.1:{listen_port};", text)
    if upstream_ports is not None:
        servers = re.findall(r"^(\s*)server 127\.0\.0\.1:\d+( [^;]*)?;\n", text, flags=re.MULTILINE)
        assert servers, "deploy/nginx.conf has no 'server 127.0.0.1:<port> ...;' upstream lines"
        indent, options = servers[0]
        block = "".join(f"{indent}server 127.0.0.1:{port}{options};\n" for port in upstream_ports)
        text = re.sub(r"(^\s*server 127\.0\.0\.1:\d+( [^;]*)?;\n)+", lambda _: block, text, count=1,
                      flags=re.MULTILINE)
    return text


def _prefix_dir() -> Path:
    prefix = Path(tempfile.mkdtemp(prefix="pe-nginx-"))
    prefix.chmod(0o755)
    return prefix


# --- the image ----------------------------------------------------------------------------


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of the Dockerfile, continuation lines joined."""
    joined = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    instructions = []
    for line in joined.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            instructions.append((word.upper(), rest.strip()))
    return instructions


def test_dockerfile_runs_streamlit_as_a_non_root_user_with_a_health_check() -> None:
    instructions = dockerfile_instructions()
    names = [name for name, _ in instructions]
    health = [args for name, args in instructions if name == "HEALTHCHECK"]
    assert len(health) == 1 and "/_stcore/health" in health[0], health
    assert "127.0.0.1:8501" in health[0] or "localhost:8501" in health[0], "the check asks the server itself"

    users = [args for name, args in instructions if name == "USER"]
    assert users and users[-1].split(":")[0] not in {"root", "0"}, f"USER {users}"
    assert names.index("CMD") > len(names) - 1 - names[::-1].index("USER"), "CMD runs after USER"

    cmd = next(args for name, args in reversed(instructions) if name == "CMD")
    argv = json.loads(cmd) if cmd.startswith("[") else shlex.split(cmd)  # the exec form is a JSON list
    assert argv[:3] == ["streamlit", "run", "app.py"], argv
    options = " ".join(argv[3:]).replace("=", " ").split()
    assert options[options.index("--server.address") + 1] == "0.0.0.0", argv
    assert options[options.index("--server.port") + 1] == "8501", argv
    assert ("EXPOSE", "8501") in instructions


def test_nginx_accepts_the_deploy_config() -> None:
    nginx = nginx_binary()
    prefix = _prefix_dir()
    try:
        conf = prefix / "nginx.conf"
        conf.write_text(local_nginx_conf(prefix))
        result = subprocess.run(
            [nginx, "-t", "-p", str(prefix), "-c", str(conf), "-e", str(prefix / "error.log")],
            capture_output=True, text=True, timeout=30,
        )
        assert result.returncode == 0, result.stderr
        assert "syntax is ok" in result.stderr and "test is successful" in result.stderr, result.stderr
    finally:
        shutil.rmtree(prefix, ignore_errors=True)


# --- replicas behind nginx ----------------------------------------------------------------


class Nginx:
    """nginx in the foreground, from a prefix directory of its own, on a loopback port."""

    def __init__(self, upstream_ports: list[int]) -> None:
        binary = nginx_binary()
        self.prefix = _prefix_dir()
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        conf = self.prefix / "nginx.conf"
        conf.write_text(local_nginx_conf(self.prefix, listen_port=self.port, upstream_ports=upstream_ports))
        self._process = subprocess.Popen(
            [binary, "-p", str(self.prefix), "-c", str(conf), "-e", str(self.prefix / "error.log"),
             "-g", "daemon off;"],
            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, start_new_session=True,
        )
        try:
            self._wait_healthy()
        except BaseException:
            self.stop()
            raise

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + NGINX_START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"nginx exited with {self._process.returncode}:\n{self.error_log()}")
            try:
                if health(self.url) == "ok":
                    return
            except OSError:
                pass
            time.sleep(0.1)
        raise TimeoutError(f"no health through nginx within {NGINX_START_TIMEOUT_S:.0f} s:\n{self.error_log()}")

    def error_log(self) -> str:
        path = self.prefix / "error.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def access_log(self) -> list[str]:
        path = self.prefix / "access.log"
        return path.read_text(errors="replace").splitlines() if path.exists() else []

    def stop(self) -> None:
        if self._process.poll() is None:
            os.killpg(self._process.pid, signal.SIGTERM)  # master and workers: one process group
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self._process.pid, signal.SIGKILL)
                self._process.wait(timeout=10)
        shutil.rmtree(self.prefix, ignore_errors=True)


def new_stream_lines(proxy: Nginx, logged_before: int, timeout_s: float = 5.0) -> list[str]:
    """The WebSocket requests logged after the first ``logged_before`` lines (waiting for one)."""
    deadline = time.monotonic() + timeout_s
    while True:
        streams = [line for line in proxy.access_log()[logged_before:] if line.startswith("/_stcore/stream ")]
        if streams or time.monotonic() > deadline:
            return streams
        time.sleep(0.05)


def health(base_url: str) -> str:
    with urllib.request.urlopen(f"{base_url}/_stcore/health", timeout=5) as response:
        return response.read().decode().strip()


def upstream_ports_of(access_line: str) -> list[int]:
    """The upstream ports nginx tried for one request, in order ("upstream=a:p1, b:p2")."""
    return [int(port) for port in re.findall(r"127\.0\.0\.1:(\d+)", access_line.partition("upstream=")[2])]


@pytest.fixture
def replicas_behind_nginx() -> Iterator[tuple[Nginx, dict[int, StreamlitServer]]]:
    nginx_binary()
    with ThreadPoolExecutor(2) as pool:  # the two replicas start at the same time
        futures = [pool.submit(StreamlitServer, "app.py") for _ in range(2)]
    servers = [future.result() for future in futures]
    try:
        proxy = Nginx([server.port for server in servers])
        try:
            yield proxy, {server.port: server for server in servers}
        finally:
            proxy.stop()
    finally:
        for server in servers:
            server.stop()


def test_sessions_carry_on_through_the_proxy_when_a_replica_dies(replicas_behind_nginx) -> None:
    proxy, replicas = replicas_behind_nginx
    # ip_hash sends every request from 127.0.0.1 to one replica: the access log says which.
    assert health(proxy.url) == "ok"
    serving = upstream_ports_of(proxy.access_log()[-1])
    assert len(serving) == 1 and serving[0] in replicas, proxy.access_log()[-1]
    victim = serving[0]
    (survivor,) = set(replicas) - {victim}

    async def session_through_a_dying_replica() -> bool:
        async with StreamlitSession(proxy.url) as tab:
            run = await tab.open_page("matrix", "d=64&L=200")
            assert run.finished and not run.exceptions and PAGE_FAILED not in run.alerts, run
            os.killpg(replicas[victim].pid, signal.SIGKILL)  # a crash, mid-session
            return await tab.wait_closed(10)

    assert asyncio.run(session_through_a_dying_replica()), "the proxy kept a dead replica's WebSocket open"

    # The proxy still answers for the class...
    assert [health(proxy.url) for _ in range(3)] == ["ok"] * 3
    # ...and new tabs (a reload, or the browser reconnecting) get working sessions, several in a row.
    for page, query in [("", ""), ("matrix", "d=64&L=200"), ("relative", "delta=5"), ("waves", "d=32")]:
        run = asyncio.run(open_once(proxy.url, page, query))
        assert run.finished and not run.exceptions and PAGE_FAILED not in run.alerts, (page, run)

    # It noticed: the dead replica refused, max_fails took it out, requests went to the other one.
    log = proxy.error_log()
    assert {int(p) for p in REFUSED.findall(log)} == {victim}, log
    assert {int(p) for p in DISABLED.findall(log)} == {victim}, log
    after_kill = [upstream_ports_of(line) for line in proxy.access_log()[1:]]
    assert [victim, survivor] in after_kill, after_kill  # the first request that met the dead one, retried
    # Later ones are served by the survivor (straight to it while fail_timeout keeps the dead one out).
    assert after_kill[-1][-1] == survivor and [survivor] in after_kill, after_kill


def test_the_proxy_refuses_a_websocket_from_a_foreign_origin(replicas_behind_nginx) -> None:
    """nginx answers 403 itself, before Streamlit's own check (which first stalls on a
    lookup of this machine's public address); the site's own origin still gets through."""
    proxy, _ = replicas_behind_nginx

    async def open_from(origin: str) -> None:
        async with StreamlitSession(proxy.url, origin=origin) as tab:
            await tab.open_page("", "")

    logged_before = len(proxy.access_log())
    with pytest.raises(websockets.InvalidStatus) as refused:
        asyncio.run(open_from("http://evil.example"))
    assert refused.value.response.status_code == 403
    # The refusal's log line: nginx writes it once the response is out, and other requests
    # (a health check) may be logged around it, so it is looked for among the new lines.
    streams = new_stream_lines(proxy, logged_before)
    assert len(streams) == 1, streams
    refusal = streams[0]
    assert refusal.startswith("/_stcore/stream 403 upstream=") and not upstream_ports_of(refusal), refusal
    run = asyncio.run(open_once(proxy.url, "", ""))
    assert run.finished and not run.exceptions, run
