"""A run's summary built from results frames as they stream past, without keeping the rows.

A million-row run cannot hold a million `EvalResult`s on the driver, but its report only needs,
per metric, the scores (8 bytes each) and the method counts; `RunTally` keeps just those and
gives the same `MetricSummary` figures (mean, std, CI, counts) as `analysis.stats.summarize`.
"""
from __future__ import annotations

import json
from array import array
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from ..analysis.judging import tallied_fallbacks
from ..analysis.stats import MetricSummary, mean_std, metric_summary
from ..io.frames import USAGE_COLUMNS, metric_columns
from ..model import METHOD_UNSCORED, RowCounts, report_table


@dataclass
class RunTally:
    """Per-metric scores and method counts, row count and judge usage of every frame added."""

    n: int = 0
    scores: Dict[str, array] = field(default_factory=dict)
    methods: Dict[str, Dict[str, int]] = field(default_factory=dict)
    overall: array = field(default_factory=lambda: array("d"))
    usage: Dict[str, int] = field(default_factory=lambda: dict.fromkeys(USAGE_COLUMNS, 0))
    unusable_rows: int = 0  # rows with a score the judge's reply could not give
    # Conversations' assistant turns, per turn metric: their scores and how many turns have the metric.
    turn_scores: Dict[str, array] = field(default_factory=dict)
    turn_totals: Dict[str, int] = field(default_factory=dict)
    conversations: bool = False

    def add(self, frame: Any) -> None:
        """Count one results frame (see io.frames for its columns)."""
        self.n += len(frame)
        for name in metric_columns(frame):
            self.scores.setdefault(name, array("d")).extend(float(v) for v in frame[name].dropna())
            methods = self.methods.setdefault(name, {})
            for method, count in frame[f"{name}_method"].value_counts().items():
                methods[method] = methods.get(method, 0) + int(count)
        self.overall.extend(float(v) for v in frame["overall"].dropna())  # unscored rows have none
        for column in USAGE_COLUMNS:
            self.usage[column] += int(frame[column].sum())
        unscored = [frame[f"{name}_method"] == METHOD_UNSCORED for name in metric_columns(frame)]
        if unscored:
            any_unscored = unscored[0]
            for column in unscored[1:]:  # `|`, not `+`: pyarrow-backed bool columns cannot be added
                any_unscored = any_unscored | column
            self.unusable_rows += int(any_unscored.fillna(False).sum())
        for more in frame["sample_more"].dropna():
            if '"turns"' in more:  # a conversation's row (cheap test first: most rows are single-turn)
                self._add_turns(json.loads(more).get("turns") or [])

    def _add_turns(self, turns: List[Dict[str, Any]]) -> None:
        self.conversations = True
        for turn in turns:
            for name, detail in (turn.get("metrics") or {}).items():
                scores = self.turn_scores.setdefault(name, array("d"))
                self.turn_totals[name] = self.turn_totals.get(name, 0) + 1
                if not detail.get("skipped"):
                    scores.append(float(detail.get("score") or 0.0))

    def metric_names(self) -> List[str]:
        """The metrics at least one row has, in the run's order (as EvalReport.metric_names)."""
        return [m for m, counts in self.methods.items() if counts]

    def summaries(self, **ci_options: Any) -> List[MetricSummary]:
        """Mean, std, CI and counts per metric, as `analysis.stats.summarize` gives for a report."""
        return [metric_summary(m, list(self.scores[m]), dict(self.methods[m]), self.n, **ci_options)
                for m in self.metric_names()]

    def overall_mean(self) -> Optional[float]:
        """Mean overall over the rows with a score; None (N/A) when no row has one."""
        from statistics import fmean

        return round(fmean(self.overall), 4) if self.overall else None

    def counts(self) -> RowCounts:
        """The rows' fate as `scoring.verdict.row_counts` counts it for a report (Ray runs call no target)."""
        methods: Counter = Counter()
        for counts in self.methods.values():
            methods.update(counts)
        fallbacks, judged = tallied_fallbacks(methods)
        return RowCounts(total=self.n, scored=len(self.overall), unusable_replies=self.unusable_rows,
                         fallbacks=fallbacks, judged=judged)

    def judge_usage(self) -> Dict[str, int]:
        """The run's judge usage under the names `OpenAIJudge.usage()` uses (calls, cache_hits, ...)."""
        u = self.usage
        return {"calls": u["judge_calls"], "cache_hits": u["cache_hits"], "prompt_tokens": u["prompt_tokens"],
                "completion_tokens": u["completion_tokens"], "retries": u["judge_retries"],
                "failures": u["judge_failures"]}

    def format_report(self, total_time: float) -> str:
        """The same table `EvalReport.format_report` prints."""
        rows = []
        for name in self.metric_names():
            mean, std = mean_std(self.scores[name])
            rows.append((name, _round(mean), _round(std), len(self.scores[name])))
        turns = None
        if self.conversations:
            turns = ({m: _round(mean_std(v)[0]) for m, v in self.turn_scores.items()},
                     {m: (len(self.turn_scores[m]), n) for m, n in self.turn_totals.items()})
        return report_table(self.n, total_time, rows, self.overall_mean(), len(self.overall), turns=turns)

    def means(self) -> Dict[str, Optional[float]]:
        """Mean score per metric (None when no row could be scored), rounded as reports show them."""
        return {name: _round(mean_std(self.scores[name])[0]) for name in self.metric_names()}


def _round(value: Optional[float]) -> Optional[float]:
    return None if value is None else round(value, 4)
