"""Everything between pe_core (the maths) and the pages, in three kinds, one folder each:

- ``explorer/topics/``: one module per page, named after the page's URL path: its analysis
  on top of pe_core, its figure builders and its "reproduce this" code. No Streamlit, and no
  topic imports another topic or anything in ``ui/``.
- ``explorer/ui/``: the Streamlit side, the only modules here that import streamlit: the
  sidebar and page controls, the page building blocks, the cached computations several
  pages share, the navigation, the classroom pieces (Share, presentation mode), keyboard
  access, the CSS, and the start-up that warms the caches.
- the modules at this level: what several topics share, without Streamlit (the page list,
  settings and their URL form, presets, figure builders, Play animation, the criteria
  measurements, the Share address and QR code, the snippets' pieces).

tests/app/test_layout.py holds the folders to that rule.
"""
