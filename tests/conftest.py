"""Fixtures every test shares.

Each test gets its own HOME, history database and judge cache (the autouse fixture below), so
nothing a test does can touch a real `~/.ragmeter` or a developer's configuration. The helper
modules beside this file (`openai_server`, `fakes`, `datafiles`, `apptest`, ...) are importable by
name from any test folder: pytest puts this folder on sys.path when it loads this file.

The kinds of slow test are marked here, by folder and by fixture, so a new test of a kind is
marked without a decorator (the markers are declared in pyproject.toml, whose `addopts` leaves
them out of plain `pytest`; `.ci/run` runs them all):

- `browser`: every test under tests/browser (real Chromium, real Streamlit);
- `llama`: every test using the `llama_server` fixture (the real model);
- `postgres`: every test using the `postgres_server`/`postgres_url` fixtures, or parametrized
  over a "postgresql" backend (a throw-away PostgreSQL cluster);
- `ray`: every test using the `ray_cluster` fixture (a real local Ray cluster, tests/test_ray_engine.py);
- `slow` (subprocess fault runs, heavy real-server runs) is marked in the test files.

Under pytest-xdist, `.ci/run` runs the tests of one file on one worker, in order (`--dist loadfile`): a
browser, llama or ray file shares a server or cluster started once per file or session, and some of its
tests read state an earlier test of the file left. (Not `xdist_group` with `--dist loadgroup`: pytest-xdist
3.8 pins a group by rewriting `item._nodeid`, which pytest 9.2 no longer reads, so the groups were
silently ignored and a file's tests were spread over the workers, each starting the file's servers.)
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator, Set, Tuple

import pytest

ROOT = Path(__file__).resolve().parent.parent
BROWSER_TESTS = Path(__file__).resolve().parent / "browser"

ISOLATED_VARIABLES = ("RAGMETER_CONFIG", "RAGMETER_USER", "OPENAI_API_KEY", "OPENAI_BASE_URL")


def _kinds(item: pytest.Item) -> Set[str]:
    """The slow kinds an item is by where it lives and what it uses (see the module note)."""
    kinds = set()
    if BROWSER_TESTS in Path(str(item.path)).parents:
        kinds.add("browser")
    fixtures = set(getattr(item, "fixturenames", ()))
    if "llama_server" in fixtures:
        kinds.add("llama")
    if "ray_cluster" in fixtures:
        kinds.add("ray")
    params = getattr(getattr(item, "callspec", None), "params", {})
    if "postgres_server" in fixtures or "postgresql" in params.values():
        kinds.add("postgres")
    return kinds


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(items) -> None:
    for item in items:
        for kind in sorted(_kinds(item)):
            item.add_marker(kind)


def pytest_report_header(config) -> str | None:
    """Say, where a developer looks, that plain `pytest` left the slow kinds out (pyproject's addopts)."""
    if config.option.markexpr and config.option.markexpr in config.getini("addopts"):
        return ("fast loop: browser, llama, postgres, ray and slow tests left out "
                "(`pytest -m browser` runs one kind, `pytest -m ''` or `.ci/run` all)")
    return None


def pytest_sessionstart(session) -> None:
    """Clear the browser tests' failure shots of an earlier run, once per run: in the main process,
    not in a pytest-xdist worker (a late worker would delete a shot another one has just taken)."""
    if not hasattr(session.config, "workerinput"):
        for old in (ROOT / "artifacts").glob("*-FAILED.png"):
            old.unlink(missing_ok=True)


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


@pytest.fixture(autouse=True)
def no_local_worker_left() -> Iterator[None]:
    """The dashboard's local workers a test started (worker processes, evaluator/runs/child.py) stop with
    the test: the next test's history, environment and config get workers of their own."""
    yield
    import sys

    child = sys.modules.get("evaluator.runs.child")
    if child is not None:
        child.stop_all()


@pytest.fixture
def history(tmp_path, monkeypatch) -> Path:
    """The history database of this test, under its tmp_path (the path tests open a RunStore on)."""
    from apptest import isolate
    return isolate(tmp_path, monkeypatch)


def pytest_generate_tests(metafunc) -> None:
    """A module that sets `STORE_BACKENDS = ("sqlite", "postgresql")` runs each test using `store` on each backend."""
    backends = getattr(metafunc.module, "STORE_BACKENDS", None)
    if backends and "store" in metafunc.fixturenames:
        metafunc.parametrize("store", backends, indirect=True)


@pytest.fixture
def store(request, tmp_path):
    """This test's run history: a SQLite file under tmp_path, or a fresh PostgreSQL database where the module's
    STORE_BACKENDS asks for both. A test that also runs the dashboard or CLI on it uses `history` first."""
    from evaluator.store.history import RunStore

    if getattr(request, "param", "sqlite") == "postgresql":
        return RunStore(request.getfixturevalue("postgres_url"))
    return RunStore(tmp_path / "history.sqlite3")


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A loopback port that refuses connections, held for the whole test (tests/ports.py)."""
    from ports import closed_port as hold
    with hold() as port:
        yield port


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


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory) -> Iterator[Tuple[str, Path]]:
    """(base URL, server log) of the real local model (tests/llama_server.py), one per session;
    the log is where llama-cpp-python says how much of a prompt it reused."""
    from llama_server import missing_requirement, running_llama

    reason = missing_requirement()
    if reason:
        if os.environ.get("CI") == "true":
            pytest.fail(f"llama tests cannot run in CI: {reason} (`.ci/run` installs the test extra)")
        pytest.skip(reason)
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with running_llama(log) as url:
        yield url, log


@pytest.fixture
def llama_url(llama_server) -> str:
    return llama_server[0]


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
