"""The Streamlit side of the explorer: settings and their URL form, sidebar controls,
cached computations and Plotly figure builders. pe_core holds the maths."""
