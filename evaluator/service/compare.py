"""Two runs compared: the one use case under `ragmeter compare` and the History page's comparison.

`compare` gives a `Comparison` (analysis.compare.RunComparison) whose every metric carries both tests: the
fixed-size test over every pair (the verdict: paired bootstrap CI and permutation p) and the sequential test
(runs/ab.py's anytime-valid confidence sequence over the same pairs, when both runs scored the same dataset).
The CLI prints it in one of four formats (`comparison_text`), the page draws it; neither computes a test. Each
metric's one decision (analysis/decision.py: better, worse, no clear change, not comparable) is the comparison's
`decision`; runs scored differently get none unless `allow_different_scorers` (--allow-different-scorers, the
History page's checkbox).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Dict, List, Optional

from ..analysis.compare import RunComparison, SequentialTest, compare_runs
from ..analysis.compare_text import ALPHA, failures, to_json, to_markdown, to_text
from ..errors import RagmeterError
from ..runs.ab import ABResult, ab_from_runs
from ..store.history import RunStore
from ..team.settings import history_location

Comparison = RunComparison  # the one comparison both doors get (its metrics carry both tests)
LATEST = "latest"
FORMATS = ("text", "markdown", "json", "html")
NOT_SAME_DATASET = ("No sequential test: it pairs the rows of one dataset, and these runs scored different "
                    "datasets ({a} and {b}).")


def cli_history(flag: Optional[str]) -> RunStore:
    """The history a command line names (--history > $RAGMETER_HISTORY > the team file > ~/.ragmeter)."""
    return RunStore(history_location(flag))


def resolve_run(store: RunStore, given: str, project: Optional[str], other: Optional[str] = None) -> str:
    """A run id as given, or the newest finished run of `project` (other than `other`) for 'latest'."""
    if given != LATEST:
        return store.get_run(given).run_id  # HistoryError (exit 2) for an unknown id
    if not project:
        raise RagmeterError("'latest' needs --project: which project's newest run to compare")
    found = [r for r in store.list_runs(project=project) if r.status == "finished" and r.run_id != other]
    if not found:
        raise RagmeterError(f"project {project!r} has no finished run{' other than ' + other if other else ''} "
                            "to compare; list them with: ragmeter runs --project NAME")
    return found[0].run_id


def compare(store: RunStore, run_a: str, run_b: str, *, allow_different_scorers: bool = False) -> Comparison:
    """Run B (the candidate) against run A (the baseline), each metric with both tests. Runs scored differently
    get no verdict (`Comparison.comparability`) unless `allow_different_scorers`."""
    info_a, info_b = store.get_run(run_a), store.get_run(run_b)
    found = replace(compare_runs(store, run_a, run_b), scorers_allowed=allow_different_scorers)
    if info_a.dataset_name != info_b.dataset_name:
        return replace(found, sequential_note=NOT_SAME_DATASET.format(a=info_a.dataset_name, b=info_b.dataset_name))
    tests = {metric: sequential_test(result) for metric, result in ab_from_runs(store, run_a, run_b).items()}
    found.metrics = [replace(d, sequential=tests.get(d.metric)) for d in found.metrics]
    return found


def sequential_test(result: ABResult) -> SequentialTest:
    """runs/ab.py's result (baseline − candidate) turned round to candidate − baseline, as every delta is."""
    low, high = result.interval
    return SequentialTest(decision=result.decision, delta=round(-result.difference, 4), low=round(-high, 4),
                          high=round(-low, 4), rows_used=result.samples_used, rows_total=result.samples_total)


def comparison_text(cmp: Comparison, fmt: str, *, alpha: float = ALPHA, allowed: bool = False,
                    dashboard_url: Optional[str] = None, color: bool = False) -> str:
    """The comparison as `fmt` (text, markdown, json or html: FORMATS)."""
    if fmt == "markdown":
        return to_markdown(cmp, alpha, dashboard_url, allowed=allowed)
    if fmt == "json":
        return to_json(cmp, alpha, allowed=allowed)
    if fmt == "html":
        from ..report.comparison import comparison_html

        return comparison_html(cmp, alpha, allowed=allowed)
    if fmt == "text":
        return to_text(cmp, alpha, color=color, allowed=allowed)
    raise RagmeterError(f"unknown comparison format {fmt!r}; choose one of {', '.join(FORMATS)}")


def blocking_differences(cmp: Comparison) -> List[str]:
    """How the runs were scored differently, in sentences, where that keeps a regression gate from judging."""
    return [d.sentence() for d in cmp.scorer_differences if d.blocks]


def not_comparable(cmp: Comparison) -> str:
    """Why the comparison gives no verdict ("scored by different heuristics (default vs jaccard)"); "" when it
    gives verdicts (the scorers match, or verdicts across scorers were allowed)."""
    judged = cmp.comparability
    return "" if judged.judged else judged.reason


def regressions(cmp: Comparison, alpha: float = ALPHA) -> List[str]:
    """Why a regression gate fails (significant drops, rows lost, nothing paired); empty when it passes."""
    return failures(cmp, alpha)


def sequential_tests(cmp: Comparison) -> Dict[str, SequentialTest]:
    """Metric -> its sequential test, for the metrics that have one."""
    return {d.metric: d.sequential for d in cmp.metrics if d.sequential is not None}
