"""The pages of the app, in navigation order: one list for app.py's navigation, Home's map
of the pages and the tests (a page cannot import app.py, which runs the navigation).

A page is two files: ``pages/<url path>_page.py`` lays it out (and holds its own cached
computations), and its topic module, ``explorer/topics/<url path>.py``, holds its analysis,
figure builders and "reproduce this" code, without Streamlit; a long topic is a package,
``explorer/topics/<url path>/``, one module per part, whose ``__init__`` re-exports them.
Adding a page is a page file, a topic module and one line here; tests/app/test_layout.py and
tests/app/test_pages.py then hold it to that contract.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

#: The browser tab's icon, an SVG sent inline with the page (a data: URL). Not a Material icon: for
#: those Streamlit has the browser fetch the icon from a Google font host, which a school's offline
#: server cannot reach and a self-hosted app should not call.
APP_ICON_SVG = (Path(__file__).parent / "data" / "app_icon.svg").read_text(encoding="utf-8")

#: The sections of Home's map of the pages: the paper's encoding, then what models run today.
SINUSOID = "The sinusoid"
HEIRS = "The sinusoid's heirs"
MODELS_AS_THEY_RUN = "Models as they run"
FOR_A_CLASS = "For a class"


@dataclass(frozen=True)
class PageInfo:
    """A page: its URL path (also its key in presets), title, icon, summary, topic module and
    the section of Home's map it is listed in."""

    url_path: str
    title: str
    icon: str
    summary: str
    topic: str
    section: str = SINUSOID

    @property
    def path(self) -> str:
        """The page's file: not named as its URL path (see app.py)."""
        return f"pages/{self.url_path}_page.py"


HOME = PageInfo("home", "Home", ":material/home:",
                "What positional encoding is for, the criteria, the presets.", "explorer.topics.home")

PAGES: tuple[PageInfo, ...] = (
    HOME,
    PageInfo("matrix", "Encoding matrix", ":material/grid_on:",
             "P as a heatmap (position x dimension), its angles in degrees, frequencies and wavelengths.",
             "explorer.topics.matrix"),
    PageInfo("waves", "Waves", ":material/show_chart:",
             "One position across the dimensions, chosen dimensions across positions, a pair on the unit circle.",
             "explorer.topics.waves"),
    PageInfo("similarity", "Similarity", ":material/compare_arrows:",
             "Dot product, cosine and SSE against a reference position; they depend only on the offset.",
             "explorer.topics.similarity"),
    PageInfo("binary", "Binary vs sinusoid", ":material/looks_one:",
             "Binary codes of the positions beside the sinusoids: bit periods against wavelengths.",
             "explorer.topics.binary"),
    PageInfo("relative", "Relative positions", ":material/rotate_right:",
             "The transition matrix M(δ): a shift by δ is a fixed rotation of every sine/cosine pair.",
             "explorer.topics.relative"),
    PageInfo("scorecard", "Criteria scorecard", ":material/fact_check:",
             "Sinusoid against integer, scaled, binary and learned positions, each criterion measured live.",
             "explorer.topics.scorecard"),
    PageInfo("pitfalls", "Conventions and pitfalls", ":material/rule:",
             "Two variants side by side, their difference, and a checker for your own matrix.",
             "explorer.topics.pitfalls"),
    PageInfo("precision", "Precision", ":material/precision_manufacturing:",
             "float32, float16, bfloat16 and the 8-bit floats against float64 as the position grows.",
             "explorer.topics.precision"),
    PageInfo("embeddings", "Embeddings + position", ":material/text_fields:",
             "Type a sentence: word order is invisible without PE and visible with it.",
             "explorer.topics.embeddings"),
    PageInfo("rotary", "Rotary (RoPE)", ":material/360:",
             "RoPE: the sinusoid's rotation moved into attention; scores that depend on m − n alone.",
             "explorer.topics.rotary", HEIRS),
    PageInfo("attention", "Attention by offset", ":material/visibility:",
             "What each scheme adds to a content-free attention score by offset, and where softmax then looks.",
             "explorer.topics.attention", HEIRS),
    PageInfo("contexts", "Longer contexts", ":material/open_in_full:",
             "A model's RoPE past its trained length: which pairs meet unseen angles, and what each method does.",
             "explorer.topics.contexts", HEIRS),
    PageInfo("layers", "Your model, layer by layer", ":material/stacks:",
             "A model's decoder layers as its code runs them: which rotate, with which base, scaling and window.",
             "explorer.topics.layers", MODELS_AS_THEY_RUN),
    PageInfo("mrope", "Images and video (M-RoPE)", ":material/image:",
             "Three positions per token for images and video, as Qwen's vision-language models give them.",
             "explorer.topics.mrope", MODELS_AS_THEY_RUN),
)


def address_path(info: PageInfo) -> str:
    """The page's path in the app's address: its url_path, and "" for Home, the default page,
    served at "/" (explorer/ui/navigation.py)."""
    return "" if info is HOME else info.url_path

#: Not a topic of positional encoding but the app's lessons (explorer/lessons.py): a teacher's
#: sequence of views. It has no chart, no "reproduce this" and no downloads of arrays, so the
#: topic pages' contract (tests/app/test_pages.py) does not hold it; tests/app/test_lessons_page.py does.
LESSONS = PageInfo("lessons", "Lessons", ":material/school:",
                   "A teacher's sequence of views: present one with a clicker, build your own, let a class follow.",
                   "explorer.lessons", FOR_A_CLASS)

#: Every page of the navigation, in its order.
ALL_PAGES: tuple[PageInfo, ...] = (*PAGES, LESSONS)
