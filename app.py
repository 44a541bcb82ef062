"""ragmeter dashboard: `streamlit run app.py` (offline judge and bundled sample data by default).

This entry point sets the page up and runs the navigation (pages/_ui.py: pages, run_app). Each
page is a thin view in pages/ that starts with `ui.page_setup(...)`, which draws the shared
sidebar; pages/_ui.py holds everything the pages share.
"""
import logging
import sys
from pathlib import Path

ROOT = str(Path(__file__).resolve().parent)
if ROOT not in sys.path:  # a fresh clone without `pip install -e .` still finds evaluator/ and pages/
    sys.path.insert(0, ROOT)

from pages import _ui as ui  # noqa: E402

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")

ui.run_app()
