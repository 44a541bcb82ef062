"""User text is never Markdown, in real Chromium: a run named `![x](http://127.0.0.1:PORT/x.png)`, an
upload named like it, a rubric's criteria, a question, a model name and a judge reply that carry it.
A listener on PORT must hear nothing from the browser while Evaluate, Report (drill-down included)
and History show them; each is shown as the text typed."""
from __future__ import annotations

import http.server
import re
import threading

import pytest

from .test_dashboard import RUN_TIMEOUT, go_to, main, open_app, text_block, wait_idle

try:  # after test_dashboard, which skips (or, under CI=true, fails) this module without Playwright
    from playwright.sync_api import Page, expect
except ImportError:
    pass

from hostile_run import payload, save_hostile_run
from pages._errors import unlinked

pytestmark = pytest.mark.browser


class _Recorder(http.server.BaseHTTPRequestHandler):
    heard: list = []

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self.heard.append(self.path)
        self.send_response(404)
        self.send_header("Access-Control-Allow-Origin", "*")
        self.end_headers()

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def listener():
    """An HTTP server on a free loopback port that records every path asked of it."""
    handler = type("Recorder", (_Recorder,), {"heard": []})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


def no_image_from(page: Page, port: int) -> None:
    assert page.locator(f'img[src*="127.0.0.1:{port}"]').count() == 0
    assert page.locator(f'a[href*="127.0.0.1:{port}"]').count() == 0


def test_markdown_images_in_user_text_are_shown_as_text_and_never_fetched(page: Page, app_url, history_path,
                                                                         listener, shot):
    port = listener.server_address[1]
    text = payload(f"http://127.0.0.1:{port}/x.png")
    name = f"{text}.csv"
    open_app(page, app_url)

    # Evaluate: the upload's name and question, then a rubric whose criteria carry the image.
    page.locator('[data-testid="stRadioOption"]').filter(has_text="Upload a file").click()
    uploader = page.locator('[data-testid="stFileUploader"]').filter(has_not_text="Import rubrics")
    uploader.locator('input[type="file"]').set_input_files(files=[{
        "name": name, "mimeType": "text/csv",
        "buffer": f'question,answer,contexts\n"Where is it? {text}",Here.,It is here.\n'.encode()}])
    caption = main(page).get_by_text(re.compile(r" · CSV · 1 rows"))
    expect(caption).to_be_visible(timeout=RUN_TIMEOUT)
    shown_name = caption.inner_text().split(" · CSV")[0]
    assert "![x](" in shown_name and "x.png)" in shown_name, shown_name  # as typed (the browser may alter '/')
    wait_idle(page)
    main(page).get_by_text(re.compile(r"^Rubric metrics \(0\)$")).click()
    form = page.locator('[data-testid="stForm"]')
    form.get_by_label("Name", exact=True).fill("tone")
    form.get_by_label("Criteria", exact=True).fill(f"Polite {text}")
    form.get_by_role("button", name="Add rubric").click()
    wait_idle(page)
    main(page).get_by_text(re.compile(r"^Rubric metrics \(1\)$")).click()  # closed again by the rerun
    shown = unlinked(text)  # what a reader sees: the typed text (with invisible word joiners in its URL)
    expect(main(page).get_by_text(f"Polite {shown}", exact=False)).to_be_visible()
    page.get_by_role("button", name="Run evaluation").click()
    expect(main(page).get_by_text(re.compile(r"^Done: 1 samples? of "))).to_be_visible(timeout=RUN_TIMEOUT)
    no_image_from(page, port)
    shot("1-evaluate")

    # Report: the header names the upload; the drill-down shows the question.
    page.get_by_role("button", name="Open report").click()
    expect(page.get_by_role("heading", name=re.compile("Report"))).to_be_visible(timeout=RUN_TIMEOUT)
    wait_idle(page)
    expect(text_block(page, f"Where is it? {text}")).to_be_visible(timeout=RUN_TIMEOUT)
    no_image_from(page, port)
    shot("2-report")

    # History: two hostile runs (named, from a file named, judged by a model named like the image).
    save_hostile_run(history_path, f"http://127.0.0.1:{port}/x.png")
    save_hostile_run(history_path, f"http://127.0.0.1:{port}/x.png")
    go_to(page, "History")
    expect(page.get_by_role("combobox", name="Run")).to_have_value(re.compile(rf"^{re.escape(text)} · "))
    page.get_by_role("button", name="Delete run").click()
    expect(main(page).get_by_text(f"Delete {shown} and its 3 saved results?", exact=False)).to_be_visible()
    page.get_by_role("button", name="Cancel").click()
    wait_idle(page)
    page.get_by_role("button", name="Compare runs").click()
    both = re.escape(f"B = {shown}") + ".*" + re.escape(f"against A = {shown}")  # each name, then its scorer
    expect(main(page).get_by_text(re.compile(both))).to_be_visible()
    no_image_from(page, port)
    shot("3-history")

    # The hostile run in the Report: advice quoting the rubric, its drill-down with the judge's reply.
    page.get_by_role("button", name="Open in report").click()
    expect(page.get_by_role("heading", name=re.compile("Report"))).to_be_visible(timeout=RUN_TIMEOUT)
    wait_idle(page)
    expect(main(page).get_by_text(f"Answers fall short of the rubric: Polite {shown}", exact=False)).to_be_visible()
    expect(text_block(page, f"Question 0 {text}")).to_be_visible(timeout=RUN_TIMEOUT)
    no_image_from(page, port)
    shot("4-hostile-report")

    page.wait_for_timeout(500)  # a late image load would have arrived by now
    assert listener.RequestHandlerClass.heard == []
    # The listener does hear this browser: a fetch the test makes itself arrives.
    page.evaluate(f"fetch('http://127.0.0.1:{port}/probe').catch(() => null)")
    page.wait_for_timeout(500)
    assert listener.RequestHandlerClass.heard == ["/probe"]
