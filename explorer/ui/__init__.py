"""The Streamlit side of the explorer: the only modules of explorer/ that import streamlit."""
