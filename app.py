"""ragmeter dashboard: `streamlit run app.py` (offline judge and bundled sample data by default).

This entry point sets the page up and runs the navigation (pages/_nav.py: PAGES, run_app). Each
page is a thin view in pages/ that starts with `nav.page_setup()`, which draws the shared
sidebar; the modules beside them (pages/_*.py) hold what the pages share.
"""
import logging
import sys
from pathlib import Path

ROOT = str(Path(__file__).resolve().parent)
if ROOT not in sys.path:  # a fresh clone without `pip install -e .` still finds evaluator/ and pages/
    sys.path.insert(0, ROOT)

from pages import _nav as nav  # noqa: E402

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")

nav.run_app()
