"""similarity page."""
import streamlit as st

st.title("similarity")
