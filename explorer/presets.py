"""One-click views that reproduce each figure of the source documents (shared/seeds)."""

from __future__ import annotations

from dataclasses import dataclass, field

from explorer.settings import Settings


@dataclass(frozen=True)
class Preset:
    """A seed figure: the shared settings, the page that draws it, and page controls."""

    label: str
    settings: Settings
    page: str
    page_values: dict[str, object] = field(default_factory=dict)
    source: str = ""


CUSTOM = "custom"

PRESETS: dict[str, Preset] = {
    "seed000-matrix": Preset(
        "Seed 000: 4x4 example (L=4, d=4, n=100)",
        Settings(d=4, n=100.0, L=4),
        "matrix",
        source="The printed matrix of getPositionEncoding(seq_len=4, d=4, n=100).",
    ),
    "seed000-sinusoids": Preset(
        "Seed 000: sinusoids for k = 0, 4, 8, 12 (d=512)",
        Settings(d=512, n=10000.0, L=13),
        "waves",
        {"wave_positions": "0,4,8,12", "wave_dims": 100},
        source="plotSinusoid(k, d=512, n=10000) over dimension index 0..99 for k = 0, 4, 8, 12.",
    ),
    "seed001-notebook": Preset(
        "Seed 001: TF notebook (L=50, d=512, [sin|cos], tensor2tensor)",
        Settings(d=512, n=10000.0, L=50, layout="concatenated", convention="tensor2tensor"),
        "matrix",
        source="Angle rates, angle map in degrees and the concatenated encoding heatmap.",
    ),
    "seed001-similarity": Preset(
        "Seed 001: similarity to position 20",
        Settings(d=512, n=10000.0, L=50, layout="concatenated", convention="tensor2tensor"),
        "similarity",
        {"ref": 20},
        source="Dot product and SSE of every position against position 20.",
    ),
    "seed001-shift": Preset(
        "Seed 001: shift by -10",
        Settings(d=512, n=10000.0, L=50, layout="concatenated", convention="tensor2tensor"),
        "relative",
        {"delta": -10, "window_start": 0},
        source="transition_matrix(-10), the shifted map and its error 'to numerical precision'.",
    ),
    "seed002-dims": Preset(
        "Seed 002: dimensions 0 and 1 (L=50, d=128)",
        Settings(d=128, n=10000.0, L=50),
        "waves",
        {"wave_columns": "0,1"},
        source="Positional encoding for the first two dimensions over 50 positions.",
    ),
    "seed002-bug": Preset(
        "Seed 002 with its 2*i bug (= base n squared, 10^8)",
        Settings(d=128, n=1e8, L=50),
        "waves",
        {"wave_columns": "0,1"},
        source="The loop applies 2*i to an i that already steps by 2: the exponent is 4j/d, "
        "which is the paper's formula with base n^2 = 10^8. Dimensions 0 and 1 (pair 0) are "
        "unchanged; every slower pair is wrong.",
    ),
    "seed003-matrix": Preset(
        "Seed 003: base 1,000,000 (L=100, d=512), transposed",
        Settings(d=512, n=1e6, L=100),
        "matrix",
        {"transpose": True},
        source="encoding(idx, 512) with n = 1e6 for 100 tokens, drawn transposed.",
    ),
    "seed003-binary": Preset(
        "Seed 003: binary codes of 0..99 (width 10)",
        Settings(d=512, n=1e6, L=100),
        "binary",
        {"bits": 10, "transpose": True},
        source="binary_representation(range(100)) with width 10, least significant bit first.",
    ),
    "seed004-heatmap": Preset(
        "Seed 004: L=50, d=128 heatmap",
        Settings(d=128, n=10000.0, L=50),
        "matrix",
        source="generate_positional_embeddings(50, 128).",
    ),
}


def preset_label(key: str) -> str:
    """The label shown for a preset key in the sidebar."""
    return "Custom" if key == CUSTOM else PRESETS[key].label
