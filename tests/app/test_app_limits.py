"""Limits that hold for everyone (AppTest): a Parquet bomb refused on Evaluate, Generate's files counted
together, a large upload kept out of the shared parse cache, and a team server that must not start."""
import pytest
from streamlit.testing.v1 import AppTest

from apptest import APP, no_exception, open_app
from datafiles import parquet_bomb
from teamfiles import config_toml, write_config, write_team

TIMEOUT = 60


def laptop_limit(tmp_path, monkeypatch, mb):
    write_config(tmp_path, config_toml(server={"max_upload_mb": mb}), monkeypatch)


def test_a_parquet_bomb_is_refused_on_the_evaluate_page(history):
    at = open_app(TIMEOUT)
    at.radio(key="eval_source").set_value("Upload a file").run()
    at.file_uploader(key="upload_file").set_value(("bomb.parquet", parquet_bomb(), "application/octet-stream"))
    at.run()
    no_exception(at)
    shown = " ".join(e.value for e in at.error)
    assert "Cannot use this file. bomb.parquet: decodes to more than 200.0 MB" in shown
    assert "dataset" not in at.session_state or at.session_state["dataset"] is None


def test_generate_counts_the_limit_over_all_its_files(history, tmp_path, monkeypatch):
    laptop_limit(tmp_path, monkeypatch, 1)
    at = open_app(TIMEOUT)
    at.switch_page("pages/generate.py").run()
    part = ("# Bikes\n\n" + "A bike needs a bell and lights at night. " * 15_000).encode()  # 0.6 MB each
    at.file_uploader(key="gen_uploads").set_value([("a.md", part, "text/markdown"), ("b.md", part, "text/markdown")])
    at.run()
    no_exception(at)
    shown = " ".join(e.value for e in at.error)
    assert "These 2 files hold 1.2 MB together; this server reads up to 1 MB" in shown
    at.file_uploader(key="gen_uploads").set_value([("a.md", part, "text/markdown")]).run()
    no_exception(at)
    assert not at.error  # one file is within the limit


def test_a_large_upload_is_parsed_for_its_session_not_the_shared_cache(history, monkeypatch):
    from pages import _data

    monkeypatch.setattr(_data, "CACHE_MAX_BYTES", 100)  # the test file is a few hundred bytes
    calls = []
    real = _data.load_dataset
    monkeypatch.setattr(_data, "load_dataset", lambda *a, **k: calls.append(1) or real(*a, **k))
    data = (b"question,answer,contexts\n" + b"".join(b"Q%d?,A%d.,C%d.\n" % (i, i, i) for i in range(20)))
    parses = []
    for _ in range(2):  # the second session uploads the same bytes: no shared cache serves it
        before = len(calls)
        at = open_app(TIMEOUT)
        at.radio(key="eval_source").set_value("Upload a file").run()
        at.file_uploader(key="upload_file").set_value(("big.csv", data, "text/csv")).run()
        no_exception(at)
        assert len(at.session_state["dataset"].samples) == 20
        parses.append(len(calls) - before)
        at.run()  # a rerun reuses the session's own dataset: no new parse
        assert len(calls) - before == parses[-1]
    assert parses[0] >= 1 and parses[1] == parses[0]


@pytest.mark.parametrize("auth, mb, problem, absent", [
    ("proxy", 5, "--server.maxUploadSize 5", ("button", "file_uploader")),  # the upload limit is not the operator's
    ("oidc", 200, "section (redirect_uri", ("button",)),  # no sign-in parts: no "Sign in" button (it would fail)
])
def test_a_team_server_that_is_not_set_up_right_does_not_start(history, tmp_path, monkeypatch, auth, mb, problem,
                                                               absent):
    write_team(tmp_path, monkeypatch, auth=auth, max_upload_mb=mb)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    no_exception(at)
    assert "The dashboard cannot start" in at.error[0].value and problem in at.error[0].value
    assert not any(getattr(at, kind) for kind in absent), absent
