"""Keyboard access to Plotly's Play controls (explorer/animation.py) and legends.

Plotly draws an animated chart's Play and Pause buttons and its frame slider in SVG, with
mouse handlers only: out of the tab order, unnamed for a screen reader. This script (static
JavaScript, sent with the app's style sheet: explorer/ui/style.py) gives every such control on
the page, as Plotly draws it, what a native control has:

- Play and Pause: ``role="button"``, a name ("Play (<chart title>)"), Tab focus, Enter and
  Space press it;
- the frame slider: ``role="slider"`` with its range, current frame and the text Plotly
  shows above it ("k = 12"), Tab focus, the arrow keys step a frame, Home and End go to
  the first and last.

Legend entries, which show or hide their trace on a click, get the same: ``role="switch"``,
checked while the trace is shown, Tab focus, Enter and Space toggle it.

Plotly's mode bar (zoom, pan, download... eight buttons a chart, shown under the mouse) leaves
the tab order: its buttons stood between Tab and every Play button (20 to 75 presses from the
top of a page). The mouse uses them as before.

A key is turned into the mouse event Plotly listens to (a click on a button; on the slider,
a press and release over the frame's tick mark; on a legend entry, a press and release on
it), so the chart does exactly what it does for the mouse, in the browser, with no rerun.
The focus ring is in explorer/ui/style.py.
"""

from __future__ import annotations

#: Runs in the app's page, once per page however often Streamlit draws the element that carries it:
#: one watcher. Plotly redraws its controls on every new figure, so new ones are found by a
#: MutationObserver, at most once an animation frame.
SCRIPT = r"""<script>
(() => {
    if (window.__pePlayKeys) return;
    window.__pePlayKeys = true;

    const plotOf = (node) => node.closest('.js-plotly-plot');
    // A wrapped title (explorer/figures.py fit_title) is a tspan per line: joined by spaces.
    const titleOf = (plot) => {
        const title = plot.querySelector('.gtitle');
        const lines = title ? [...title.querySelectorAll('tspan.line')] : [];
        const text = lines.length ? lines.map((line) => line.textContent.trim()).join(' ') : title?.textContent;
        return (text ?? '').trim();
    };

    const mouseAt = (clientX, clientY) => ({clientX, clientY, bubbles: true, cancelable: true, view: window});
    const centre = (element) => {
        const box = element.getBoundingClientRect();
        return [box.left + box.width / 2, box.top + box.height / 2];
    };
    // Enter and Space do what a click does, as on a native button or switch.
    const onPress = (element, press) => element.addEventListener('keydown', (event) => {
        if (event.key === 'Enter' || event.key === ' ') {
            event.preventDefault();
            press();
        }
    });

    const sliderIndex = (slider) => [...plotOf(slider).querySelectorAll('.slider-container')].indexOf(slider);
    const sliderOptions = (slider) => plotOf(slider)._fullLayout?.sliders?.[sliderIndex(slider)];

    const describeSlider = (slider) => {
        const options = sliderOptions(slider);
        if (!options) return;
        const steps = options.steps.filter((step) => step.visible !== false).length;
        slider.setAttribute('aria-valuemin', '0');
        slider.setAttribute('aria-valuemax', String(Math.max(0, steps - 1)));
        slider.setAttribute('aria-valuenow', String(options.active ?? 0));
        const shown = slider.querySelector('.slider-group > .slider-label')?.textContent?.trim();
        if (shown) slider.setAttribute('aria-valuetext', shown);
    };

    const moveSlider = (slider, target) => {
        const ticks = slider.querySelectorAll('.slider-tick-rect');
        const rail = slider.querySelector('.slider-rail-touch-rect');
        if (!rail || ticks.length === 0) return;
        const index = Math.max(0, Math.min(ticks.length - 1, target));
        const at = mouseAt(centre(ticks[index])[0], centre(rail)[1]);
        rail.dispatchEvent(new MouseEvent('mousedown', at));
        plotOf(slider).dispatchEvent(new MouseEvent('mouseup', at));
        requestAnimationFrame(() => describeSlider(slider));
    };

    const describeLegendEntry = (entry) => {
        const trace = entry.__data__?.[0]?.trace;
        const name = (entry.querySelector('.legendtext')?.textContent ?? '').trim();
        entry.setAttribute('aria-label', `${name} (${titleOf(plotOf(entry))})`);
        entry.setAttribute('aria-checked', String(trace?.visible !== 'legendonly'));
    };

    const toggleLegendEntry = (entry) => {
        const toggle = entry.querySelector('.legendtoggle');
        if (!toggle) return;
        const at = mouseAt(...centre(toggle));
        toggle.dispatchEvent(new MouseEvent('mousedown', at));
        toggle.dispatchEvent(new MouseEvent('mouseup', at));
    };

    const SLIDER_KEYS = {ArrowRight: 1, ArrowUp: 1, ArrowLeft: -1, ArrowDown: -1};

    const enhance = () => {
        for (const button of document.querySelectorAll('.js-plotly-plot .modebar-btn:not([tabindex])')) {
            button.setAttribute('tabindex', '-1');
        }
        for (const button of document.querySelectorAll('.js-plotly-plot .updatemenu-button:not([tabindex])')) {
            const text = (button.querySelector('.updatemenu-item-text')?.textContent ?? '')
                .replace(/^[^A-Za-z]+/, '').trim();
            button.setAttribute('tabindex', '0');
            button.setAttribute('role', 'button');
            button.setAttribute('aria-label', `${text} (${titleOf(plotOf(button))})`);
            onPress(button, () => button.dispatchEvent(new MouseEvent('click', mouseAt(...centre(button)))));
        }
        for (const slider of document.querySelectorAll('.js-plotly-plot .slider-container:not([tabindex])')) {
            slider.setAttribute('tabindex', '0');
            slider.setAttribute('role', 'slider');
            slider.setAttribute('aria-label', `Frame (${titleOf(plotOf(slider))})`);
            describeSlider(slider);
            slider.addEventListener('focus', () => describeSlider(slider));
            slider.addEventListener('keydown', (event) => {
                const options = sliderOptions(slider);
                if (!options) return;
                const last = slider.querySelectorAll('.slider-tick-rect').length - 1;
                let target = null;
                if (event.key in SLIDER_KEYS) target = (options.active ?? 0) + SLIDER_KEYS[event.key];
                else if (event.key === 'Home') target = 0;
                else if (event.key === 'End') target = last;
                if (target === null) return;
                event.preventDefault();
                moveSlider(slider, target);
            });
            plotOf(slider).on?.('plotly_sliderchange', () => describeSlider(slider));
        }
        for (const entry of document.querySelectorAll('.js-plotly-plot .legend .traces:not([tabindex])')) {
            entry.setAttribute('tabindex', '0');
            entry.setAttribute('role', 'switch');
            describeLegendEntry(entry);
            onPress(entry, () => toggleLegendEntry(entry));
            const plot = plotOf(entry);
            if (!plot.__peLegendWatched) {
                plot.__peLegendWatched = true;
                // Plotly restyles (and redraws the legend) once a click is told from a double click.
                const entries = () => plot.querySelectorAll('.legend .traces');
                plot.on?.('plotly_restyle', () => entries().forEach(describeLegendEntry));
            }
        }
    };

    let pending = false;
    new MutationObserver(() => {
        if (pending) return;
        pending = true;
        requestAnimationFrame(() => { pending = false; enhance(); });
    }).observe(document.body, {childList: true, subtree: true});
    enhance();
})();
</script>"""
