"""Start a Streamlit server and a headless Chromium, for the browser tests and the latency benchmark.

Playwright cannot download its own browsers here, so it drives Debian's Chromium. Each
server runs in its own process group, so that stopping it also stops anything it started.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
#: No sandbox (we run as root in a container), no GPU, and nothing that phones home.
LAUNCH_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync",
]
SERVER_START_TIMEOUT_S = 60.0
#: Wide enough that Streamlit keeps the sidebar open.
VIEWPORT = {"width": 1400, "height": 900}

#: True when the app has finished its rerun and nothing on the page is greyed out as stale.
APP_IDLE_JS = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    return app !== null
        && app.getAttribute('data-test-script-state') === 'notRunning'
        && app.getAttribute('data-test-connection-state') === 'CONNECTED'
        && document.querySelector('[data-stale="true"]') === null;
}"""


def free_port() -> int:
    """A TCP port nobody listens on right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class StreamlitServer:
    """``streamlit run <script>`` on a free port; ``url`` once it answers its health check."""

    def __init__(
        self, script: str | Path = "app.py", *, cwd: Path = REPO_ROOT, extra_args: Sequence[str] = (),
        env: Mapping[str, str] | None = None, file_watcher: str | None = "none", wrapper: Sequence[str] = (),
        start_timeout_s: float = SERVER_START_TIMEOUT_S,
    ) -> None:
        """``extra_args`` go after the defaults on the command line (so they override them);
        ``env`` is added to the environment of the server; ``file_watcher`` is
        server.fileWatcherType ("none": nothing is edited during a run, and polling files would
        only take CPU from the tests), or None for what the project's config says, as a plain
        ``streamlit run app.py`` has it. ``wrapper`` runs the server (valgrind and its options,
        benchmarks/instructions.py), which may then take up to ``start_timeout_s`` to answer.

        Every server here talks to 127.0.0.1 only. Without ``server.address`` a headless
        server asks checkip.amazonaws.com for its external address (for its start-up
        banner), and a WebSocket from a foreign Origin makes it ask again (the origin
        check compares with that address); the proxy variables send any such request to
        a closed loopback port, where it fails at once.
        """
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._log = tempfile.NamedTemporaryFile(prefix="streamlit-", suffix=".log", delete=False)  # noqa: SIM115
        command = [
            *wrapper, sys.executable, "-m", "streamlit", "run", str(script), "--server.port", str(self.port),
            "--server.headless", "true", "--browser.gatherUsageStats", "false",
            *(("--server.fileWatcherType", file_watcher) if file_watcher is not None else ()),
            "--server.address", "127.0.0.1",
            *extra_args,
        ]
        closed = f"http://127.0.0.1:{free_port()}"
        no_outside = {name: closed for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")}
        no_outside |= {"NO_PROXY": "", "no_proxy": ""}
        self._process = subprocess.Popen(
            command, cwd=cwd, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **no_outside, **(env or {})},
        )
        try:
            self._wait_healthy(start_timeout_s)
        except BaseException:
            self.stop()
            raise

    def _wait_healthy(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"streamlit exited with {self._process.returncode}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as response:
                    if response.read().decode().strip() == "ok":
                        return
            except OSError:
                pass
            time.sleep(0.1)
        raise TimeoutError(f"streamlit did not answer /_stcore/health within {timeout_s:.0f} s:\n{self.log_tail()}")

    def log_tail(self, chars: int = 3000) -> str:
        """The end of the server's output, for error messages."""
        return Path(self._log.name).read_text(errors="replace")[-chars:]

    @property
    def pid(self) -> int:
        """The server's process id (also its process group's)."""
        return self._process.pid

    def stop(self) -> None:
        """Stop the server's whole process group: politely, then by force."""
        if self._process.poll() is None:
            try:
                os.killpg(self._process.pid, signal.SIGTERM)
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self._process.pid, signal.SIGKILL)
                self._process.wait(timeout=10)
            except ProcessLookupError:
                pass
        self._log.close()
        Path(self._log.name).unlink(missing_ok=True)

    def __enter__(self) -> StreamlitServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def launch_chromium(playwright):
    """Debian's headless Chromium through Playwright (``playwright`` is a sync_playwright() handle)."""
    return playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS)


#: A short fingerprint of the index-th Plotly chart on the page as drawn (title text, and per
#: trace its type, sizes and a few sampled values), or null while there is no such chart.
#: Two fingerprints differ when the chart on screen shows other data.
CHART_SIGNATURE_JS = """(index) => {
    const plot = document.querySelectorAll('.js-plotly-plot')[index || 0];
    if (!plot || !plot._fullData || !plot.querySelector('.main-svg')) return null;
    const sample = (values) => {
        if (!values || values.length === undefined) return null;
        const at = (i) => {
            const v = values[i];
            return v && v.length !== undefined ? [v.length, v[0], v[v.length >> 1], v[v.length - 1]] : v;
        };
        return [values.length, at(0), at(values.length >> 1), at(values.length - 1)];
    };
    const title = plot.querySelector('.gtitle');
    const traces = plot._fullData.map((t) => [t.type, sample(t.x), sample(t.y), sample(t.z)]);
    return JSON.stringify([title ? title.textContent : '', traces]);
}"""


def open_on_request(page, label: str) -> None:
    """Open the tool a page draws on request (blocks.on_request) as a visitor does, by a click on its
    expander's label, and wait for the run that draws it (every such tool holds a file uploader)."""
    expander = page.locator('[data-testid="stExpander"]').filter(has_text=label)
    expander.locator("summary").click()
    expander.locator('[data-testid="stFileUploader"]').wait_for(timeout=30_000)
