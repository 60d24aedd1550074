"""Play buttons: a figure's frames animated by Plotly in the browser, with no Streamlit rerun
per frame (a rerun per step would cost every student in the room a server run).

A figure gets Plotly ``frames`` (one per value of the swept quantity), a Play/Pause pair of
``layout.updatemenus`` buttons and a ``layout.sliders`` slider with one step per frame.
Frame data is sent once with the chart, so the frame count is chosen from the data size:
``frame_count`` keeps one chart's frames within ``PLAY_MAX_BYTES``. No Streamlit here.
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go
from plotly.basedatatypes import BaseTraceType

from explorer.figures import Figure, chart_title, encoded_copy, fitted_title, structure_copy

#: Bytes of frame data one animated chart may carry: a fifth of the 1.5 MB chart budget, so
#: that a page with two animated charts and its heatmaps stays far inside 3 MB per rerun.
PLAY_MAX_BYTES = 300_000
#: At most this many frames: 60 frames at PLAY_FRAME_MS are a 6-second sweep.
PLAY_MAX_FRAMES = 60
#: Time each frame stays on screen while playing (10 frames a second for lines).
PLAY_FRAME_MS = 100
#: Heatmap frames are redrawn whole (Plotly cannot tween a heatmap): a slower pace.
PLAY_HEATMAP_FRAME_MS = 250
#: JSON of one frame besides its arrays (name, trace indices, keys): a generous bound.
FRAME_OVERHEAD_BYTES = 400
#: A float32 value in Plotly's JSON: 4 bytes, base64-encoded (4/3).
FLOAT32_JSON_BYTES = 4 * 4 / 3
#: What the pages say about the keyboard (explorer/ui/keyboard.py gives Plotly's SVG controls focus and keys).
KEYBOARD_NOTE = (
    "From the keyboard: Tab to Play and press Enter (Enter on Pause stops it), or to the frame slider "
    "and step it with the arrow keys, Home and End."
)
#: Room above the plot for the frame slider and, under it, the Play/Pause buttons; the buttons' row
#: (the slider stands on it).
CONTROLS_HEIGHT, BUTTONS_HEIGHT = 140, 55


def frame_count(values_per_frame: int, *, max_frames: int = PLAY_MAX_FRAMES, max_bytes: int = PLAY_MAX_BYTES) -> int:
    """How many frames of ``values_per_frame`` float32 values fit ``max_bytes`` (at least 1,
    at most ``max_frames``)."""
    if values_per_frame < 0:
        raise ValueError(f"values_per_frame must be 0 or more, got {values_per_frame}.")
    per_frame = values_per_frame * FLOAT32_JSON_BYTES + FRAME_OVERHEAD_BYTES
    return max(1, min(max_frames, int(max_bytes // per_frame)))


#: A Play frame as Plotly's JSON holds it: {"data": [trace dicts], "traces": [indices], "name": str}.
PlayFrame = dict


def frame(data: Sequence[dict], *, traces: Sequence[int], name: str) -> PlayFrame:
    """A Play frame from plain trace dicts (``"type"``: scatter by default, or heatmap) for the
    figure's ``traces``: only what changes from one frame to the next (Plotly merges it into the
    trace). Kept as a plain dict, as the chart's JSON has it: built as Plotly objects, a Play
    figure's 60 frames of a few traces each cost 20-45 ms of every new setting's run, twice
    Plotly's own figure (tests/shared/test_animation.py builds every Play figure as a validated
    go.Figure and compares its JSON)."""
    return {
        "data": [{"type": "scatter", **trace} for trace in data],
        "traces": [int(index) for index in traces],
        "name": str(name),
    }


class PlayFigure(Figure):
    """A figures.Figure whose Play frames stay plain dicts (``frame``) until the figure is serialised.

    Its data and layout are Plotly's as usual (``update_layout`` and the like work on them);
    ``to_dict`` (what st.plotly_chart and the JSON writers call) adds the frames as they are,
    base64-encoding their arrays as Plotly's own ``to_dict`` does; ``frames`` builds them as
    go.Frame objects only when asked (tests, a reader of the figure).
    """

    def __init__(self, data: object = None, layout: object = None, frames: Sequence[PlayFrame] = (),
                 **kwargs: object) -> None:
        if isinstance(data, dict) and "frames" in data:  # a pickled or copied PlayFigure (__reduce__)
            data = dict(data)
            frames = data.pop("frames")
        super().__init__(data=data, layout=layout, **kwargs)
        self._play_frames = list(frames)

    @property
    def frames(self) -> tuple[go.Frame, ...]:
        return tuple(go.Frame(structure_copy(play_frame)) for play_frame in self._play_frames)

    @property
    def frame_names(self) -> list[str]:
        """The frames' names, without building them."""
        return [play_frame["name"] for play_frame in self._play_frames]

    def to_dict(self) -> dict:
        return super().to_dict() | {"frames": encoded_copy(self._play_frames)}


def add_play(
    fig: go.Figure,
    frames: Sequence[PlayFrame],
    *,
    label: str,
    redraw: bool,
    frame_ms: int = PLAY_FRAME_MS,
    active: int = 0,
    labels: Sequence[str] | None = None,
) -> PlayFigure:
    """``fig`` with its ``frames``, and above the plot Play/Pause buttons and a slider of the frames.

    ``label`` names the swept quantity (the slider shows "label = " and the frame's name, or
    its entry of ``labels``, which may repeat where names cannot); ``redraw``
    must be True when a frame changes a heatmap or the layout (Plotly only tweens scatter
    data); ``active`` is the frame the figure's own data shows, where the slider starts.
    Buttons and slider are SVG drawn by Plotly; explorer/ui/keyboard.py puts them in the tab order.
    """
    return play_figure(fig.data, fig.layout.to_plotly_json(), frames, label=label, redraw=redraw,
                       frame_ms=frame_ms, active=active, labels=labels)


def play_figure(
    data: Sequence[dict | BaseTraceType],
    layout: dict,
    frames: Sequence[PlayFrame],
    *,
    label: str,
    redraw: bool,
    frame_ms: int = PLAY_FRAME_MS,
    active: int = 0,
    labels: Sequence[str] | None = None,
) -> PlayFigure:
    """``add_play`` of ``figures.figure(data, layout)``, built once: from trace dicts (or traces
    already built) and a plain layout dict, without Plotly's validation (the tests build each such
    figure again validated), its title fitted as ``figures.figure`` fits it."""
    layout = _play_layout(layout, frames, label=label, redraw=redraw, frame_ms=frame_ms, active=active,
                          labels=labels)
    data, layout = list(data), fitted_title(layout)
    if all(isinstance(trace, dict) for trace in data):
        return PlayFigure.plain(data, layout, _play_frames=list(frames))
    return PlayFigure(data=data, layout=layout, frames=frames, _validate=False)


def _play_layout(
    layout: dict,
    frames: Sequence[PlayFrame],
    *,
    label: str,
    redraw: bool,
    frame_ms: int,
    active: int,
    labels: Sequence[str] | None,
) -> dict:
    """``layout`` (a figure's, as a plain dict) with the Play controls of ``add_play`` and room for them."""
    if not frames:
        raise ValueError("an animated figure needs at least one frame.")
    names = [play_frame["name"] for play_frame in frames]
    if len(set(names)) != len(names):
        raise ValueError(f"frame names must differ, got {names}.")
    labels = names if labels is None else [str(text) for text in labels]
    if len(labels) != len(names):
        raise ValueError(f"{len(labels)} labels for {len(names)} frames.")
    if not 0 <= active < len(frames):
        raise ValueError(f"active must be a frame index 0..{len(frames) - 1}, got {active}.")
    still = {"duration": 0, "redraw": redraw}
    play = {"frame": {"duration": frame_ms, "redraw": redraw}, "transition": {"duration": 0},
            "fromcurrent": True, "mode": "immediate"}
    pause = {"frame": still, "transition": {"duration": 0}, "mode": "immediate"}
    # Between the title and the plot: the slider on a row of its own, full width (beside the
    # buttons it would run into them on a phone), then the buttons. In that order because Plotly
    # puts a slider before the buttons in the page (the tab order): drawn above the buttons,
    # Tab meets them as they are seen. Below the plot, legends keep their place.
    margin = layout.get("margin") or {}
    above_plot = margin.get("t") or 60
    title = layout.get("title") or {}
    if title.get("yref") is None:  # a title centred in the taller margin would sit on the buttons
        layout = layout | {"title": title | chart_title(title.get("text") or "")}
    return layout | {
        "height": (layout.get("height") or 450) + CONTROLS_HEIGHT,
        "margin": margin | {"t": above_plot + CONTROLS_HEIGHT},
        "updatemenus": [{
            "type": "buttons", "direction": "left", "showactive": False,
            "x": 0.0, "xanchor": "left", "y": 1.0, "yanchor": "bottom", "pad": {"b": 10, "r": 10},
            "buttons": [
                {"label": "▶ Play", "method": "animate", "args": [None, play]},
                {"label": "❚❚ Pause", "method": "animate", "args": [[None], pause]},
            ],
        }],
        "sliders": [{
            "active": active, "x": 0.0, "len": 1.0, "xanchor": "left", "y": 1.0, "yanchor": "bottom",
            "pad": {"t": 0, "b": BUTTONS_HEIGHT},
            "currentvalue": {"prefix": f"{label} = ", "xanchor": "left"},
            "steps": [
                {"label": text, "method": "animate",
                 "args": [[name], {"frame": still, "transition": {"duration": 0}, "mode": "immediate"}]}
                for name, text in zip(names, labels, strict=True)
            ],
        }],
    }
