"""relative page."""
import streamlit as st

st.title("relative")
