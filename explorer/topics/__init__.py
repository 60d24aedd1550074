"""One module per page, named after its URL path: the page's analysis, figure builders and
"reproduce this" code, without Streamlit; its page file in pages/ lays it out."""
