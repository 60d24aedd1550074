"""Self-hosting as README "Deployment" describes it: the Dockerfile, and replicas behind HAProxy.

The proxy tests start app replicas and a real HAProxy on loopback with deploy/haproxy.cfg
(tests/proxy_harness.py: only the address, the replica lines and an admin socket
changed). Every tab here does what a browser does: it loads the page, keeps the cookies
that response set, and sends them with its WebSocket. All of it comes from one address,
as a class behind one school NAT does.

Without HAProxy these tests skip, except where PE_REQUIRE_BROWSER=1 (CI), where a missing
HAProxy is a failure, as a missing browser is for the browser tests.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import signal
import subprocess
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
import websockets
from support.proxy_harness import (
    HAPROXY_CFG,
    ReplicasBehindProxy,
    haproxy_binary,
    health,
    local_haproxy_cfg,
    replica_names,
    sticky_cookie_name,
)
from support.st_client import RunResult, StreamlitSession, fetch_page

from explorer.ui.navigation import PAGE_FAILED

pytestmark = pytest.mark.deploy

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "Dockerfile"
#: The files a deployment is made of: the proxy, compose, the Kubernetes manifests, the image.
DEPLOYMENT_FILES = sorted(
    path for path in [*ROOT.joinpath("deploy").rglob("*"), ROOT / "compose.yaml", DOCKERFILE] if path.is_file()
)
CLASS_SIZE = 40
#: How long HAProxy may take to mark a dead replica down: two failed checks 2 s apart, and slack.
MARK_DOWN_WITHIN_S = 15.0


def require_haproxy() -> str:
    """HAProxy's path, or skip (fail where PE_REQUIRE_BROWSER=1: CI must run these tests)."""
    found = haproxy_binary()
    if found is None:
        reason = "haproxy is not installed (apt-get install haproxy)"
        if os.environ.get("PE_REQUIRE_BROWSER") == "1":
            pytest.fail(f"PE_REQUIRE_BROWSER=1 but {reason}", pytrace=False)
        pytest.skip(reason)
    return found


def wait_for_no_open_connection(cluster: ReplicasBehindProxy) -> None:
    """Until HAProxy has closed every connection of earlier tabs (the test counts open connections)."""
    cluster.proxy.wait_until(lambda servers: all(row["scur"] == "0" for row in servers.values()), 10,
                             "no connection open to any replica")


def assert_drawn(run: RunResult, what: object = "") -> None:
    assert run.finished and not run.exceptions and PAGE_FAILED not in run.alerts, (what, run)


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
    health_checks = [args for name, args in instructions if name == "HEALTHCHECK"]
    assert len(health_checks) == 1 and "/_stcore/health" in health_checks[0], health_checks
    assert "127.0.0.1:8501" in health_checks[0] or "localhost:8501" in health_checks[0], "the check asks the server"

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


# --- the proxy's configuration ------------------------------------------------------------


def test_no_deployment_file_pins_a_session_to_the_client_address() -> None:
    """A class behind one NAT shares one address: stickiness by address puts it on one replica."""
    by_address = re.compile(
        r"ip_hash"  # nginx
        r"|^\s*balance\s+(source|hdr\(x-forwarded-for\))"  # HAProxy
        r"|sessionAffinity:\s*ClientIP"  # a Kubernetes Service
        r"|upstream-hash-by:.*remote_addr",  # ingress-nginx
        flags=re.MULTILINE | re.IGNORECASE,
    )
    assert HAPROXY_CFG in DEPLOYMENT_FILES and ROOT / "compose.yaml" in DEPLOYMENT_FILES
    assert len([path for path in DEPLOYMENT_FILES if path.suffix == ".yaml"]) >= 2, DEPLOYMENT_FILES
    offenders = {
        str(path.relative_to(ROOT)): match.group(0)
        for path in DEPLOYMENT_FILES
        if (match := by_address.search(path.read_text()))
    }
    assert not offenders, offenders
    assert re.search(r"^\s*cookie \S+ insert\b", HAPROXY_CFG.read_text(), flags=re.MULTILINE)


@pytest.mark.parametrize("as_run_here", [False, True], ids=["as-shipped", "as-the-tests-run-it"])
def test_haproxy_accepts_the_deploy_config(as_run_here: bool, tmp_path: Path) -> None:
    haproxy = require_haproxy()
    config = HAPROXY_CFG
    if as_run_here:
        config = tmp_path / "haproxy.cfg"
        replicas = dict(zip(replica_names(2), [8501, 8502], strict=True))  # checked, never started
        config.write_text(local_haproxy_cfg(listen_port=8080, replicas=replicas, admin_socket=tmp_path / "a.sock"))
    result = subprocess.run([haproxy, "-c", "-f", str(config)], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Configuration file is valid" in result.stdout, result.stdout
    assert "WARNING" not in result.stdout + result.stderr, result.stdout + result.stderr


# --- replicas behind HAProxy --------------------------------------------------------------


@pytest.fixture(scope="module")
def shared_replicas() -> Iterator[ReplicasBehindProxy]:
    """Two replicas behind the proxy, for the tests that leave them running."""
    require_haproxy()
    with ReplicasBehindProxy(2) as cluster:
        yield cluster


@pytest.fixture
def replicas_to_break() -> Iterator[ReplicasBehindProxy]:
    """Two replicas behind the proxy, for a test that kills one."""
    require_haproxy()
    with ReplicasBehindProxy(2) as cluster:
        yield cluster


def test_a_class_from_one_address_is_spread_over_the_replicas_by_the_cookie(shared_replicas) -> None:
    cluster = shared_replicas
    cookie = sticky_cookie_name()
    wait_for_no_open_connection(cluster)

    async def class_opens_the_app() -> list[tuple[str, str, str, int]]:
        """Each tab: (its cookie, the replica the page came from, the replica of its WebSocket,
        and the connections HAProxy counts on that replica while the whole class is open)."""
        tabs = [StreamlitSession(cluster.url, fetch_cookies=True) for _ in range(CLASS_SIZE)]

        async def open_home(tab: StreamlitSession) -> None:
            await tab.connect()
            assert_drawn(await tab.open_page("", ""), "Home")

        try:
            await asyncio.gather(*(open_home(tab) for tab in tabs))
            open_now = {name: int(row["scur"]) for name, row in cluster.proxy.servers().items()}
            return [
                (tab.cookies[cookie], tab.page.headers["X-Replica"], tab.handshake_headers["X-Replica"],
                 open_now[tab.handshake_headers["X-Replica"]])
                for tab in tabs
            ]
        finally:
            await asyncio.gather(*(tab.close() for tab in tabs))

    tabs = asyncio.run(class_opens_the_app())
    # Every WebSocket went to the replica that served its page and set its cookie...
    assert all(page_replica == socket_replica for _, page_replica, socket_replica, _ in tabs), tabs
    # ...and a cookie value names one replica, a different one for each.
    replica_of_cookie = {value: replica for value, replica, _, _ in tabs}
    assert len(replica_of_cookie) == len(set(replica_of_cookie.values())) == len(cluster.replicas), tabs
    assert all(replica_of_cookie[value] == replica for value, replica, _, _ in tabs), tabs
    # The class is spread: each replica holds at least a third of it, and holds the WebSockets
    # themselves (HAProxy's count of connections open to it, with all tabs open).
    sessions = Counter(replica for _, _, replica, _ in tabs)
    assert set(sessions) == set(cluster.replicas) and min(sessions.values()) >= CLASS_SIZE / 3, sessions
    assert {replica: open_now for _, _, replica, open_now in tabs} == dict(sessions), tabs


def test_a_sessions_reruns_and_reconnections_stay_on_its_replica(shared_replicas) -> None:
    cluster = shared_replicas

    async def tab_with_reruns_then_reconnections() -> tuple[str, list[str]]:
        async with StreamlitSession(cluster.url, fetch_cookies=True) as tab:
            home = tab.page.headers["X-Replica"]
            run = await tab.open_page("matrix", "d=64&L=200")
            assert_drawn(run, "first run")
            for d in (32, 96):
                run = await tab.set_slider("d", d, run)
                assert_drawn(run, f"move to d={d}")
                assert f"d={d}" in run.query_string, run.query_string
            replicas = [tab.handshake_headers["X-Replica"]]
        # The network drops and the tab reconnects, or the student reloads: with its cookie.
        for _ in range(4):
            async with StreamlitSession(cluster.url, cookies=tab.cookies) as again:
                assert_drawn(await again.open_page("", ""), "after reconnecting")
                replicas.append(again.handshake_headers["X-Replica"])
            replicas.append(fetch_page(cluster.url, tab.cookies).headers["X-Replica"])
        return home, replicas

    home, replicas = asyncio.run(tab_with_reruns_then_reconnections())
    assert home in cluster.replicas and replicas == [home] * 9, (home, replicas)
    # The control: the same requests without the cookie are spread, so staying put is the cookie's doing.
    assert {fetch_page(cluster.url).headers["X-Replica"] for _ in range(4)} == set(cluster.replicas)


def test_the_proxy_refuses_a_websocket_from_a_foreign_origin(shared_replicas) -> None:
    """HAProxy answers 403 itself: the replicas never see the request."""
    cluster = shared_replicas
    proxy = cluster.proxy

    def connections_so_far() -> dict[str, int]:
        return {name: int(row["stot"]) for name, row in proxy.servers().items()}

    async def open_from(origin: str | None) -> str:
        async with StreamlitSession(cluster.url, origin=origin, fetch_cookies=True) as tab:
            assert_drawn(await tab.open_page("", ""), origin)
            return tab.handshake_headers["X-Replica"]

    before = connections_so_far()
    for foreign in ("http://evil.example", f"https://127.0.0.1:{proxy.port}", "null"):
        with pytest.raises(websockets.InvalidStatus) as refused:
            asyncio.run(open_from(foreign))
        assert refused.value.response.status_code == 403, foreign
        assert "X-Replica" not in refused.value.response.headers, foreign
    # The page loads (each tab's GET went to a replica); the three WebSockets reached none.
    page_loads = 3
    assert sum(connections_so_far().values()) - sum(before.values()) == page_loads, (before, connections_so_far())
    refusals = proxy.logged(r"/<NOSRV> .* 403 .*\"GET /_stcore/stream ", 3)
    assert len(refusals) == 3, proxy.log()[-2000:]
    # This site's own pages, and clients that send no Origin, still get in.
    for own in (cluster.url, None):
        assert asyncio.run(open_from(own)) in cluster.replicas, own


def test_sessions_carry_on_when_a_replica_dies(replicas_to_break) -> None:
    cluster = replicas_to_break
    proxy = cluster.proxy

    async def class_through_a_dying_replica() -> None:
        on_victim = StreamlitSession(cluster.url, fetch_cookies=True)
        await on_victim.connect()
        victim = on_victim.handshake_headers["X-Replica"]
        # Round robin: the next tab's page load goes to the other replica, and its cookie with it.
        on_survivor = StreamlitSession(cluster.url, fetch_cookies=True)
        await on_survivor.connect()
        survivor = on_survivor.handshake_headers["X-Replica"]
        assert {victim, survivor} == set(cluster.replicas), (victim, survivor)
        try:
            survivor_run = await on_survivor.open_page("matrix", "d=64&L=200")
            assert_drawn(survivor_run, "survivor's first run")
            assert_drawn(await on_victim.open_page("matrix", "d=64&L=200"), "victim's first run")

            os.killpg(cluster.replicas[victim].pid, signal.SIGKILL)  # a crash, mid-lesson
            assert await on_victim.wait_closed(10), "the proxy kept a dead replica's WebSocket open"

            # The tab reconnects at once, with its cookie naming the dead replica, before the
            # health checks have noticed: HAProxy tries the dead one, then sends it elsewhere.
            assert proxy.servers()[victim]["status"] != "DOWN", "too late to see the redispatch"
            async with StreamlitSession(cluster.url, fetch_cookies=True, cookies=on_victim.cookies) as reconnected:
                assert reconnected.page.headers["X-Replica"] == survivor
                assert reconnected.handshake_headers["X-Replica"] == survivor
                assert_drawn(await reconnected.open_page("matrix", "d=64&L=200"), "reconnected")
            # HAProxy's line for that page load: served by the survivor after retries, "+" for redispatched.
            assert re.search(rf"/{survivor} \S+ 200 .* \d+/\d+/\d+/\d+/\+\d+ .*\"GET / ", proxy.log()), proxy.log()

            # The health checks take the dead replica out of rotation.
            down = proxy.wait_until(lambda servers: servers[victim]["status"] == "DOWN", MARK_DOWN_WITHIN_S,
                                    f"{victim} marked down")
            assert down[victim]["check_status"].startswith("L4CON"), down[victim]  # connection refused
            assert down[survivor]["status"] == "UP", down[survivor]

            # New tabs, several in a row, get working sessions on the survivor.
            for page, query in [("", ""), ("relative", "delta=5"), ("waves", "d=32")]:
                async with StreamlitSession(cluster.url, fetch_cookies=True) as newcomer:
                    assert newcomer.handshake_headers["X-Replica"] == survivor
                    assert_drawn(await newcomer.open_page(page, query), page)

            # The survivor's tab never noticed: its WebSocket is the same, and it reruns.
            moved = await on_survivor.set_slider("d", 96, survivor_run)
            assert_drawn(moved, "survivor's rerun after the crash")
            assert "d=96" in moved.query_string, moved.query_string
        finally:
            await on_survivor.close()
            await on_victim.close()

    asyncio.run(class_through_a_dying_replica())
    assert health(cluster.url) == "ok"
