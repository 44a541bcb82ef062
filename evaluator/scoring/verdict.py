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

from typing import Any, Mapping, Optional, Sequence, Tuple

from ..analysis import judging
from ..model import (EXIT_CODES, EvalReport, RowCounts, Severity, Verdict,  # noqa: F401  (re-exported)
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


def row_counts(report: EvalReport) -> RowCounts:
    """What happened to the report's rows: scored, target failures, unusable replies, fallbacks."""
    from ..analysis.tally import ReportTally

    return ReportTally.of(report).counts()


def verdict(report: EvalReport, *, thresholds: Mapping[str, float] = {},
            max_fallback_rate: float = judging.MAX_FALLBACK_RATE, history_error: Optional[str] = None) -> Verdict:
    """The verdict of a finished report (any engine that holds its rows: local, Batch API, target, resume)."""
    from ..analysis.tally import ReportTally

    return from_decision(ReportTally.of(report).decision(), thresholds=thresholds,
                         max_fallback_rate=max_fallback_rate, history_error=history_error)


def from_decision(decision: Mapping[str, Any], *, thresholds: Mapping[str, float] = {},
                  max_fallback_rate: float = judging.MAX_FALLBACK_RATE, history_error: Optional[str] = None) -> Verdict:
    """The verdict from what a run's tally kept for it (ReportTally.decision, stored in its summary): how a
    run whose rows streamed past is judged, with this caller's thresholds."""
    return decide(RowCounts(**decision["counts"]), decision["means"], thresholds=thresholds,
                  max_fallback_rate=max_fallback_rate, stopped=decision.get("stopped"),
                  judge_cause=decision.get("judge_cause"), target_cause=decision.get("target_cause"),
                  nothing_cause=decision.get("nothing_cause"), history_error=history_error)
