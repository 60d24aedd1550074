"""Every URL key each page reads, written down: what a view's address may carry, without running the app.

The app itself never needs this list: each control registers its key when it is drawn
(explorer/ui/controls.py), and a URL's key that the run did not read gets a notice then. A
lesson file cannot wait for that: it names views of the app as the Share button writes them
(``/waves?d=64&pair=3``), and when it is loaded, before anything is presented, a step that
names an unknown page or a key its page never reads must be refused in one line. That check
reads this registry.

``SHARED_KEYS`` are read on every page; ``PAGE_KEYS`` holds, by the page's url_path
(explorer/page_list.py, "home" for Home), the keys its own controls may read at any settings:
also those drawn only at some (the window sliders of a long L or a large d, a second variant's
base, the parameters of each of Rotary's scaling methods), and those whose names are computed
in code (Rotary's and Longer contexts' parameters, explorer/rope_methods.py's PARAMETERS).
Each set is written out in full, so that a page's keys are read in one place.

tests/app/test_url_keys.py holds the registry in step with the pages: over the defaults, every
seed preset, the copied links and views it chooses to reach each key, every key a page draws is
here, and every key here is drawn by some view. A control added, renamed or removed on a page
fails there until its line here changes.
"""

from __future__ import annotations

#: The lessons feature's keys (which lesson, which of its steps, whether a student follows the
#: teacher): reserved for it, read on every page once it is built; nothing draws them yet.
LESSON_KEYS: frozenset[str] = frozenset({"lesson", "step", "follow"})

#: The keys every page reads: the sidebar's shared controls and its preset, presentation mode,
#: and the lessons feature's (``LESSON_KEYS``).
SHARED_KEYS: frozenset[str] = frozenset({
    "preset", "d", "n", "L", "layout", "convention",  # the sidebar (explorer.ui.controls)
    "present",  # presentation mode (explorer.share.PRESENT_KEY)
}) | LESSON_KEYS

#: Each page's own keys, by url_path, at any settings. "code" (the "reproduce this" toggle,
#: explorer.ui.blocks.CODE_KEY) is every page's own: Attention by offset draws it only while a
#: scheme is chosen.
PAGE_KEYS: dict[str, frozenset[str]] = {
    "home": frozenset({"code"}),
    "matrix": frozenset({
        "view", "transpose",
        "rows",  # when L has more positions than the heatmap has rows
        "row_start",  # and rows=window
        "code",
    }),
    "waves": frozenset({
        "wave_positions", "wave_dims", "wave_columns",
        "wave_start",  # when L is longer than the columns' window (300 positions)
        "pair", "k", "code",
        "play", "circle_play",  # the Play charts drawn on request (explorer.ui.blocks.play_on_request)
    }),
    "similarity": frozenset({"ref", "play", "code"}),
    "binary": frozenset({"bits", "transpose", "ref", "code"}),
    "relative": frozenset({
        "delta",
        "window_start",  # when d is larger than the transition matrix's window (128)
        "pair", "k", "play", "code",
    }),
    "scorecard": frozenset({"offset", "code"}),
    "pitfalls": frozenset({
        "a", "b",
        "other_n",  # when a variant is other_base
        "offset",  # when a variant is offset
        "code",
    }),
    "precision": frozenset({"column", "code"}),
    "embeddings": frozenset({"sentence", "other", "scale", "code"}),
    "rotary": frozenset({
        "model", "rope_layout", "qk",
        "seed",  # when qk=random
        "scaling",
        # The chosen scaling method's parameters (explorer.rope_methods PARAMETERS, by MethodEntry.controls):
        "factor",  # every method
        "original",  # dynamic, yarn, llama3, longrope
        "beta_fast", "beta_slow",  # yarn
        "low_freq", "high_freq",  # llama3
        "partial",  # proportional
        "rope_pair", "qpos", "kpos", "play", "code",
    }),
    "attention": frozenset({"schemes", "causal", "scaled", "heads", "head", "query", "play", "code"}),
    "contexts": frozenset({
        "model", "trained", "target", "factor", "method",
        "parameters",  # shows the boxes below; hidden, they are read all the same
        "low_freq", "high_freq", "beta_fast", "beta_slow", "partial",  # every method's own (rope_methods)
        "truncate", "mscale", "mscale_all_dim", "attention_factor", "max_positions",
        "base",  # an exact base the sidebar's n cannot hold
        "code",
    }),
    "layers": frozenset({"layer_model", "layer_target", "code"}),
    "mrope": frozenset({
        "vl_model", "text_before", "text_between", "text_after", "image_rows", "image_cols",
        "video_frames", "video_rows", "video_cols", "video_seconds",
        "sequence",  # opens the text runs' and the video's sliders; closed, they are read all the same
        "query_row", "query_col", "code",
    }),
}


def page_keys(url_path: str) -> frozenset[str]:
    """Every key a view of the page at ``url_path`` ("home" for Home) may carry in its URL: the
    shared ones and the page's own. An unknown url_path raises ValueError naming the known ones."""
    if url_path not in PAGE_KEYS:
        raise ValueError(f"No page {url_path!r}; the pages are {', '.join(PAGE_KEYS)}.")
    return SHARED_KEYS | PAGE_KEYS[url_path]
