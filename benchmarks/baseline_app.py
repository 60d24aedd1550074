"""The benchmarks' yardstick: a trivial one-slider Streamlit app, served like the explorer.

Every speed budget of PRODUCT.md is a ratio against this app on the same machine, in the
same run. It is served from a temporary folder holding the script and a copy of this
project's ``.streamlit/config.toml``, so that it runs with exactly the explorer's
configuration (GC policy, hardening) and nothing else of the project.
"""

from __future__ import annotations

import shutil
import tempfile
import textwrap
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from tests.support.browser_harness import StreamlitServer

ROOT = Path(__file__).resolve().parents[1]

#: One slider (user key "value", so that a test client can move it) and a small chart that follows it.
TRIVIAL_APP = textwrap.dedent(
    '''
    """The benchmark's yardstick: one slider and a small chart that follows it."""
    import plotly.graph_objects as go
    import streamlit as st

    st.title("Trivial app")
    value = st.slider("value", 0, 100, 50, key="value")
    fig = go.Figure(go.Scatter(x=list(range(20)), y=[value * i for i in range(20)], mode="lines"))
    fig.update_layout(title=f"value = {value}")
    st.plotly_chart(fig)
    '''
)


@contextmanager
def trivial_server(extra_args: Sequence[str] = ()) -> Iterator[StreamlitServer]:
    """The trivial app on a free loopback port, with a copy of the project's config."""
    with tempfile.TemporaryDirectory(prefix="pe-trivial-") as folder:
        (Path(folder) / "trivial_app.py").write_text(TRIVIAL_APP)
        shutil.copytree(ROOT / ".streamlit", Path(folder) / ".streamlit")
        with StreamlitServer("trivial_app.py", cwd=Path(folder), extra_args=extra_args) as server:
            yield server
