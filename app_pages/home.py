"""Home: what positional encoding is for, the formula, and the map of the pages."""

import streamlit as st

st.title("Positional Encoding Explorer")
st.latex(r"PE(k, 2i) = \sin\!\left(\frac{k}{n^{2i/d}}\right),\qquad PE(k, 2i+1) = \cos\!\left(\frac{k}{n^{2i/d}}\right)")
