"""wait_for: poll a condition until it holds, for the tests that watch a run, a worker or a server from outside."""
from __future__ import annotations

import time
from typing import Callable, TypeVar

T = TypeVar("T")


def wait_for(check: Callable[[], T], timeout: float = 60.0, every: float = 0.05) -> T:
    """The first truthy value `check()` returns; AssertionError naming the check after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {check.__doc__ or check}")
        time.sleep(every)


def never_within(check: Callable[[], object], seconds: float, every: float = 0.05) -> bool:
    """Whether `check()` stays falsy for `seconds` (a thing that must not happen, watched for a while)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return False
        time.sleep(every)
    return not check()
