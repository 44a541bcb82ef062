"""ragmeter dashboard: `streamlit run app.py` (offline judge and bundled sample data by default).

This entry point only sets the page up and registers the pages. Each page is a thin view in
pages/ that starts with `ui.page_setup(...)`, which draws the shared sidebar: Streamlit runs a
file under pages/ on its own when it sees that folder before st.navigation has been called (the
first request of a process, and every AppTest run), so the sidebar cannot live here.
"""
import logging
import sys
from pathlib import Path

import streamlit as st

ROOT = str(Path(__file__).resolve().parent)
if ROOT not in sys.path:  # a fresh clone without `pip install -e .` still finds evaluator/ and pages/
    sys.path.insert(0, ROOT)

from pages import _ui as ui  # noqa: E402

st.set_page_config(page_title="ragmeter", page_icon=":material/straighten:", layout="wide")
logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")

PAGES = [
    st.Page(ui.EVALUATE_PAGE, title="Evaluate", icon=":material/science:", default=True),
    st.Page(ui.REPORT_PAGE, title="Report", icon=":material/bar_chart:"),
    st.Page(ui.SPOT_PAGE, title="Spot check", icon=":material/search:"),
    st.Page(ui.HISTORY_PAGE, title="History", icon=":material/history:"),
]

st.navigation(PAGES).run()
