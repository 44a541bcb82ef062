"""Team mode's identity, authorisation and upload guard in real Chromium against the real
`streamlit run app.py` (issue 27 §2–4). Two servers, each with its own team.toml and SQLite history:

- "local": listens on 127.0.0.1 with no trusted_proxies, so every connection comes from its own
  machine, where the sign-in proxy runs;
- "remote": trusted_proxies = 10.9.9.0/24, so a header sent from 127.0.0.1 (not the proxy) is forged.

Each user's browser goes through its own tests/signin_proxy.py (fixed header values), which sets the identity header on
every request, the websocket handshake included (Chromium sends no extra headers there).
Checked: a forged header signs nobody in; a header sent twice signs nobody in; "ALICE@Example.COM" is
alice's admin account; a UTF-8 name arrives intact; a Cyrillic look-alike of her address is refused
with a reason; a viewer sees no save on Review and no sample run
on the Report; an evaluator sees no Resume or Re-score on another's run but does on their own, and the history
named by a label, not its path; an
upload PUT from a session nobody signed into is refused (400) while an evaluator's is accepted.
"""
from __future__ import annotations

import re
from typing import Any, Dict, Iterator

import pytest

try:
    from playwright.sync_api import Page, expect
except ImportError:  # the conftest's fixtures skip or fail
    pass

from evaluator.model import EvalResult, EvalSample
from evaluator.store.history import RunStore

from teamfiles import signin_proxy, team_dashboard, write_team

from .test_dashboard import RUN_TIMEOUT, choose, main, wait_idle

pytestmark = pytest.mark.browser

ADMIN, EVALUATOR, OTHER, VIEWER = "alice@example.com", "eve@example.com", "ed@example.com", "vera@example.com"
SIGN_IN = "Sign in through your organisation's single sign-on"


def _server(tmp_path_factory: Any, name: str, **server: Any) -> Iterator[Dict[str, Any]]:
    folder = tmp_path_factory.mktemp(name)
    history = folder / "history.sqlite3"
    config = write_team(folder, history=history, max_upload_mb=5, evaluators=[EVALUATOR, OTHER, ADMIN],
                        admins=[ADMIN], **server)
    with team_dashboard(config, folder / "server.log", signin=False) as team:
        yield {"url": team.url, "history": str(history)}


@pytest.fixture(scope="module")
def local(browser, tmp_path_factory) -> Iterator[Dict[str, Any]]:
    expect.set_options(timeout=60_000)
    yield from _server(tmp_path_factory, "local")


@pytest.fixture(scope="module")
def remote(browser, tmp_path_factory) -> Iterator[Dict[str, Any]]:
    yield from _server(tmp_path_factory, "remote", trusted_proxies=["10.9.9.0/24"])


class Visitor:
    """A browser tab and the address it opens the app at: through its own sign-in proxy, or direct."""

    def __init__(self, page: Page, url: str) -> None:
        self.page, self.url = page, url


@pytest.fixture
def as_user(signed_in_page):
    """`as_user(server, *names)`: a tab behind a proxy that sends the header once per name (none: the
    server itself, no header)."""
    proxies = []

    def open_visitor(server: Dict[str, Any], *names: str) -> Visitor:
        url = server["url"]
        if names:
            proxies.append(signin_proxy(url, names))
            url = proxies[-1].url
        return Visitor(signed_in_page(url, None), url)

    yield open_visitor
    for proxy in proxies:
        proxy.close()


def seed_run(history: str, owner: str, *, stopped: bool = False) -> str:
    """A three-row run owned by `owner`, finished (or stopped after one row), written as a CI job would."""
    from evaluator import OfflineJudge, RAGEvaluator

    store = RunStore(history)
    samples = [EvalSample(f"Which desk handles case {i}?", f"Desk {i}.", [f"Case {i} goes to desk {i}."],
                          sample_id=f"s{i}") for i in range(3)]
    run_id = store.create_run(dataset_name=f"{owner}-desks.csv", samples=samples, settings={"judge": "offline"},
                              owner=owner)
    results: list[EvalResult] = RAGEvaluator(OfflineJudge()).evaluate_dataset(samples).results
    store.record_results(run_id, list(enumerate(results[:1] if stopped else results)))
    store.finish_run(run_id, status="stopped" if stopped else "finished")
    return run_id


def open_page(v: Visitor, path: str, expected: Any) -> None:
    v.page.goto(v.url + path)
    expect(expected).to_be_visible(timeout=RUN_TIMEOUT)
    wait_idle(v.page)


def signed_in(v: Visitor, text: str):
    return v.page.get_by_test_id("stSidebar").get_by_text(f"Signed in as {text}")


def button(v: Visitor, label: str):
    return v.page.get_by_role("button", name=re.compile(rf"(^|\s){re.escape(label)}$"))


def pick_run(v: Visitor, run_id: str) -> None:
    choose(v.page, v.page.get_by_role("combobox", name="Run", exact=True),
           v.page.get_by_role("option", name=re.compile(re.escape(run_id))))


# --- identity --------------------------------------------------------------------------------------
def test_a_header_from_a_peer_that_is_not_a_trusted_proxy_signs_nobody_in(remote, local, as_user):
    forged = as_user(remote, ADMIN)  # sent from 127.0.0.1, which is not in trusted_proxies
    open_page(forged, "/history", forged.page.get_by_text(SIGN_IN))
    expect(main(forged.page).locator("input, textarea, button")).to_have_count(0)
    assert ADMIN not in forged.page.inner_text("body")
    trusted = as_user(local, ADMIN)  # the same header where the proxy is trusted: signed in
    open_page(trusted, "/history", signed_in(trusted, f"{ADMIN} (admin)"))


def test_a_header_sent_twice_signs_nobody_in(local, as_user):
    appended = as_user(local, "mallory@example.com", ADMIN)  # a proxy that appends to the client's copy
    open_page(appended, "/history", appended.page.get_by_text(SIGN_IN))
    expect(appended.page.get_by_text(re.compile("sent the user header more than once"))).to_be_visible()
    expect(appended.page.get_by_text(re.compile("Signed in as"))).to_have_count(0)


def test_one_person_whatever_the_case_and_a_look_alike_is_refused(local, as_user):
    shouting = as_user(local, "ALICE@Example.COM")
    open_page(shouting, "/history", signed_in(shouting, f"{ADMIN} (admin)"))
    accented = as_user(local, "José@Example.com")  # raw UTF-8 bytes on the wire, read as Latin-1 by the server
    open_page(accented, "/history", signed_in(accented, "josé@example.com (viewer)"))
    fake = as_user(local, "\u0430lice@example.com")  # a Cyrillic "а" in front of "lice@example.com"
    open_page(fake, "/history", fake.page.get_by_text(SIGN_IN))
    expect(fake.page.get_by_text(re.compile("mixes letters of several scripts"))).to_be_visible()
    expect(fake.page.get_by_text(re.compile("Signed in as"))).to_have_count(0)


# --- one authorisation check at every write --------------------------------------------------------
def test_a_viewer_sees_no_review_save_and_no_sample_run(local, as_user):
    seed_run(local["history"], OTHER)
    viewer = as_user(local, VIEWER)
    open_page(viewer, "/review", signed_in(viewer, f"{VIEWER} (viewer)"))
    expect(main(viewer.page).get_by_text("Your role lets you read reviews, not save them")).to_be_visible()
    for absent in ("Save and next", "Agree with all and next"):
        expect(button(viewer, absent)).to_have_count(0)
    # The Report opens the newest finished run (or says there is none): either way no sample run for a viewer.
    open_page(viewer, "/report", main(viewer.page).get_by_text(re.compile(r"No report yet| · project ")).first)
    expect(button(viewer, "Run the sample data offline")).to_have_count(0)


def test_resume_and_rescore_belong_to_the_runs_owner_and_admins(local, as_user):
    others = seed_run(local["history"], OTHER, stopped=True)
    mine = seed_run(local["history"], EVALUATOR, stopped=True)
    eve = as_user(local, EVALUATOR)
    open_page(eve, "/history", signed_in(eve, f"{EVALUATOR} (evaluator)"))
    expect(main(eve.page).get_by_text("this team's shared run history")).to_be_visible()  # a label, not its path
    assert local["history"] not in eve.page.inner_text("body")
    pick_run(eve, others)
    expect(button(eve, "Open in report")).to_be_visible()
    expect(button(eve, "Resume run")).to_have_count(0)
    expect(eve.page.get_by_text("Re-score with another judge")).to_have_count(0)
    pick_run(eve, mine)
    expect(button(eve, "Resume run")).to_be_visible()
    expect(eve.page.get_by_text("Re-score with another judge")).to_be_visible()
    admin = as_user(local, ADMIN)
    open_page(admin, "/history", signed_in(admin, f"{ADMIN} (admin)"))
    pick_run(admin, others)
    expect(button(admin, "Resume run")).to_be_visible()


# --- uploads need a signed-in evaluator ------------------------------------------------------------
UPLOAD_JS = """async (session) => {
  const cookie = document.cookie.split('; ').find(c => c.startsWith('_streamlit_xsrf='));
  const xsrf = cookie ? decodeURIComponent(cookie.split('=').slice(1).join('=')) : '';
  const form = new FormData();
  form.append('file', new Blob(['question,answer\\nq?,a.\\n'], {type: 'text/csv'}), 'probe.csv');
  const r = await fetch('/_stcore/upload_file/' + session + '/probe-file',
                        {method: 'PUT', body: form, headers: {'X-Xsrftoken': xsrf}, credentials: 'same-origin'});
  return r.status;
}"""
SESSION_ID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def upload_statuses(v: Visitor, expected: Any) -> set:
    """Open the app, then PUT a file to the upload route the way Streamlit's own uploader does (its
    XSRF token included), once for every id in the server's first websocket messages: the tab's
    session id is among them (next to run and page ids, which no upload can use)."""
    seen: list = []
    v.page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: seen.append(payload)))
    open_page(v, "/", expected)
    frames = [f if isinstance(f, bytes) else f.encode() for f in seen[:3]]
    ids = {m.group(0).decode() for frame in frames for m in SESSION_ID.finditer(frame)}
    assert ids, "the server's new-session message names the session"
    return {int(v.page.evaluate(UPLOAD_JS, session)) for session in sorted(ids)}


def test_an_upload_from_a_session_nobody_signed_into_is_refused(local, as_user):
    stranger = as_user(local)
    assert upload_statuses(stranger, stranger.page.get_by_text(SIGN_IN)) == {400}
    viewer = as_user(local, VIEWER)
    assert upload_statuses(viewer, signed_in(viewer, f"{VIEWER} (viewer)")) == {400}
    evaluator = as_user(local, EVALUATOR)  # the same request from an evaluator's session is stored
    assert upload_statuses(evaluator, button(evaluator, "Run evaluation")) & {200, 204}
