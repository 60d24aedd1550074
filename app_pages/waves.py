"""waves page."""
import streamlit as st

st.title("waves")
