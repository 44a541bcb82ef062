"""The one door to the chart renderer: every PNG, SVG and PDF that ragmeter draws passes here.

vl-convert is native code (Rust, with V8 inside) and a crash there is not an exception: a label holding
U+0001 or U+FFFE made it panic and abort the whole process (SIGABRT), the dashboard with every user's session
(issue 49). So, for every render:

- the spec is made drawable first (safetext.drawable_value: no control character, noncharacter or lone
  surrogate reaches the renderer, no bidirectional control reorders a caption), titles, labels, captions,
  data values and the PDF's text alike;
- the renderer runs in a child process (render_child.py) with a memory cap and a time limit, so whatever
  still crashes it, or runs away, costs one file: `RenderError` says why, and the caller lives on. The CLI
  exits 2 with that reason; the dashboard shows it in a red box.

A child starts cold (vl-convert's runtime: about 1.5 s; the first render in a process costs the same), so the
files of one export are rendered by one child (`render_all`). At most RENDERS_AT_ONCE children run at once:
a viewer clicking every chart button cannot start a hundred.
"""
from __future__ import annotations

import importlib.util
import json
import signal
import struct
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from ..errors import RenderError
from ..safetext import drawable_value

RENDER_SECONDS = 60  # wall clock per child (every file of one export): a report's chart takes about 2 s
RENDER_MEMORY_MB = 2048  # RLIMIT_DATA of the child: a chart peaks near 90 MB resident; V8 fails to start at 512
RENDERS_AT_ONCE = 4
FORMATS = ("png", "svg", "pdf", "vega", "vega-pdf")  # vega: a vega-lite spec compiled; vega-pdf: a vega spec drawn
CHILD = Path(__file__).with_name("render_child.py")
_SLOTS = threading.BoundedSemaphore(RENDERS_AT_ONCE)


@dataclass(frozen=True)
class RenderJob:
    """One file to render: its format (FORMATS), its spec (vega-lite; vega for vega-pdf), and a PNG's pixel scale."""

    format: str
    spec: Dict[str, Any]
    scale: float = 2
    what: str = field(default="chart", compare=False)  # said in an error: "chart", "PDF summary"


@dataclass(frozen=True)
class Limits:
    """How long and how much memory one renderer child may take."""

    seconds: int = RENDER_SECONDS
    memory_mb: int = RENDER_MEMORY_MB


def render(job: RenderJob, limits: Limits = Limits()) -> bytes:
    """The file `job` asks for; RenderError when it could not be made."""
    return render_all([job], limits)[0]


def render_all(jobs: Sequence[RenderJob], limits: Limits = Limits(),
               command: Optional[Sequence[str]] = None) -> List[bytes]:
    """Each job's file, drawn by one child process; RenderError when any could not be made (ImportError when
    vl-convert is not installed). `command` replaces the child's program (tests start one that crashes)."""
    if not jobs:
        return []
    if command is None and importlib.util.find_spec("vl_convert") is None:
        raise ImportError("PNG/SVG/PDF export needs vl-convert: pip install vl-convert-python.")
    request = {"jobs": [_payload(j) for j in jobs], "memory_mb": limits.memory_mb, "seconds": limits.seconds}
    what = " and ".join(dict.fromkeys(f"{j.what} ({j.format.upper()})" for j in jobs))
    if not _SLOTS.acquire(timeout=limits.seconds):
        raise RenderError(f"the {what} was not made: {RENDERS_AT_ONCE} others are being drawn right now and none "
                          f"finished within {limits.seconds} s; try again in a minute")
    try:
        done = _run(list(command or [sys.executable, "-P", str(CHILD)]), json.dumps(request), limits, what)
    finally:
        _SLOTS.release()
    return _files(done.stdout, len(jobs), what)


def _payload(job: RenderJob) -> Dict[str, Any]:
    if job.format not in FORMATS:
        raise ValueError(f"a chart is rendered as {', '.join(FORMATS)}, not {job.format}")
    return {"format": job.format, "spec": drawable_value(job.spec), "scale": job.scale}


def _run(command: List[str], request: str, limits: Limits, what: str) -> "subprocess.CompletedProcess[bytes]":
    """The child, run to its end (killed past the time limit), with an empty environment: it needs no
    setting, and keeps no secret of this process's."""
    try:
        done = subprocess.run(command, input=request.encode("utf-8"), capture_output=True,
                              timeout=limits.seconds, env={"RUST_BACKTRACE": "0"}, check=False)
    except subprocess.TimeoutExpired:
        raise RenderError(f"the {what} was not made: drawing it took longer than {limits.seconds} s, "
                          "so it was stopped") from None
    except OSError as exc:
        raise RenderError(f"the {what} was not made: the renderer could not start ({exc})") from None
    if done.returncode != 0:
        raise RenderError(f"the {what} was not made: {_why(done, limits)}")
    return done


def _why(done: "subprocess.CompletedProcess[bytes]", limits: Limits) -> str:
    """What ended the child, in words."""
    said = [line for line in done.stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    own = [line[len("ragmeter-render: "):] for line in said if line.startswith("ragmeter-render: ")]
    if own:
        return f"the renderer refused it ({own[-1]})"
    if done.returncode < 0:
        name = signal.Signals(-done.returncode).name if -done.returncode in signal.valid_signals() else "a signal"
        if -done.returncode in (signal.SIGXCPU, signal.SIGKILL):
            return f"the renderer was stopped ({name}: past its {limits.seconds} s of CPU or its memory)"
        panic = next((line.strip() for line in said if "panicked" not in line and "Failed" in line), "")
        return (f"the renderer crashed ({name}{': ' + panic[:200] if panic else ''}); this page and every other "
                "download still work")
    return f"the renderer ended with exit status {done.returncode} ({(said or ['no message'])[-1][:200]})"


def _files(out: bytes, count: int, what: str) -> List[bytes]:
    """The child's stdout split into its `count` files."""
    files, at = [], 0
    for _ in range(count):
        if at + 8 > len(out):
            raise RenderError(f"the {what} was not made: the renderer's answer was cut short")
        (size,) = struct.unpack(">Q", out[at:at + 8])
        files.append(out[at + 8:at + 8 + size])
        at += 8 + size
    if at != len(out) or any(not f for f in files):
        raise RenderError(f"the {what} was not made: the renderer's answer was not the files asked for")
    return files
