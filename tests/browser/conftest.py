"""Fixtures for the real-browser tests: Debian's Chromium driven by Playwright, and the real
dashboard started with `streamlit run` on 127.0.0.1.

Nothing is downloaded: Chromium is /usr/bin/chromium (`.ci/run` installs it with apt). When
Chromium or Playwright is missing the tests skip locally, but fail under CI=true, where they must run.
"""
from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Iterator, Optional

import pytest

from teamfiles import serve_dashboard

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts"
CHROMIUM = os.environ.get("RAGMETER_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
VIEWPORT = {"width": 1400, "height": 1000}


def _missing(reason: str) -> None:
    """Skip on a developer machine; fail in CI, where the browser tests must run."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI=true: browser tests must run; `.ci/run` installs what they need)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def playwright_api():
    """The started Playwright driver (sync API)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("playwright is not installed: pip install -e '.[test]'")
    if not os.access(CHROMIUM, os.X_OK):
        _missing(f"Chromium not found at {CHROMIUM}: apt-get install chromium")
    with sync_playwright() as api:
        yield api


@pytest.fixture(scope="session")
def browser(playwright_api):
    """One headless Chromium for the whole session."""
    browser = playwright_api.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
    yield browser
    browser.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Remember each phase's outcome on the test item, so fixtures can see whether the test failed."""
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"rep_{report.when}", report)


@pytest.fixture
def page(browser, artifacts_dir, request):
    """A fresh page (own context, so no cookies or storage leak between tests) that accepts downloads.

    When the test fails, the page as it was is saved to artifacts/<test name>-FAILED.png.
    """
    context = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
    context.set_default_timeout(15_000)
    page = context.new_page()
    yield page
    failed = getattr(request.node, "rep_call", None)
    if failed is not None and failed.failed:
        page.screenshot(path=str(artifacts_dir / f"{_safe(request.node.name)}-FAILED.png"))
    context.close()


@pytest.fixture(scope="session")
def artifacts_dir() -> Path:
    """Where test-time screenshots go (gitignored). Failure shots of an earlier run are cleared once,
    when the run starts (tests/conftest.py), not here: under pytest-xdist each worker has its own
    session, and one starting late would delete a shot another worker has just taken."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


@pytest.fixture
def shot(page, artifacts_dir, request):
    """`shot("step")` saves a full-page screenshot to artifacts/<test name>-<step>.png."""
    test_name = _safe(request.node.name)

    def take(step: str) -> Path:
        path = artifacts_dir / f"{test_name}-{step}.png"
        # Not full_page: Streamlit scrolls inside its own container, so the page is one viewport
        # high anyway, and the resize a full-page shot does leaves Streamlit's popovers unable to open.
        page.screenshot(path=str(path))
        return path

    return take


@pytest.fixture
def signed_in_page(browser, artifacts_dir, request):
    """`signed_in_page(url, name)`: a new page in a browser context of its own, signed in as `name` at the
    sign-in proxy `url` (tests/signin_proxy.py; None: nobody). The contexts close after the test; when it
    failed, each one's page is saved to artifacts/<test name>-<i>-FAILED.png."""
    from signin_proxy import SignInProxy

    contexts = []

    def open_page(url: str, name: Optional[str]):
        context = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
        if name:
            context.add_cookies([SignInProxy.cookie(name, url)])
        context.set_default_timeout(60_000)
        contexts.append(context)
        return context.new_page()

    yield open_page
    failed = getattr(request.node, "rep_call", None)
    for i, context in enumerate(contexts):
        if failed is not None and failed.failed and context.pages:
            context.pages[0].screenshot(path=str(artifacts_dir / f"{_safe(request.node.name)}-{i}-FAILED.png"))
        context.close()


def _safe(name: str) -> str:
    return re.sub(r"[^\w.-]+", "_", name)


@pytest.fixture(scope="session")
def history_path() -> Iterator[Path]:
    """The dashboard's run-history database for this session (never the user's own).

    A short /tmp/ragmeter-* path rather than pytest's: the sidebar shows it, README screenshot included.
    """
    folder = Path(tempfile.mkdtemp(prefix="ragmeter-"))
    yield folder / "history.sqlite3"
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def app_url(playwright_api, history_path, tmp_path_factory) -> Iterator[str]:
    """The real dashboard, `streamlit run app.py` on a free loopback port, for the whole session."""
    log_path = tmp_path_factory.mktemp("streamlit") / "server.log"
    # Deprecation warnings printed (Python hides them by default): test_console_clean reads the log for them.
    env = {**os.environ, "RAGMETER_HISTORY": str(history_path), "PYTHONWARNINGS": "default::DeprecationWarning"}
    env.pop("OPENAI_API_KEY", None)  # the offline default must not depend on a key
    with serve_dashboard(env, log_path) as url:
        SERVER_LOGS[url] = log_path
        yield url


SERVER_LOGS: dict = {}  # app_url -> the server's log file (what a test reads for warnings)
