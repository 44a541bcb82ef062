"""The chart renderer's child process: reads render jobs as JSON on stdin, writes each file to stdout.

Run by analysis/render.py as `python -P this_file` (not as a module of the package: the child imports nothing
of ragmeter, only the standard library and vl-convert, so it starts in milliseconds and a crafted spec meets
no more code than the renderer's). Its memory is capped here, before vl-convert loads: RLIMIT_DATA, not
RLIMIT_AS, because V8 (inside vl-convert) reserves about 100 GB of address space when it starts and dies under
any smaller RLIMIT_AS; RLIMIT_DATA counts what it writes (about 90 MB for a report's chart). CPU time is
capped too; the parent also keeps a wall-clock limit and kills the child past it.

Output: for each job, its length as 8 bytes (big-endian) then its bytes. A Python error (vl-convert's own
ValueError on a bad spec) exits 3 with one line "ragmeter-render: <why>" on stderr; a native crash ends the
child by a signal, which the parent reports.
"""
import json
import struct
import sys

FAILED = 3
MB = 1 << 20


def _cap(memory_mb: int, seconds: int) -> None:
    """The child's own limits; where the system has none to set (Windows has no `resource`, a platform may
    refuse RLIMIT_DATA) the parent's wall clock still holds."""
    try:
        import resource
    except ImportError:
        return
    for limit, value in ((getattr(resource, "RLIMIT_DATA", None), memory_mb * MB),
                         (getattr(resource, "RLIMIT_CPU", None), seconds)):
        if limit is not None:
            try:
                resource.setrlimit(limit, (value, value))
            except (ValueError, OSError):
                pass


def _render(vlc, job: dict) -> bytes:
    fmt, spec = job["format"], job["spec"]
    if fmt == "png":
        return vlc.vegalite_to_png(spec, scale=job.get("scale", 2))
    if fmt == "svg":
        return vlc.vegalite_to_svg(spec).encode("utf-8")
    if fmt == "pdf":
        return vlc.vegalite_to_pdf(spec)
    if fmt == "vega":  # compiled only, so a caller can fix the page's size before it is drawn
        return json.dumps(vlc.vegalite_to_vega(spec)).encode("utf-8")
    if fmt == "vega-pdf":
        return vlc.vega_to_pdf(spec)
    raise ValueError(f"no renderer for .{fmt}")


def main() -> int:
    request = json.loads(sys.stdin.buffer.read().decode("utf-8"))
    _cap(int(request["memory_mb"]), int(request["seconds"]))
    try:
        import vl_convert as vlc

        files = [_render(vlc, job) for job in request["jobs"]]
    except (ImportError, ValueError, MemoryError) as exc:
        sys.stderr.write(f"ragmeter-render: {type(exc).__name__}: {exc}"[:500].replace("\n", " ") + "\n")
        return FAILED
    for data in files:
        sys.stdout.buffer.write(struct.pack(">Q", len(data)) + data)
    sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
