"""A real local Ray cluster for a test module: `ray_cluster`, shared by the module's tests (Ray starts in
seconds), with the judge key in the environment its workers start with, and no process left behind.

    from raycluster import KEY_ENV, WORKER_KEY, ray_cluster  # noqa: F401  (the fixture, by name)

Tests using the fixture are marked `ray` (tests/conftest.py); plain `pytest` leaves them out.
"""
import os
import time
from pathlib import Path

import pytest

KEY_ENV = "RAGMETER_TEST_JUDGE_KEY"
WORKER_KEY = "sk-test-worker-env"


def _children(pid: int) -> set:
    """Every descendant process id of `pid`, from /proc."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parents.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(entry))
    found, todo = set(), [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def _alive(pids: set) -> set:
    return {p for p in pids if Path(f"/proc/{p}").exists()
            and "Z" not in Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[:1]}


def import_ray():
    """Ray, imported by the fixture, not at collection: importing it takes seconds, and plain `pytest`
    leaves these tests out (tests using `ray_cluster` are marked `ray` in tests/conftest.py)."""
    try:
        import ray
        import ray.data  # noqa: F401
    except ImportError:  # fail in CI, where these tests must run; skip on a developer machine
        if os.environ.get("CI") == "true":
            raise
        pytest.skip("Ray is not installed: pip install -e '.[test]'")
    return ray


@pytest.fixture(scope="module")
def ray_cluster():
    ray = import_ray()
    # The workers' environment is the one the cluster starts with: the key is there, not in the config.
    os.environ[KEY_ENV] = WORKER_KEY
    before = _children(os.getpid())
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    started = _children(os.getpid()) - before
    yield
    ray.shutdown()
    del os.environ[KEY_ENV]
    deadline = time.monotonic() + 20
    while _alive(started) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _alive(started), "Ray left processes behind"
