"""binary page."""
import streamlit as st

st.title("binary")
