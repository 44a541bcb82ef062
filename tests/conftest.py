"""Fixtures every test shares.

Each test gets its own HOME, history database and judge cache (the autouse fixture below), so
nothing a test does can touch a real `~/.ragmeter` or a developer's configuration. The helper
modules beside this file (`openai_server`, `fakes`, `datafiles`, `apptest`, ...) are importable by
name from any test folder: pytest puts this folder on sys.path when it loads this file.
"""
from __future__ import annotations

from pathlib import Path

import pytest

ISOLATED_VARIABLES = ("RAGMETER_CONFIG", "RAGMETER_USER", "OPENAI_API_KEY", "OPENAI_BASE_URL")


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory, monkeypatch) -> Path:
    """A fresh HOME with its own RAGMETER_HISTORY and RAGMETER_JUDGE_CACHE for every test."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("RAGMETER_HISTORY", str(home / ".ragmeter" / "history.sqlite3"))
    monkeypatch.setenv("RAGMETER_JUDGE_CACHE", str(home / ".ragmeter" / "judge-cache.sqlite3"))
    for name in ISOLATED_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture
def history(tmp_path, monkeypatch) -> Path:
    """The history database of this test, under its tmp_path (the path tests open a RunStore on)."""
    from apptest import isolate
    return isolate(tmp_path, monkeypatch)


@pytest.fixture(scope="session")
def postgres_server():
    """One throw-away PostgreSQL server for the whole session (tests/pgserver.py); its URL."""
    import os

    from pgserver import PostgresUnavailable, running_postgres
    try:
        with running_postgres() as url:
            yield url
    except PostgresUnavailable as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{exc} (CI=true: PostgreSQL tests must run; `.ci/run` installs it)")
        pytest.skip(str(exc))


@pytest.fixture
def postgres_url(postgres_server, request) -> str:
    """A fresh, empty database on the session's PostgreSQL server, named after the test."""
    import re

    from pgserver import fresh_database
    name = "t_" + re.sub(r"[^a-z0-9]+", "_", request.node.name.lower())[:50]
    return fresh_database(postgres_server, name)


@pytest.fixture
def judge_clock(monkeypatch):
    """The `openai` judge that the CLI and the dashboard build, with its backoff and Retry-After
    waits on a fake clock (recorded in `.slept`, never slept): entered through the judge registry,
    so the run path is the real one and only time is fake."""
    from dataclasses import replace

    from fakes import FakeClock

    from evaluator.judges import registry
    from evaluator.judges.openai import OpenAIJudge

    clock = FakeClock()

    def factory(config, key):
        return OpenAIJudge(config.model, base_url=config.base_url or None, api_key=key or None,
                           api_key_env=config.api_key_env or None, cache=config.cache or None, max_concurrency=config.workers,
                           temperature=float(config.temperature or 0.0), sleep=clock.sleep, clock=clock)

    monkeypatch.setitem(registry.JUDGE_REGISTRY, "openai", replace(registry.get_judge("openai"), factory=factory))
    return clock
