"""The app's CSS, what Streamlit's own styles cannot be told by its options, and the page's scripts.

Static text only, built from no input, so no user text can reach the raw HTML it is sent
as (tests/app/test_code_rules.py allows ``st.html`` here alone, and only with these constants).
Each rule says which check it answers (tests/browser/test_accessibility.py).

The scripts (explorer/ui/keyboard.py's keys for Plotly's controls, explorer/ui/browser_navigation.py's
history) go out in the style sheet's element: each was a Streamlit component of its own, mounted in
every whole run (two widgets registered a mount, keyed or not), and without the two a whole run of
Encoding matrix and Rotary cost 0.83 / 0.88x (benchmarks/JOURNAL.md, "2026-12-06, 20:00-21:00").
Streamlit runs an st.html's scripts once, when the element first appears.
"""

from __future__ import annotations

import streamlit as st

from explorer.ui import browser_navigation, keyboard

CSS = """<style>
/* axe color-contrast: Streamlit draws captions (st.caption) in the text colour at opacity
   0.6, 3.9:1 on white, under the 4.5:1 that small text needs. At 0.75 it is 6:1 on white,
   and a caption still reads as secondary (the dark theme's light text gains too). */
[data-testid="stCaptionContainer"] { opacity: 0.75; }
/* axe heading-order: a page's sections are st.header (h2) under its st.title (h1), not h3;
   they keep the size they had as h3. */
[data-testid="stMain"] [data-testid="stHeading"] h2 { font-size: 1.75rem; }
/* Keyboard: Streamlit shows the sidebar's collapse button only while the pointer is over
   the sidebar (visibility: hidden otherwise), which also keeps it out of the tab order. */
[data-testid="stSidebarHeader"] [data-testid="stSidebarCollapseButton"] { visibility: visible; }
/* axe color-contrast, with the "reproduce this" code shown: Streamlit's syntax colours are
   2.2 to 3.6:1 on its light code background, and its blue and grey 4.0 and 4.2:1 on the dark
   one. The same hues, darkened (light theme) or lightened (dark theme) to 4.8:1 at least;
   light-dark() follows the app's color-scheme, which Streamlit sets with its theme. */
.stCode pre code .token.comment, .stCode pre code .token.punctuation { color: light-dark(#696c7a, #8a8e9d); }
.stCode pre code .token.keyword, .stCode pre code .token.function { color: light-dark(#186ebd, #3a93e5); }
.stCode pre code .token.boolean { color: light-dark(#157d36, #21c354); }
.stCode pre code .token.number { color: light-dark(#1c796c, #29b09d); }
.stCode pre code .token.operator { color: light-dark(#af520e, #ed6f13); }
.stCode pre code .token.string { color: light-dark(#077f2c, #09ab3b); }
/* axe color-contrast, dark theme: a slider's value above its thumb and the selected tab's
   label are in the dark theme's primary red (#cf4250), 3.5 and 3.9:1 on its backgrounds;
   lightened there to 4.8:1. The light theme's (#c53948) is kept. */
[data-testid="stSliderThumbValue"], [role="tab"][aria-selected="true"] p {
    color: light-dark(#c53948, #da6d78);
}
/* axe color-contrast: a chosen pill's label (st.pills) is in the primary red on a tint of it,
   4.5:1 in the light theme (#c53948 on #f9ebed) and 3.6:1 in the dark one; darkened or
   lightened to 5.1:1. */
button[data-variant="pills"][aria-pressed="true"] p { color: light-dark(#b8323f, #da6d78); }
/* Phones: a slider's range input is visually hidden (clipped to a pixel) at its thumb, but its
   box runs the track's width on from there: at its maximum, Waves' "Pairs x shown" reached
   107 px past a 390 px screen, where a screen reader's focus ring and a scroll into view go.
   A pixel wide, it stays under the thumb; the keyboard and the pointer work as before. */
[data-testid="stSlider"] input[type="range"] { width: 1px; }
/* No label cut off: the uploader's line of accepted types (Rotary's lists eight) wraps on a phone
   instead of ending in an ellipsis. */
[data-testid="stFileUploaderDropzoneInstructions"] * { white-space: normal !important; text-overflow: clip !important; }
/* A file over the checkers' upload limit: Streamlit's uploader keeps it in the browser and says why
   only in a tooltip (and to a screen reader), over a red chip. The page says it in a sentence
   under the chip, with the command that reads such a file. */
.st-key-rotary_upload:has([data-testid="stFileChip"][aria-invalid="true"])::after,
.st-key-pitfalls_upload:has([data-testid="stFileChip"][aria-invalid="true"])::after {
    /* explorer.uploads.LARGER_FILES, which the checkers' messages use too (tests/shared/test_uploads.py) */
    content: "Over 5 MB, the browser does not send a file: in a terminal, python -m pe_core.identify FILE \
reads it from disk (a checkpoint's shard, a .gguf, a checkpoint's folder).";
    display: block; margin-top: 0.5rem; font-size: 0.875rem;
    color: light-dark(#9d1c28, #ffabab);
}
/* Phones: a formula wider than the screen wraps at KaTeX's own break points (after its
   relations and operators) instead of scrolling in a box that the keyboard cannot scroll
   (axe scrollable-region-focusable); formulas that fit are unchanged. */
.katex-display > .katex { white-space: normal; }
/* Keyboard: explorer/ui/keyboard.py puts Plotly's Play and Pause buttons, frame slider and legend
   entries (SVG) in the tab order; this shows which one has the focus. */
.js-plotly-plot .updatemenu-button:focus-visible, .js-plotly-plot .slider-container:focus-visible,
.js-plotly-plot .legend .traces:focus-visible {
    outline: 3px solid light-dark(#1c5fb0, #8ab4f8); outline-offset: 2px;
}
/* The element that carries the page's scripts (PAGE_CHROME) takes no room: Streamlit gave it a row's gap. */
.st-key-screen_size, [data-testid="stElementContainer"]:has(> [data-testid="stHtml"] > script) { display: none; }
/* Keyboard: Streamlit slides a collapsed sidebar out of view (presentation mode closes it)
   but leaves its controls in the tab order: Tab reached them and an arrow key changed d with
   nothing visible moving. Hidden once it has slid out (0.3 s, Streamlit's own transition), so
   that Tab skips it, its help buttons too (Streamlit makes those visible themselves); shown
   at once when it opens (its open button, stExpandSidebarButton, is outside it). */
[data-testid="stSidebar"][data-collapsed="true"] {
    visibility: hidden;
    transition: transform 0.3s, min-width 0.3s, max-width 0.3s, visibility 0s 0.3s;
}
[data-testid="stSidebar"][data-collapsed="true"] * {
    visibility: hidden !important; transition: visibility 0s 0.3s;
}
/* Keyboard: a focused control is seen. Streamlit's heading links and element toolbars (the
   Share panel's copy button, a table's search) are in the tab order but shown only under the
   mouse (opacity 0): shown while they have the focus. */
[data-testid="stHeaderActionElements"] a:focus-visible, [data-testid="stElementToolbar"]:focus-within {
    opacity: 1 !important;
}
/* No label cut off: Streamlit writes button, widget and metric labels and metric values on
   one line, cut with an ellipsis where they are wider than their box (a preset button's
   name, a scheme's metric on the Scorecard, a toggle's label on a phone). They wrap. */
:is(button, [data-testid="stWidgetLabel"], [data-testid="stMetricLabel"], [data-testid="stMetricValue"])
    [data-testid="stMarkdownContainer"] :is(p, span) {
    white-space: normal !important; overflow-wrap: break-word;
}
/* Share: the QR code as large as the screen's height allows beside the address (10rem: the
   dialog's title and margins above and below it), so that on a 1280 x 720 projector the
   whole code is on the screen, in presentation mode too; its modules stay sharp. */
.st-key-share_qr [data-testid="stImage"] { max-width: calc(100dvh - 10rem); }
.st-key-share_qr img { image-rendering: pixelated; }
</style>"""


#: Presentation mode's style: larger type everywhere (Streamlit sizes its text in rem), growing
#: with the screen as its charts do (presentation.py: 21 px on a 1280 x 720 projector, times the
#: smaller of 100vw / 1280 and 100vh / 720, up to twice), the toolbar's menu and deploy decorations
#: hidden (the sidebar's open button stays), less empty space above the title. A constant:
#: nothing a visitor typed or sent reaches it.
PRESENT_STYLE = """<style>
html { font-size: clamp(21px, min(1.640625vw, 2.916667vh), 42px); }
[data-testid="stMainMenu"], [data-testid="stToolbarActions"], [data-testid="stDecoration"],
[data-testid="stAppDeployButton"] { display: none !important; }
[data-testid="stMainBlockContainer"] { padding-top: 4rem; max-width: none; }
</style>"""


#: What every whole run sends first: the style sheet and the page's scripts.
PAGE_CHROME = CSS + keyboard.SCRIPT + browser_navigation.SCRIPT


def apply() -> None:
    """Send the CSS and the page's scripts with the page."""
    _page_chrome()


# Replayed, not drawn again: st.html dedents its text with regular expressions in every call (0.2 ms
# for these 14 KB, a few per cent of a whole run), where a replay re-sends the element it recorded.
@st.cache_resource(show_spinner=False)
def _page_chrome() -> None:
    st.html(PAGE_CHROME, unsafe_allow_javascript=True)


def present() -> None:
    """Presentation mode's style (st.html sends style-only HTML to the event container, drawn nowhere)."""
    st.html(PRESENT_STYLE)
