"""No page logs a Streamlit deprecation warning (e.g. `use_container_width`, replaced by `width=`):
each page is opened with AppTest while the deprecation logger and Python's warnings are recorded."""
import logging
import warnings
from pathlib import Path

import pytest

from apptest import isolate, open_app

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted(p.name for p in (ROOT / "pages").glob("*.py") if not p.name.startswith("_"))
TIMEOUT = 30


class Recorder(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@pytest.fixture
def deprecations():
    """Streamlit's deprecation messages (its logger does not propagate, so a handler sits on it)."""
    logger = logging.getLogger("streamlit.deprecation_util")
    recorder = Recorder()
    logger.addHandler(recorder)
    yield recorder.messages
    logger.removeHandler(recorder)


@pytest.mark.parametrize("page", PAGES)
def test_a_page_logs_no_deprecation_warning(tmp_path, monkeypatch, deprecations, page):
    isolate(tmp_path, monkeypatch)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        at = open_app(TIMEOUT)
        at.switch_page(f"pages/{page}").run(timeout=TIMEOUT)
    ours = [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)
            and (str(ROOT / "pages") in w.filename or str(ROOT / "evaluator") in w.filename
                 or "use_container_width" in str(w.message))]
    assert not deprecations and not ours, deprecations + ours


def test_no_page_passes_use_container_width():
    """The pages a test cannot reach quickly (e.g. Generate's coverage chart) are held to it by reading them."""
    sources = [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py"))]
    offenders = [p.name for p in sources if "use_container_width" in p.read_text(encoding="utf-8")]
    assert not offenders


def test_the_recorder_sees_streamlit_deprecations(deprecations):
    """The net above catches what it is for: a chart drawn with `use_container_width` is logged."""
    from streamlit.testing.v1 import AppTest

    def script() -> None:
        import pandas as pd
        import streamlit as st

        st.dataframe(pd.DataFrame({"a": [1]}), use_container_width=True)

    AppTest.from_function(script).run(timeout=TIMEOUT)
    assert any("use_container_width" in m for m in deprecations)
