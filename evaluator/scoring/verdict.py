"""The one verdict at the end of a run: did it pass, and if not, why, in a sentence.

Every surface reads it: the CLI's exit code and last line, the dashboard's end-of-run box, the
HTML/JSON report header and the history's stored verdict. A run is `ok` only when every row it
was asked to score got a score (rows skipped by a metric's own rule, such as no reference, do not
count against it) and the judge did not fail. In order of precedence:

    kind               exit  box     when
    judge_failed         3   red     the run stopped on judge failure, a score was left unscored by an
                                     unusable reply, or fallbacks passed the allowed rate
    nothing_scored       5   red     no row got a single score (target down, no answers, rubric offline)
    target_failed        4   amber   some target calls failed: those rows are unscored, not 0
    history_failed       6   amber   the run was scored but some of it could not be saved
    thresholds_missed    1   amber   a --fail-under threshold was missed, or could not be checked (N/A)
    ok                   0   green

The data (`Verdict`, `RowCounts`, `EXIT_CODES`) lives in model.py, below the history that stores it.
`verdict(report, ...)` decides for a finished EvalReport (local, Batch API, target and resumed
runs); `decide(counts, means, ...)` for engines that stream a tally instead (Ray).
"""
from __future__ import annotations

from typing import Mapping, Optional, Sequence, Tuple

from ..analysis import judging
from ..model import (EXIT_CODES, METHOD_UNSCORED, EvalReport, EvalResult, RowCounts, Severity, Verdict,  # noqa: F401  (re-exported)
                     VerdictKind, plural)


def missed_means(means: Mapping[str, Optional[float]], thresholds: Mapping[str, float]) -> Tuple[str, ...]:
    """The thresholds `means` (metric or "overall" -> mean, None when nothing was scored) miss: an N/A never passes."""
    missed = []
    for name, limit in thresholds.items():
        value = means.get(name)
        if value is None:
            missed.append(f"{name}: no sample could be scored (N/A; threshold {limit})")
        elif value < limit:
            missed.append(f"{name}: {value:.4f} < {limit}")
    return tuple(missed)


def decide(counts: RowCounts, means: Mapping[str, Optional[float]], *, thresholds: Mapping[str, float] = {},
           max_fallback_rate: float = judging.MAX_FALLBACK_RATE, stopped: Optional[str] = None,
           judge_cause: Optional[str] = None, target_cause: Optional[str] = None,
           nothing_cause: Optional[str] = None, history_error: Optional[str] = None) -> Verdict:
    """The verdict from a run's figures; `means` holds each metric's mean and "overall" (None: N/A)."""
    missed = missed_means(means, thresholds)

    def ending(kind: VerdictKind, cause: str = "") -> Verdict:
        return Verdict(kind, counts, cause, missed)

    if stopped:
        return ending("judge_failed", stopped)
    failed = _judge_failure(counts, max_fallback_rate, judge_cause)
    if failed:
        return ending("judge_failed", failed)
    if not counts.scored:
        why = nothing_cause or (f"{plural(counts.target_failures, 'target call')} failed"
                                if counts.target_failures else "no row had anything to score")
        return ending("nothing_scored", f"{counts.summary()} ({why})" if counts.total else "the run had no rows")
    if counts.target_failures:
        first = f" (first: {target_cause})" if target_cause else ""
        return ending("target_failed", f"{counts.summary()}; those rows are unscored, not 0{first}")
    if history_error:
        return ending("history_failed", history_error)
    if missed:
        return ending("thresholds_missed", f"{plural(len(missed), 'threshold')} missed ({'; '.join(missed)})")
    return ending("ok")


def _judge_failure(counts: RowCounts, max_fallback_rate: float, cause: Optional[str]) -> Optional[str]:
    because = f" ({cause})" if cause else ""
    if counts.judged and counts.fallbacks / counts.judged > max_fallback_rate:
        return (f"{counts.fallbacks}/{counts.judged} judged scores ({counts.fallbacks / counts.judged:.0%}) fell "
                f"back to the heuristic{because}, above --max-fallback-rate {max_fallback_rate:g}")
    if counts.unusable_replies:
        return (f"{counts.summary()}: the judge's reply could not give a score{because}, and the metric has no "
                "heuristic to stand in")
    return None


def rule_metrics(names: Sequence[str]) -> frozenset:
    """Which of these metrics are rule-based (keyword coverage, retrieval by id): no judge is asked."""
    from ..metrics.registry import get_metric

    def is_rule(name: str) -> bool:
        try:
            return not get_metric(name).judged
        except ValueError:  # a rubric made for one run, or a plugin not installed here: judged
            return False
    return frozenset(n for n in names if is_rule(n))


def _scored(result: EvalResult, rules: frozenset) -> bool:
    """A row is scored when it has a judged score (its overall), or, in a run of rule metrics alone
    (retrieval by id, say), when it has any score: such a run is not "nothing scored"."""
    if result.overall_score() is not None:
        return True
    return all(n in rules for n in result.scores) and any(not ms.skipped for ms in result.scores.values())


def row_counts(report: EvalReport) -> RowCounts:
    """What happened to the report's rows: scored, target failures, unusable replies, fallbacks."""
    fallbacks, judged = judging.fallback_counts(report)
    rules = rule_metrics(report.metric_names())
    return RowCounts(total=len(report.results),
                     scored=sum(1 for r in report.results if _scored(r, rules)),
                     target_failures=sum(1 for r in report.results if r.sample is not None and r.sample.target_error),
                     unusable_replies=sum(1 for r in report.results
                                          if any(ms.method == METHOD_UNSCORED for ms in r.scores.values())),
                     fallbacks=fallbacks, judged=judged)


def verdict(report: EvalReport, *, thresholds: Mapping[str, float] = {},
            max_fallback_rate: float = judging.MAX_FALLBACK_RATE, history_error: Optional[str] = None) -> Verdict:
    """The verdict of a finished report (any engine that holds its rows: local, Batch API, target, resume)."""
    means = dict(report.mean_scores(), overall=report.overall_mean())
    return decide(row_counts(report), means, thresholds=thresholds, max_fallback_rate=max_fallback_rate,
                  stopped=judging.stopped_reason(report), judge_cause=judging.main_cause(report),
                  target_cause=_first_target_error(report), nothing_cause=_nothing_cause(report),
                  history_error=history_error)


def _first_target_error(report: EvalReport) -> Optional[str]:
    return next((r.sample.target_error for r in report.results if r.sample is not None and r.sample.target_error),
                None)


def _nothing_cause(report: EvalReport) -> Optional[str]:
    """Why no row got a score, from the first row's skip reasons (they are alike when nothing scored)."""
    if not report.results or _first_target_error(report):
        return None
    reasons: Sequence[str] = [f"{name}: {ms.reasoning}" for name, ms in report.results[0].scores.items()
                              if ms.skipped and ms.reasoning]
    return "; ".join(reasons[:3]) or None
