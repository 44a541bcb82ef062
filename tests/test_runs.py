"""runs: RunConfig and Run (the one run path), background runs against a real RunStore, with the offline judge and scripted judges."""
from dataclasses import replace
import time

import pytest

from evaluator import EvalSample, OfflineJudge, RAGEvaluator
from evaluator.errors import JudgeError
from evaluator.store.history import RunStore
from evaluator.model import METHOD_FALLBACK, METRICS
from evaluator.io.versions import version_settings
from evaluator.runs.run import Run, RunConfig
from tests.fakes import ScriptedJudge
from waiting import wait_for

WAIT = 30  # seconds: the CPU is shared with other jobs
SLOW_REPLY = '{"score": 0.8, "reasoning": "slow but sure"}'


def samples(n=6):
    """n samples with a reference, so every judged metric makes one judge call (5 per sample)."""
    return [EvalSample(f"How fast do parcels reach zone {i}?", f"Parcels reach zone {i} in {i + 2} days.",
                       [f"Zone {i} parcels arrive within {i + 2} working days."], f"{i + 2} working days.",
                       sample_id=f"z{i}") for i in range(n)]


def slow_judge(delay=0.01):
    def reply(prompt):
        time.sleep(delay)
        return SLOW_REPLY
    return ScriptedJudge(reply)


def run_to_end(judge, data, store, **kwargs):
    run = Run(RAGEvaluator(judge), list(enumerate(data)), dataset_name="zones.jsonl", store=store,
                        **kwargs).start()
    assert run.join(WAIT), "the run did not end in time"
    return run


def test_finished_offline_run_is_saved_row_by_row(store):
    data = samples()
    run = run_to_end(OfflineJudge(), data, store, settings={"judge": "offline"})
    assert (run.status, run.error, run.warning) == ("finished", None, None)
    assert (run.done, run.total, run.eta()) == (6, 6, 0.0)
    info = store.get_run(run.run_id)
    # The settings given, and which version of the test set the run scored (io/versions.py).
    assert (info.status, info.n_done, info.n_samples, info.settings) == (
        "finished", 6, 6, {"judge": "offline", **version_settings(data)})
    assert info.total_time == pytest.approx(run.report.total_time)
    saved = store.load_report(run.run_id)
    assert [r.score_values() for r in saved.results] == [r.score_values() for r in run.report.results]
    library = RAGEvaluator(OfflineJudge()).evaluate_dataset(data)
    for name, mean in run.means().items():
        assert mean == pytest.approx(library.mean_scores()[name]), name


def test_stop_keeps_finished_rows_and_marks_the_run_stopped(store):
    run = Run(RAGEvaluator(slow_judge()), list(enumerate(samples(40))), dataset_name="slow.jsonl",
                        store=store).start()
    wait_for(lambda: run.done >= 3)
    assert run.running and run.eta() > 0
    assert all(0.0 <= v <= 1.0 for v in run.means().values()) and set(METRICS) <= set(run.means())
    run.stop()
    assert run.stopping and run.join(WAIT)
    kept = len(run.report.results)
    assert run.status == "stopped" and 3 <= kept < 40 and run.done == kept
    info = store.get_run(run.run_id)
    assert (info.status, info.n_done) == ("stopped", kept)
    assert [i for i, _ in store.pending_samples(run.run_id)] == list(range(kept, 40))


def test_a_judge_failing_every_call_still_finishes_on_heuristics(store):
    judge = ScriptedJudge(JudgeError("the judge is down"))
    run = run_to_end(judge, samples(3), store)
    assert (run.status, run.error) == ("finished", None)
    assert judge.calls == 3 * len(METRICS)
    methods = {ms.method for r in run.report.results for name, ms in r.metric_scores().items() if name in METRICS}
    assert methods == {METHOD_FALLBACK}
    assert store.get_run(run.run_id).status == "finished"


class Abort(BaseException):
    """Not an Exception: nothing on the way catches it, so it ends the run itself."""


class BrokenBookkeepingJudge(ScriptedJudge):
    """Answers fine, but its call_info() (read after every call) breaks from the 11th call."""

    def call_info(self):
        if self.calls > 10:
            raise RuntimeError("call bookkeeping broke")
        return {}


class AbortingJudge(ScriptedJudge):
    """Answers the first 10 calls, then raises Abort."""

    def generate(self, prompt):
        if self.calls >= 10:
            raise Abort("judge process gone")
        return super().generate(prompt)


@pytest.mark.parametrize("judge, message", [
    (BrokenBookkeepingJudge(), "RuntimeError: call bookkeeping broke"),
    (AbortingJudge(), "Abort: judge process gone"),
])
def test_an_exception_in_the_run_marks_it_failed_and_keeps_the_finished_rows(store, judge, message):
    run = run_to_end(judge, samples(6), store)
    assert (run.status, run.error) == ("failed", message)
    assert [r.sample_id for r in run.report.results] == ["z0", "z1"]  # 5 calls a sample: two finished
    info = store.get_run(run.run_id)
    assert (info.status, info.n_done) == ("failed", 2)
    assert len(store.pending_samples(run.run_id)) == 4


def test_a_failed_run_without_history_keeps_its_rows_in_memory():
    run = run_to_end(BrokenBookkeepingJudge(), samples(6), None)
    assert run.status == "failed" and run.run_id is None
    assert [r.sample_id for r in run.report.results] == ["z0", "z1"]


class CountingJudge(ScriptedJudge):
    """A scripted judge that reports usage totals like OpenAIJudge does."""

    def usage(self):
        return {"calls": self.calls, "model": "scripted"}


def test_resume_scores_only_pending_rows_and_reports_the_whole_run(store):
    data = samples(6)
    run_id = store.create_run(dataset_name="zones.jsonl", samples=data, settings={"judge": "openai"})
    offline = RAGEvaluator(OfflineJudge())
    for i in (0, 2):
        store.record_result(run_id, i, offline.evaluate(data[i]))
    store.finish_run(run_id, status="stopped", total_time=0.5, usage={"calls": 7, "model": "scripted"})

    judge = CountingJudge()
    run = Run.resume(store, run_id, judge=judge).start()
    assert run.join(WAIT)
    assert judge.calls == 4 * len(METRICS)
    assert (run.prior, run.done, run.total, run.status) == (2, 6, 6, "finished")
    assert [r.sample_id for r in run.report.results] == [s.sample_id for s in data]
    assert run.report.usage == {"calls": 7 + judge.calls, "model": "scripted"}
    info = store.get_run(run_id)
    assert (info.status, info.n_done) == ("finished", 6)
    assert info.total_time == pytest.approx(run.report.total_time) and info.total_time > 0.5
    assert store.load_report(run_id).usage["calls"] == 7 + judge.calls


def test_resumed_rows_are_the_pending_ones():
    data = samples(4)
    judge = ScriptedJudge()
    run = Run(RAGEvaluator(judge), [(1, data[1]), (3, data[3])], dataset_name="d", prior=2).start()
    assert run.join(WAIT)
    asked = " ".join(judge.prompts)
    assert "zone 1?" in asked and "zone 3?" in asked and "zone 0?" not in asked and "zone 2?" not in asked
    assert (run.done, run.total) == (4, 4)


def test_an_unusable_history_runs_unsaved_with_a_warning(tmp_path):
    run = run_to_end(OfflineJudge(), samples(2), tmp_path)  # a folder is no database
    assert run.status == "finished" and run.run_id is None
    assert len(run.report.results) == 2
    assert run.warning.startswith("This run is not saved to the history: Cannot use the run history")


def test_elapsed_freezes_when_the_run_ends_and_a_run_starts_once(store):
    run = run_to_end(OfflineJudge(), samples(1), store)
    first = run.elapsed()
    time.sleep(0.02)
    assert run.elapsed() == first > 0
    with pytest.raises(RuntimeError, match="already been started"):
        run.start()


def test_close_judge_closes_it_at_the_end(store):
    class ClosingJudge(ScriptedJudge):
        closed = False

        def close(self):
            self.closed = True

    kept, closed = ClosingJudge(), ClosingJudge()
    run_to_end(kept, samples(1), store)
    run_to_end(closed, samples(1), store, close_judge=True)
    assert (kept.closed, closed.closed) == (False, True)


def test_run_config_settings_never_hold_the_key_and_round_trip(monkeypatch):
    monkeypatch.setenv("JUDGE_KEY_41", "sk-never-stored-41")
    config = RunConfig(judge="openai", model="judge-model", base_url="http://127.0.0.1:9/v1",
                       api_key_env="JUDGE_KEY_41", max_workers=3, price_in=2.5, heuristics="jaccard")
    judge = config.build_judge()
    try:
        settings = config.settings(judge)
        assert judge._client.api_key == "sk-never-stored-41"  # read from the named variable at build time
    finally:
        judge.close()
    assert "sk-never-stored-41" not in repr(settings) and "sk-never-stored-41" not in repr(config)
    assert (settings["judge"], settings["model"], settings["max_workers"]) == ("openai", "judge-model", 3)
    again = RunConfig.from_settings(settings)
    # The judge mode is stored as what "auto" became for this server (none answers at port 9: not known to reuse
    # a prompt prefix, so grouped), so a resumed or re-scored run asks the same calls.
    assert settings["judge_mode"] == "grouped" and again == replace(config, judge_mode="grouped")


def test_offline_config_builds_the_offline_judge_on_one_worker():
    config = RunConfig(max_workers=8, language="ar", heuristics="jaccard")
    assert isinstance(config.build_judge(), OfflineJudge) and config.workers == 1
    assert RunConfig.from_settings(config.settings(config.build_judge())) == RunConfig(
        max_workers=1, language="ar", heuristics="jaccard")


def test_older_runs_settings_still_resume():
    """Runs saved before RunConfig stored the cache as a flag and had no heuristic set."""
    old = {"judge": "openai", "language": "en", "max_workers": 2, "model": "m", "base_url": "http://x/v1",
           "cache": True, "temperature": 0.0}
    config = RunConfig.from_settings(old)
    assert (config.judge, config.model, config.max_workers, config.heuristics) == ("openai", "m", 2, "ragmeter")
    assert config.cache.endswith(".sqlite3")


def test_resume_restores_the_heuristic_set(store):
    """A --heuristics jaccard run resumed later must not silently switch sets."""
    data = samples(4)
    config = RunConfig(heuristics="jaccard")
    first = Run.new(config, data[:2], dataset_name="zones.jsonl", store=store)
    run_id = store.create_run(dataset_name="zones.jsonl", samples=data, settings=config.settings())
    run = Run.resume(store, run_id).start()
    assert run.join(WAIT) and run.status == "finished"
    jaccard = RAGEvaluator(OfflineJudge(), heuristics="jaccard").evaluate_dataset(data)
    assert [r.score_values() for r in run.report.results] == [r.score_values() for r in jaccard.results]
    assert first.evaluator.heuristics == "jaccard"


def test_resume_scores_the_runs_chosen_metrics_rubrics_and_repeats(store):
    """History's resume rebuilds the run from its settings: the same metrics, rubric and repeats."""
    data = samples(4)
    config = RunConfig(judge="openai", model="scripted", metrics=("answer_relevancy", "tone"), repeats=2,
                       rubrics={"tone": {"criteria": "The answer is calm.", "fields": ["answer"], "scale": "1-5"}})
    run_id = store.create_run(dataset_name="zones.jsonl", samples=data, settings=config.settings())
    judge = ScriptedJudge(lambda p: '{"score": 4}' if "CRITERION: The answer is calm." in p else '{"score": 0.5}')
    run = Run.resume(store, run_id, judge=judge).start()
    assert run.join(WAIT) and run.status == "finished"
    assert judge.calls == 4 * 2 * 2  # samples x chosen judged metrics x repeats
    assert run.report.metric_names() == ["answer_relevancy", "tone"]
    assert run.report.mean_scores()["tone"] == 0.75
    assert run.report.results[0].scores["tone"].llm_scores == [0.75, 0.75]


def test_a_bad_rubric_in_the_config_fails_before_any_judge_is_built(store):
    config = RunConfig(judge="openai", model="m", base_url="http://127.0.0.1:9/v1", metrics=("tone",),
                       rubrics={"tone": {"criteria": "", "fields": ["answer"]}})
    with pytest.raises(ValueError, match="criteria is empty"):
        Run.new(config, samples(1), dataset_name="x.jsonl", store=store)


def test_run_settings_say_whether_replies_were_cached_never_where(tmp_path):
    """A server's file path must not reach the history or an export; resuming uses the default cache."""
    config = RunConfig(cache=str(tmp_path / "server-only" / "judge-cache.sqlite3"))
    settings = config.settings(config.build_judge())
    assert settings["cache"] is True and "server-only" not in repr(settings)
    assert RunConfig.from_settings(settings).cache.endswith(".sqlite3")
    assert RunConfig().settings()["cache"] is False and RunConfig.from_settings(RunConfig().settings()).cache == ""
