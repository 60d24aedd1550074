"""Positional Encoding Explorer: entry point.

Draws the shared controls (in the sidebar, mirrored in the URL), then runs the page the
URL names. Each page is a file in pages/, named ``<url path>_page.py`` (similarity ->
pages/similarity_page.py), that lays out its topic module, explorer/topics/<url path>.py.
Streamlit also reads a pages/ folder as its older, file-based navigation, and a deep link
whose URL path equals a page file's name would run that file without this one (no
sidebar, no settings). So no page file is named as its URL path (tests/app/test_app.py
checks it, and the browser tests open every page by deep link on a freshly started server).
Home is served at "/"; "/home" is a hidden page without a file that switches to it
(explorer/ui/navigation.py, ALIASES).

This one file is both the ASGI app and the script. ``streamlit run app.py`` sees the
``st.App`` assigned below and imports this file as a module (``__name__ == "app"``): the
App serves this same file as the script, after its lifespan (explorer/ui/startup.py) has
warmed the caches. Each session's run executes the file as ``__main__``: the script.
"""

import streamlit as st

if __name__ != "__main__":
    from explorer.ui import startup

    app = st.App(__file__, lifespan=startup.lifespan)
else:
    from explorer.page_list import APP_ICON_SVG, LESSONS
    from explorer.ui import classroom, controls, lesson_follow, lesson_present, navigation, style

    controls.begin_run()
    presenting = classroom.page_config(
        page_title="Positional Encoding Explorer", page_icon=APP_ICON_SVG, layout="wide"
    )
    style.apply()

    PAGES = navigation.pages()
    # Expanded: with more than twelve pages Streamlit hides the last ones behind "View more".
    page = st.navigation(navigation.routes(PAGES), expanded=True)
    st.session_state[lesson_present.CURRENT_PAGE] = page.url_path
    st.session_state["settings"] = controls.shared_settings()
    # A lesson's step, presented or followed, is an address: its view is opened as a link opens it.
    follow = lesson_follow.following()
    lesson = None if follow else lesson_present.begin()
    view = lesson_follow.wanted_view(follow) if follow else lesson_present.wanted_view(lesson, page.url_path)
    if view is not None:
        navigation.open_view(view)
    target = controls.pending_page_switch()
    if target is not None and PAGES[target] is not page:
        st.switch_page(PAGES[target])
    # Above the page: presentation mode's style and the Share bar (the notices of the URL's values are the page's),
    # then the lesson's step and its narration.
    bar = classroom.bar_place()
    if presenting:
        style.present()
    if follow:
        follow_bar = lesson_follow.draw_bar()
    elif lesson is not None:
        delivery = lesson_present.draw_bar(lesson)
    with classroom.page_block():
        navigation.run_page(page)
    # The controls after the page: on a step, the page's first chart goes out before them.
    share_pressed = classroom.classroom_bar(
        bar, building=lesson is None and not follow and page.url_path != LESSONS.url_path
    )
    controls.sidebar_ui()
    controls.write_url()
    if follow:
        lesson_follow.after_url_written(follow, follow_bar)
    classroom.share_panel(share_pressed, page, lesson)
    if lesson is not None:
        lesson_present.publish(lesson, delivery)
