"""What a projector and a phone must show whole, as the browser lays the page out (issue 20):
no text of a chart drawn over other text of the same chart, and no label cut off.

JavaScript run in the page, shared by tests/browser/test_classroom.py (every page at projector
sizes, in both modes) and tests/browser/test_phone.py (every page on a phone).
"""

from __future__ import annotations

from support.app_runs import PLAY_KEYS

#: The texts of each Plotly chart that must not meet another text of the same chart, and
#: the texts of each chart that reach outside it. Boxes are the browser's (a rotated axis
#: title's box stands upright); a text element counts whole (its own tspans are inside its
#: box). Two boxes meet when they overlap by more than a pixel both across and down.
#:
#: Compared, each as its own group: the title, each annotation (subplot titles), each axis
#: title, each colour bar's title and its tick labels, Play's buttons (their frames), the
#: frame slider's current value and its tick labels, the legend's entries, the axes' tick
#: labels. Within a group texts may meet (a slider's tick labels on a narrow chart, a
#: legend's rows), and tick labels are not compared with tick labels. Cut off: a text outside
#: the chart's SVG (which clips it) or outside the window across; a legend that scrolls
#: (Plotly gives a legend taller than its room a scroll bar, and hides the entries below).
CHART_TEXT_JS = """() => {
    const TOLERANCE = 1;
    const box = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
    const meet = (a, b) => Math.min(a[2], b[2]) - Math.max(a[0], b[0]) > TOLERANCE
        && Math.min(a[3], b[3]) - Math.max(a[1], b[1]) > TOLERANCE;
    const drawn = (el) => {
        const r = el.getBoundingClientRect();
        return r.width > 0 && r.height > 0 && el.textContent.trim() !== '';
    };
    const overlaps = [], cut = [];
    document.querySelectorAll('[data-testid="stPlotlyChart"] .js-plotly-plot').forEach((plot, chart) => {
        const svg = plot.querySelector('.main-svg');
        if (!svg) return;
        const title = (plot.querySelector('.gtitle')?.textContent ?? '').slice(0, 60);
        const texts = [];
        const add = (el, group) => {
            if (drawn(el)) texts.push({group, text: el.textContent.trim().slice(0, 50), box: box(el)});
        };
        plot.querySelectorAll('.gtitle').forEach((el) => add(el, 'title'));
        plot.querySelectorAll('.annotation-text').forEach((el, i) => add(el, `annotation ${i}`));
        plot.querySelectorAll('.infolayer text[class$="title"]').forEach((el, i) => {
            if (!el.classList.contains('gtitle') && !el.closest('.colorbar')) add(el, `axis title ${i}`);
        });
        plot.querySelectorAll('.colorbar').forEach((bar, i) => {
            bar.querySelectorAll('.cbtitle text').forEach((el) => add(el, `colour bar ${i} title`));
            bar.querySelectorAll('.cbaxis text').forEach((el) => add(el, `colour bar ${i} ticks`));
        });
        plot.querySelectorAll('.updatemenu-button').forEach((button, i) => {
            const frame = button.querySelector('.updatemenu-item-rect');
            if (frame) texts.push({group: `Play button ${i}`, text: button.textContent.trim(), box: box(frame)});
        });
        plot.querySelectorAll('.slider-group > .slider-label').forEach((el) => add(el, 'slider value'));
        plot.querySelectorAll('.slider-labels .slider-label').forEach((el) => add(el, 'slider ticks'));
        plot.querySelectorAll('.legend .legendtext').forEach((el) => add(el, 'legend'));
        plot.querySelectorAll('.xaxislayer-above text, .yaxislayer-above text').forEach((el) => add(el, 'ticks'));
        for (let i = 0; i < texts.length; i++) {
            for (let j = i + 1; j < texts.length; j++) {
                const [a, b] = [texts[i], texts[j]];
                if (a.group === b.group || (a.group === 'ticks' && b.group === 'ticks')) continue;
                if (meet(a.box, b.box)) overlaps.push({chart, title, a: [a.group, a.text], b: [b.group, b.text]});
            }
        }
        const frame = box(svg);
        plot.querySelectorAll('text').forEach((el) => {
            if (!drawn(el) || el.closest('.hoverlayer')) return;
            const [left, top, right, bottom] = box(el);
            if (left < frame[0] - TOLERANCE || right > frame[2] + TOLERANCE || top < frame[1] - TOLERANCE
                || bottom > frame[3] + TOLERANCE || left < -TOLERANCE || right > window.innerWidth + TOLERANCE) {
                cut.push({chart, title, text: el.textContent.trim().slice(0, 60), box: box(el).map(Math.round),
                          chartBox: frame.map(Math.round)});
            }
        });
        plot.querySelectorAll('.legend .scrollbar').forEach((bar) => {
            if (bar.getBoundingClientRect().height > 0) cut.push({chart, title, text: 'the legend scrolls'});
        });
    });
    return {overlaps, cut};
}"""

#: Labels of the page (outside the charts) that are cut off: a text Streamlit ends with an
#: ellipsis (text-overflow, its full text wider than its box: metric labels and values,
#: button and widget labels), or a text reaching past the window's left or right edge with
#: no container that scrolls it into view. With ``tables``: a data table (drawn on a canvas)
#: wider than its box, so that its last columns are cut until it is scrolled (on a desktop;
#: on a phone a table scrolls sideways, as every table does there). A collapsed sidebar is
#: hidden (explorer/ui/style.py), so not looked at; KaTeX's MathML copy is visually hidden.
LABELS_CUT_JS = """(tables) => {
    const width = window.innerWidth;
    const scrolls = (el) => ['auto', 'scroll'].includes(getComputedStyle(el).overflowX)
        && el.scrollWidth > el.clientWidth;
    const cut = [];
    document.querySelectorAll('[data-testid="stMain"] *, [data-testid="stSidebar"] *').forEach((el) => {
        if (el.closest('.js-plotly-plot, .katex-mathml') || !el.checkVisibility({visibilityProperty: true})) return;
        const r = el.getBoundingClientRect();
        if (r.width === 0 || el.textContent.trim() === '') return;
        const text = el.textContent.trim().slice(0, 80);
        if (getComputedStyle(el).textOverflow === 'ellipsis' && el.scrollWidth > el.clientWidth + 1) {
            cut.push(`ends in an ellipsis (${el.scrollWidth} px in ${el.clientWidth}): ${text}`);
            return;
        }
        const ownText = [...el.childNodes].some((node) => node.nodeType === Node.TEXT_NODE && node.textContent.trim());
        if (ownText && (r.right > width + 1 || r.left < -1)) {
            let parent = el.parentElement;
            while (parent && !scrolls(parent)) parent = parent.parentElement;
            if (!parent) cut.push(`runs off the window (${Math.round(r.left)}..${Math.round(r.right)} px): ${text}`);
        }
    });
    if (tables) {
        document.querySelectorAll('[data-testid="stDataFrame"]').forEach((table) => {
            const content = table.querySelector('.dvn-stack > div');
            const frame = table.querySelector('[data-testid="stDataFrameResizable"]');
            const wide = content ? Math.round(content.getBoundingClientRect().width) : 0;
            if (frame && wide > frame.clientWidth + 1) cut.push(`a table ${wide} px wide in ${frame.clientWidth}`);
        });
    }
    return cut;
}"""

#: Every chart is drawn at the width of its place on the page (after the window was resized,
#: Streamlit has Plotly draw it again at the new width).
CHARTS_AT_WIDTH_JS = """() => [...document.querySelectorAll('[data-testid="stPlotlyChart"]')].every((chart) => {
    const plot = chart.querySelector('.js-plotly-plot');
    return plot && plot._fullLayout && plot.querySelector('.main-svg')
        && Math.abs(plot._fullLayout.width - chart.getBoundingClientRect().width) <= 1;
})"""


#: Each chart's height, base text size (Plotly's layout font) and title, and the room the window
#: has for a chart: its height under Streamlit's toolbar, fixed over the page's top.
CHART_SIZES_JS = """() => {
    const header = document.querySelector('[data-testid="stHeader"]')?.getBoundingClientRect().height ?? 0;
    return [...document.querySelectorAll('[data-testid="stPlotlyChart"]')].map((chart) => {
        const plot = chart.querySelector('.js-plotly-plot');
        return {height: chart.getBoundingClientRect().height, room: innerHeight - header,
                font: plot?._fullLayout?.font?.size ?? null,
                title: (chart.querySelector('.gtitle')?.textContent ?? '').slice(0, 50)};
    });
}"""


#: Resolves true once the app has been idle, with the same elements on the page, for 0.2 s (a
#: page's run can end, and a second begin, before all its elements are drawn: the Scorecard's
#: last metrics came after the app had first said it was idle); false after 20 s.
SETTLED_JS = """() => new Promise((resolve) => {
    const elements = () => {
        const app = document.querySelector('[data-testid="stApp"]');
        const idle = app && app.getAttribute('data-test-script-state') === 'notRunning'
            && document.querySelector('[data-stale="true"]') === null;
        return idle ? document.querySelectorAll('[data-testid="stElementContainer"]').length : -1;
    };
    let last = elements(), calm = 0, ticks = 0;
    const tick = () => {
        const now = elements();
        calm = now >= 0 && now === last ? calm + 1 : 0;
        last = now;
        if (calm >= 2) resolve(true);
        else if (++ticks > 200) resolve(false);
        else setTimeout(tick, 100);
    };
    setTimeout(tick, 100);
})"""


#: Every text of every chart drawn smaller than the argument (CSS pixels, its own font size; a tspan
#: within it, such as a power of ten's exponent, is part of its text): its chart, title, text and size.
#: Hover labels are left out (they come and go with the mouse).
SMALL_CHART_TEXT_JS = """(least) => {
    const small = [];
    document.querySelectorAll('[data-testid="stPlotlyChart"] .js-plotly-plot').forEach((plot, chart) => {
        const title = (plot.querySelector('.gtitle')?.textContent ?? '').slice(0, 60);
        plot.querySelectorAll('text').forEach((el) => {
            const r = el.getBoundingClientRect();
            if (r.width === 0 || el.textContent.trim() === '' || el.closest('.hoverlayer')) return;
            const size = parseFloat(getComputedStyle(el).fontSize);
            if (size < least) small.push({chart, title, text: el.textContent.trim().slice(0, 40), size});
        });
    });
    return small;
}"""


def wait_until_settled(page) -> None:
    """Wait until the page has settled (SETTLED_JS) and every chart is drawn at its width."""
    assert page.evaluate(SETTLED_JS), "the page never settled: the app kept running or its elements kept changing"
    page.wait_for_function(CHARTS_AT_WIDTH_JS)


def describe_chart_text(found: dict, where: str, *, overlaps: bool = True) -> list[str]:
    """One line per text cut off and (with ``overlaps``) per pair of texts of a chart that
    meet, of CHART_TEXT_JS's findings."""
    lines = [f"{where}: chart {c['chart']} ({c['title']!r}): cut off: {c}" for c in found["cut"]]
    if overlaps:
        lines += [f"{where}: chart {o['chart']} ({o['title']!r}): {o['a']} over {o['b']}" for o in found["overlaps"]]
    return lines


#: Clicks the first closed expander of the page that holds a Play chart drawn on request
#: (explorer.ui.blocks.play_on_request: its label begins "Play:"), as a visitor does; true if it found one.
#: The expanders a page draws closed whose state its URL keeps (explorer.ui.blocks.kept_on_request), by key: the
#: Play charts and M-RoPE's text and video sliders. Streamlit gives a keyed expander's block the class st-key-<key>.
KEPT_ON_REQUEST_KEYS = (*sorted(PLAY_KEYS), "sequence")
OPEN_NEXT_KEPT_JS = """(keys) => {
    const summary = keys.map((key) => document.querySelector(`.st-key-${key} details:not([open]) > summary`))
        .find((el) => el !== null);
    summary?.click();
    return summary !== undefined;
}"""
#: A page has at most two of them (Waves' two Play charts).
MAX_KEPT_ON_REQUEST = 2


def open_kept_on_request(page) -> int:
    """Open every expander of the page drawn on request whose state the URL keeps (the Play charts, M-RoPE's
    text and video sliders), one click at a time, each drawn before the next (a click reruns the page); how
    many it opened."""
    opened = 0
    while page.evaluate(OPEN_NEXT_KEPT_JS, list(KEPT_ON_REQUEST_KEYS)):
        opened += 1
        assert opened <= MAX_KEPT_ON_REQUEST, "an expander drawn on request stayed closed once clicked"
        wait_until_settled(page)
    return opened
