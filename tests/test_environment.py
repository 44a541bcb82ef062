"""evaluator/environment.py: the one reader of the process environment, and the one "the key is not set on
this worker" check that a Ray partition, a queued run and a generation all make (issue 45)."""
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from evaluator import environment
from evaluator.engines.partition import _need_key
from evaluator.errors import JudgeConfigError
from evaluator.io.datasets import load_dataset
from evaluator.runs.generation import _judge as generation_judge
from evaluator.runs.jobs import Handoff, build_run, submit_new
from evaluator.scoring.run_config import RunConfig
from evaluator.store.history import RunStore

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data" / "sample.jsonl"
VARIABLE = "RAGMETER_TEST_WORKER_KEY_7f3"
MOST_FILES_READING_THE_ENVIRONMENT = 10  # issue 45: 20 before the resolver, 1 after (environment.py)


def judged(**settings) -> RunConfig:
    return RunConfig(judge="openai", model="gpt-4o-mini", api_key_env=VARIABLE, **settings)


@pytest.mark.parametrize("value", [None, "", "   "])
def test_a_key_unset_or_blank_is_refused_naming_the_variable_and_the_fix(monkeypatch, value):
    monkeypatch.delenv(VARIABLE, raising=False)
    if value is not None:
        monkeypatch.setenv(VARIABLE, value)
    with pytest.raises(JudgeConfigError, match=rf"the judge reads its API key from the environment variable "
                                               rf"{VARIABLE}, which is not set on this worker \(.+\); set {VARIABLE} "
                                               "in the worker's environment"):
        environment.require_key(VARIABLE, "the judge", "in the worker's environment")


def test_a_set_key_or_no_variable_passes(monkeypatch):
    monkeypatch.setenv(VARIABLE, "sk-anything")
    environment.require_key(VARIABLE, "the judge", "anywhere")
    environment.require_key("", "the judge", "anywhere")  # a judge that reads no key


def test_a_ray_partition_refuses_the_same_way(monkeypatch):
    monkeypatch.delenv(VARIABLE, raising=False)
    with pytest.raises(JudgeConfigError, match=f"{VARIABLE}, which is not set on this worker .*Ray nodes"):
        _need_key(judged())
    _need_key(RunConfig(judge="offline", api_key_env=VARIABLE))  # the offline judge reads no key


def test_a_generation_refuses_the_same_way(monkeypatch):
    monkeypatch.delenv(VARIABLE, raising=False)
    info = SimpleNamespace(settings={"judge": judged().settings()})
    with pytest.raises(JudgeConfigError, match=f"this generation's model .*{VARIABLE}, which is not set on this "
                                               "worker .*resume the generation"):
        generation_judge(info, Handoff())


def test_a_queued_run_refuses_the_same_way(monkeypatch, tmp_path):
    monkeypatch.delenv(VARIABLE, raising=False)
    store = RunStore(tmp_path / "history.sqlite3")
    run_id = submit_new(store, judged(), load_dataset(str(SAMPLE)), dataset_name="sample.jsonl")
    with pytest.raises(JudgeConfigError, match=f"this run's judge .*{VARIABLE}, which is not set on this worker "
                                               ".*resume the run"):
        build_run(store, run_id)


def test_the_message_is_written_once():
    found = [p.name for p in (ROOT / "evaluator").rglob("*.py") if "not set on this worker" in p.read_text("utf-8")]
    assert found == ["environment.py"]  # source files only: a compiled copy in __pycache__ is not a second one


def test_few_library_files_read_the_environment():
    pattern = re.compile(r"os\.environ|getenv")
    found = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "evaluator").rglob("*.py")
                   if pattern.search(p.read_text(encoding="utf-8")))
    assert len(found) <= MOST_FILES_READING_THE_ENVIRONMENT, found
    assert "evaluator/environment.py" in found


def test_a_secret_is_read_as_set_and_none_when_unset(monkeypatch):
    monkeypatch.setenv(VARIABLE, " sk-with-spaces ")
    assert environment.secret(VARIABLE) == " sk-with-spaces "  # a header value is sent exactly as set
    assert environment.read(VARIABLE) == "sk-with-spaces"
    monkeypatch.delenv(VARIABLE)
    assert environment.secret(VARIABLE) is None and environment.secret("") is None
    assert environment.for_child(EXTRA="1")["EXTRA"] == "1"
