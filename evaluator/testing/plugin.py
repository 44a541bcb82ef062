"""ragmeter as a pytest plugin: evaluate RAG answers where the tests already are.

    def test_answers_stay_grounded(rag_eval):
        rag_eval("eval/questions.jsonl", target="my_app.rag:answer", fail_under={"faithfulness": 0.8})

`rag_eval(data, target=None, metrics=None, judge=None, fail_under=None)` runs one evaluation through the
same path as `ragmeter evaluate` (saved to the run history) and returns its EvalReport. `data` is a
dataset file or a list of EvalSamples (or of dicts with their fields); `target` a target spec
(`module:function`, a URL) or a TargetConfig; `judge` None scores offline (heuristics, no network), a
model name or a dict of RunConfig fields ({"model": ..., "base_url": ...}) a judge with the on-disk
reply cache, so an unchanged re-run costs nothing. A threshold missed fails the test with the metric,
its mean and 95% CI and the worst samples' ids with their one-line reasons; a judge or target failure
fails it with its cause.

Options: `--ragmeter-report report.html` writes the HTML report of each evaluation of the session
(report.html, report-2.html, ...); `--ragmeter-history DB` chooses the history ($RAGMETER_HISTORY).
Installed, the plugin loads through the `pytest11` entry point; else `pytest -p evaluator.testing.plugin`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

import pytest

from ..model import EvalReport, EvalSample

WORST = 3  # samples named in a failure message
_REPORTS = pytest.StashKey[List["Evaluation"]]()
_WRITE_ERRORS = pytest.StashKey[List[str]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ragmeter", "RAG evaluation with ragmeter")
    group.addoption("--ragmeter-report", default=None, metavar="PATH.html",
                    help="write the HTML report of every rag_eval evaluation (PATH, then PATH-2, ...)")
    group.addoption("--ragmeter-history", default=None, metavar="DB",
                    help="run history for rag_eval runs (default $RAGMETER_HISTORY, else the team "
                         "file's [server] history, else ~/.ragmeter)")


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_REPORTS] = []
    config.stash[_WRITE_ERRORS] = []


@dataclass
class Evaluation:
    """One rag_eval call: which test made it, its run and report (for --ragmeter-report)."""

    test: str
    dataset: str
    report: EvalReport
    settings: Dict[str, Any] = field(default_factory=dict)
    run_id: Optional[str] = None


def _samples(data: Any) -> tuple:
    """(samples, dataset name) from a path or a list of EvalSamples / dicts."""
    from ..io.datasets import load_dataset
    from ..io.records import sample_from_record

    if isinstance(data, (str, Path)):
        return load_dataset(data), Path(data).name
    rows = [d if isinstance(d, EvalSample) else sample_from_record(dict(d)) for d in data]
    if any(r is None for r in rows):
        raise ValueError("each sample given to rag_eval needs at least a question and an answer")
    return rows, ""


def _config(metrics: Optional[Sequence[str]], judge: Union[None, str, Mapping[str, Any]]) -> Any:
    from ..runs.run import OPENAI, RunConfig
    from ..team.settings import judge_cache

    chosen = tuple(metrics or ())
    if judge is None:
        return RunConfig(metrics=chosen)
    given = {"model": judge} if isinstance(judge, str) else dict(judge)
    return RunConfig(**{"judge": OPENAI, "cache": str(judge_cache().value), **given, "metrics": chosen})


def _target(target: Any) -> Any:
    from ..targets import TargetConfig

    return TargetConfig(target) if isinstance(target, str) else target


def worst_lines(report: EvalReport, metric: str, n: int = WORST) -> List[str]:
    """The `n` lowest-scoring samples on `metric`: id, score and the first line of their reasoning."""
    scored = [(r.scores[metric].score, str(r.sample_id), r.scores[metric].reasoning) for r in report.results
              if metric in r.scores and not r.scores[metric].skipped]
    scored.sort(key=lambda item: (item[0], item[1]))
    return [f"{sid}  {score:.3f}  {(why.strip().splitlines() or [''])[0][:120]}" for score, sid, why in scored[:n]]


def missed(report: EvalReport, fail_under: Mapping[str, float]) -> List[str]:
    """One paragraph per threshold missed (an N/A mean misses): metric, mean, CI, counts, worst samples."""
    from ..analysis.stats import summarize
    from ..metrics.retrieval import canonical

    sums = {s.name: s for s in summarize(report)}
    overall = report.overall_mean()
    out = []
    for given, minimum in fail_under.items():
        name = canonical(given)
        if name == "overall":
            if overall is None or overall < minimum:
                out.append(f"overall mean {'N/A' if overall is None else f'{overall:.3f}'} is below {minimum}")
            continue
        s = sums.get(name)
        if s is None or s.mean is None:
            out.append(f"{name} is N/A: not scored on any of {len(report.results)} samples, so it cannot pass {minimum}")
        elif s.mean < minimum:
            ci = f", 95% CI {s.ci_low:.3f}–{s.ci_high:.3f}" if s.ci_low is not None and s.ci_high is not None else ""
            lines = [f"{name} mean {s.mean:.3f}{ci} ({s.n_scored}/{s.n_total} scored) is below {minimum}; worst samples:"]
            out.append("\n".join(lines + [f"    {line}" for line in worst_lines(report, name)]))
    return out


class RagEval:
    """The `rag_eval` fixture's callable (see the module docstring)."""

    def __init__(self, config: pytest.Config, test: str) -> None:
        self._config, self._test = config, test

    def __call__(self, data: Any, target: Any = None, metrics: Optional[Sequence[str]] = None,
                 judge: Union[None, str, Mapping[str, Any]] = None,
                 fail_under: Optional[Mapping[str, float]] = None) -> EvalReport:
        from ..runs.run import Run
        from ..scoring.verdict import verdict
        from ..store.history import RunStore
        from ..team.settings import history_location

        samples, dataset = _samples(data)
        config = _config(metrics, judge)
        store = RunStore(history_location(self._config.getoption("ragmeter_history")))
        run = Run.new(config, samples, dataset_name=dataset or self._test, store=store, target=_target(target))
        run.start().join()
        if run.report is None:
            pytest.fail(f"ragmeter: the evaluation did not finish: {run.error or run.status}", pytrace=False)
        report = run.report
        self._config.stash[_REPORTS].append(Evaluation(self._test, dataset or self._test, report, run.settings,
                                                       run.run_id))
        ended = verdict(report)
        if ended.exit_code not in (0, 1):  # the judge or the target failed, or nothing was scored
            pytest.fail(f"ragmeter: {ended.label}: {ended.cause} (run {run.run_id})", pytrace=False)
        problems = missed(report, fail_under or {})
        if problems:
            pytest.fail("ragmeter: " + "\n".join(problems) + f"\n(run {run.run_id}: ragmeter compare, or the "
                        "dashboard's History page, shows it)", pytrace=False)
        return report


@pytest.fixture
def rag_eval(request: pytest.FixtureRequest) -> RagEval:
    """Evaluate RAG answers inside a test: `rag_eval(data, target=, metrics=, judge=, fail_under=)`."""
    return RagEval(request.config, request.node.nodeid)


def report_paths(path: str, n: int) -> List[Path]:
    """PATH for the first evaluation, then PATH-2, PATH-3 (before the extension)."""
    first = Path(path)
    return [first] + [first.with_name(f"{first.stem}-{i}{first.suffix}") for i in range(2, n + 1)]


def pytest_sessionfinish(session: pytest.Session) -> None:
    path = session.config.getoption("ragmeter_report")
    done = session.config.stash.get(_REPORTS, [])
    if not path or not done:
        return
    from ..report.export import html_report

    for where, ev in zip(report_paths(path, len(done)), done):
        try:
            where.parent.mkdir(parents=True, exist_ok=True)
            where.write_text(html_report(ev.report, title=f"ragmeter: {ev.test}", dataset_name=ev.dataset,
                                         settings=ev.settings), encoding="utf-8")
        except OSError as exc:  # said in the summary, and the session fails: a report asked for is missing
            session.config.stash[_WRITE_ERRORS].append(f"{where}: not written ({exc.strerror or exc})")
            if session.exitstatus == pytest.ExitCode.OK:
                session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    done = config.stash.get(_REPORTS, [])
    if not done:
        return
    terminalreporter.section("ragmeter")
    path = config.getoption("ragmeter_report")
    paths = report_paths(path, len(done)) if path else [None] * len(done)
    for ev, where in zip(done, paths):
        overall = ev.report.overall_mean()
        terminalreporter.write_line(f"{ev.test}: run {ev.run_id}, {len(ev.report.results)} samples, overall "
                                    f"{'N/A' if overall is None else f'{overall:.3f}'}"
                                    + (f", report {where}" if where else ""))
    for problem in config.stash.get(_WRITE_ERRORS, []):
        terminalreporter.write_line(f"ragmeter report {problem}", red=True)
