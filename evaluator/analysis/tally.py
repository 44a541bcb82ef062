"""A run's figures tallied row by row, so no one has to hold the rows (issue 28: streaming runs).

Every figure a run's summary holds (analysis/summary.py) and the inputs of its verdict
(scoring/verdict.py) come from here, for a report held in memory (`ReportTally.of(report)`) as for a
run whose rows stream past (`add` on each finished row, in any order, or `add_all` over the rows a
history reads back in pages). What it keeps is a few numbers per row (8 bytes a score, in arrays),
not the rows: a 100,000-row run's tally is a few MB where its results would take gigabytes.

Rows may arrive in any order (a concurrent run finishes them out of order); each is added with its
index, and whatever depends on order (the bootstrap CI's resampling, the "first" target error, the
metric order) is read in index order, so a run's streamed tally gives the same figures as its report.
"""
from __future__ import annotations

import statistics
from array import array
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple

from ..model import (LANGUAGE_NOTE_KEY, METHOD_UNSCORED, EvalReport, EvalResult, RowCounts,
                     merged_order, percentile, rounded_mean)
from . import judging
from ..metrics.registry import rule_metrics
from .agreement import label_of, agreement_table
from .aggregate import MAX_CATEGORIES, N_BINS, OTHER_CATEGORY
from .bands import band
from .noise import JudgeNoise, repeat_scores
from .stats import MetricSummary, metric_summary


@dataclass
class _Column:
    """One metric's non-skipped scores with their rows' indices, and its method -> count table."""

    values: array = field(default_factory=lambda: array("d"))
    rows: array = field(default_factory=lambda: array("q"))
    methods: Dict[str, int] = field(default_factory=dict)

    def add(self, index: int, score: Optional[float], method: str) -> None:
        self.methods[method] = self.methods.get(method, 0) + 1
        if score is not None:
            self.values.append(score)
            self.rows.append(index)

    def ordered(self) -> List[float]:
        """The scores in row order (the order a report lists them in)."""
        if all(a < b for a, b in zip(self.rows, self.rows[1:])):
            return list(self.values)
        return [v for _, v in sorted(zip(self.rows, self.values))]


@dataclass
class _Noise:
    """One metric's repeated judgements: rows with two or more, their spreads, and band flips."""

    rows: int = 0
    most: int = 0
    stds: List[float] = field(default_factory=list)
    flips: int = 0


@dataclass
class ReportTally:
    """Per metric: scores, method counts; per row: the overall; and the counts and firsts a verdict needs."""

    n: int = 0
    total_time: float = 0.0
    usage: Dict[str, Any] = field(default_factory=dict)
    columns: Dict[str, _Column] = field(default_factory=dict)
    overall: _Column = field(default_factory=_Column)
    scored: int = 0  # rows with a judged score (or, in a run of rule metrics alone, any score)
    unusable_rows: int = 0  # rows with a score the judge's reply could not give
    causes: Counter = field(default_factory=Counter)  # a judge failure's cause in a few words -> scores
    language_notes: List[str] = field(default_factory=list)  # languages of rows scored with English prompts
    noise: Dict[str, _Noise] = field(default_factory=dict)
    target_calls: int = 0
    target_failures: int = 0
    latencies: List[float] = field(default_factory=list)
    labelled: Dict[str, List[Tuple[int, float, float]]] = field(default_factory=dict)  # (row, score, human label)
    external: Dict[str, List[Tuple[int, float, float]]] = field(default_factory=dict)  # (row, score, other tool's)
    external_columns: set = field(default_factory=set)
    categories: Counter = field(default_factory=Counter)
    category_sums: Dict[Tuple[str, str], List[float]] = field(default_factory=dict)  # (category, metric) -> [sum, n]
    conversations: bool = False
    n_turns: int = 0  # assistant turns (a single-turn row is its own one)
    worst_turn: Optional[Dict[str, Any]] = None  # the run's lowest-scored assistant turn: row, turn, overall, id
    turn_columns: Dict[str, _Column] = field(default_factory=dict)
    turn_totals: Dict[str, int] = field(default_factory=dict)
    _rules: Dict[Tuple[str, ...], frozenset] = field(default_factory=dict)  # metric names -> the rule-based ones
    _orders: Dict[Tuple[str, ...], int] = field(default_factory=dict)  # each metric order seen -> its first row
    _turn_orders: Dict[Tuple[str, ...], int] = field(default_factory=dict)
    _category_first: Dict[str, int] = field(default_factory=dict)  # each category's first row
    _first_error: Optional[Tuple[int, str]] = None  # the lowest row whose target call failed
    _first_row: Optional[Tuple[int, List[str]]] = None  # the lowest row and its skip reasons

    @classmethod
    def of(cls, report: EvalReport) -> "ReportTally":
        tally = cls(total_time=report.total_time, usage=dict(report.usage or {}))
        tally.add_all(enumerate(report.results))
        return tally

    def add_all(self, rows: Iterable[Tuple[int, EvalResult]]) -> "ReportTally":
        for index, result in rows:
            self.add(index, result)
        return self

    # -- adding a row ---------------------------------------------------------------------------
    def add(self, index: int, result: EvalResult) -> None:
        """Count one finished row (a conversation's turns with it)."""
        self.n += 1
        names = tuple(result.scores)
        self._orders.setdefault(names, index)
        if self._orders[names] > index:
            self._orders[names] = index
        for name, ms in result.scores.items():
            self.columns.setdefault(name, _Column()).add(index, None if ms.skipped else ms.score, ms.method)
            found = judging.cause_of(ms.error)
            if found:
                self.causes[found] += 1
            if len(ms.llm_scores) >= 2:
                self._add_noise(name, ms)
        overall = result.overall_score()
        if overall is not None:
            self.overall.add(index, overall, "")
        rules = self._rules.get(names)
        if rules is None:
            rules = self._rules[names] = rule_metrics(names)
        if overall is not None or (all(n in rules for n in names) and any(not ms.skipped for ms in result.scores.values())):
            self.scored += 1
        if any(ms.method == METHOD_UNSCORED for ms in result.scores.values()):
            self.unusable_rows += 1
        if self._first_row is None or index < self._first_row[0]:
            self._first_row = (index, [f"{n}: {ms.reasoning}" for n, ms in result.scores.items()
                                       if ms.skipped and ms.reasoning])
        self._add_sample(index, result)
        if result.conversation is not None:
            self.conversations = True
            self._add_worst(index, result)
        for turn in result.turn_results():
            self.n_turns += 1
            self._add_turn(index, turn)

    def _add_worst(self, index: int, result: EvalResult) -> None:
        """Keep the run's worst assistant turn (the lowest overall; of equal ones, the first row's)."""
        turn = result.worst_turn()
        if turn is None:
            return
        score = turn.result.overall()
        best = self.worst_turn
        if best is None or (score, index) < (best["overall"], best["row"]):
            self.worst_turn = {"row": index, "turn": turn.index, "overall": score, "sample_id": result.sample_id}

    def _add_noise(self, name: str, ms: Any) -> None:
        noise = self.noise.setdefault(name, _Noise())
        noise.rows += 1
        noise.most = max(noise.most, len(ms.llm_scores))
        noise.stds.append(statistics.stdev(ms.llm_scores))
        noise.flips += len({band(s) for s in repeat_scores(ms)}) > 1

    def _add_sample(self, index: int, result: EvalResult) -> None:
        sample = result.sample
        metadata = (sample.metadata if sample is not None else None) or {}
        if metadata.get(LANGUAGE_NOTE_KEY):
            self.language_notes.append(str(metadata[LANGUAGE_NOTE_KEY]))
        category = sample.category if sample is not None else None
        if category not in (None, ""):
            self.categories[str(category)] += 1
            if self._category_first.get(str(category), index + 1) > index:
                self._category_first[str(category)] = index
            for name, ms in result.scores.items():
                if not ms.skipped:
                    cell = self.category_sums.setdefault((str(category), name), [0.0, 0])
                    cell[0] += ms.score
                    cell[1] += 1
        labels = metadata.get("human_labels") or {}
        for name, ms in result.scores.items():
            label = label_of(labels, name) if labels else None
            if label is not None and not ms.skipped:
                self.labelled.setdefault(name, []).append((index, ms.score, label))
        self._add_grades(index, result, metadata.get("external_scores") or {})

    def _add_grades(self, index: int, result: EvalResult, grades: Mapping[str, Any]) -> None:
        """Another tool's grades of the metrics this run scored (agreement.external_pairs, row by row)."""
        from ..io.grades import EXTERNAL_PREFIX, measures

        self.external_columns.update(grades)
        for column, grade in grades.items():
            metric = measures(str(column)[len(EXTERNAL_PREFIX):].split("_", 1)[-1])
            ms = result.scores.get(metric) if metric else None
            if ms is not None and not ms.skipped and isinstance(grade, (int, float)):
                self.external.setdefault(f"{metric} vs {column}", []).append((index, ms.score, float(grade)))

    def _add_turn(self, index: int, turn: EvalResult) -> None:
        sample = turn.sample
        if sample is not None and (sample.target_latency_ms is not None or sample.target_error):
            self.target_calls += 1
            if sample.target_latency_ms is not None:
                self.latencies.append(sample.target_latency_ms)
            if sample.target_error:
                self.target_failures += 1
                if self._first_error is None or index < self._first_error[0]:
                    self._first_error = (index, sample.target_error)
        names = tuple(turn.scores)
        if self._turn_orders.get(names, index + 1) > index:
            self._turn_orders[names] = index
        for name, ms in turn.scores.items():
            self.turn_totals[name] = self.turn_totals.get(name, 0) + 1
            self.turn_columns.setdefault(name, _Column()).add(index, None if ms.skipped else ms.score, ms.method)

    # -- what it gives ---------------------------------------------------------------------------
    def metric_names(self) -> List[str]:
        """Every metric any row has, in the order they were chosen (EvalReport.metric_names)."""
        if not self.n:
            return EvalReport().metric_names()
        return merged_order(names for names, _ in sorted(self._orders.items(), key=lambda item: item[1]))

    def summaries(self) -> List[MetricSummary]:
        """Mean, std, bootstrap CI and counts per metric, as analysis.stats.summarize gives for a report."""
        return [metric_summary(m, self.column(m).ordered(), dict(self.column(m).methods), self.n)
                for m in self.metric_names()]

    def column(self, metric: str) -> _Column:
        """The metric's scores (none for a metric no row has: the default five of an empty run)."""
        return self.columns.get(metric) or _Column()

    def means(self) -> Dict[str, Optional[float]]:
        """Each metric's mean (EvalReport.mean_scores) and "overall" (None: N/A)."""
        means = {m: rounded_mean(self.column(m).ordered()) for m in self.metric_names()}
        return dict(means, overall=rounded_mean(self.overall.ordered()))

    def methods(self) -> Counter:
        found: Counter = Counter()
        for column in self.columns.values():
            found.update(column.methods)
        return found

    def counts(self) -> RowCounts:
        """What happened to the rows (scoring.verdict.row_counts)."""
        fallbacks, judged = judging.tallied_fallbacks(self.methods())
        return RowCounts(total=self.n, scored=self.scored, target_failures=self.target_failures,
                         unusable_replies=self.unusable_rows, fallbacks=fallbacks, judged=judged)

    def stopped(self) -> Optional[str]:
        reason = self.usage.get(judging.STOPPED_KEY)
        return str(reason) if reason else None

    def main_cause(self) -> Optional[str]:
        """The judge's failure in a few words (judging.main_cause)."""
        return judging.cause_of(self.stopped()) or (self.causes.most_common(1)[0][0] if self.causes else None)

    def first_target_error(self) -> Optional[str]:
        return self._first_error[1] if self._first_error else None

    def nothing_cause(self) -> Optional[str]:
        """Why no row got a score, from the first row's skip reasons (scoring.verdict)."""
        if not self.n or self._first_error or self._first_row is None:
            return None
        return "; ".join(self._first_row[1][:3]) or None

    def decision(self) -> Dict[str, Any]:
        """Everything the verdict is decided from (scoring.verdict.from_decision), JSON-able."""
        return {"counts": asdict(self.counts()), "means": self.means(), "stopped": self.stopped(),
                "judge_cause": self.main_cause(), "target_cause": self.first_target_error(),
                "nothing_cause": self.nothing_cause()}

    def is_offline(self) -> bool:
        return judging.offline_methods(set(self.methods()))

    def target_stats(self) -> Optional[Dict[str, Any]]:
        """Target calls, failures, p50/p95 latency (EvalReport.target_stats); None when no target answered."""
        if not self.target_calls:
            return None
        latencies = sorted(self.latencies)
        return {"calls": self.target_calls, "failures": self.target_failures,
                "p50_ms": percentile(latencies, 50), "p95_ms": percentile(latencies, 95)}

    def language_note(self) -> Optional[str]:
        from ..model import language_header

        return language_header(self.language_notes, self.n, "conversation" if self.conversations else "sample")

    def judge_noise(self) -> List[JudgeNoise]:
        """analysis.noise.judge_noise, from the spreads kept row by row."""
        return [JudgeNoise(m, self.noise[m].most, self.noise[m].rows, round(statistics.fmean(self.noise[m].stds), 4),
                           round(self.noise[m].flips / self.noise[m].rows, 4))
                for m in self.metric_names() if m in self.noise]

    def agreement(self) -> Dict[str, Any]:
        """Agreement with human labels, then with other tools' grades (agreement.agreement_table)."""
        def pairs(found: Dict[str, List[Tuple[int, float, float]]]) -> Dict[str, List[Tuple[float, float]]]:
            return {m: [(s, y) for _, s, y in sorted(rows, key=lambda r: r[0])] for m, rows in found.items()}

        return {**agreement_table(pairs(self.labelled)), **agreement_table(pairs(self.external))}

    def histogram(self, n_bins: int = N_BINS) -> List[Dict[str, Any]]:
        """aggregate.histogram_rows: counts of each metric's scores in equal bins over [0, 1]."""
        rows = []
        for name in self.metric_names():
            counts = Counter(min(int(v * n_bins), n_bins - 1) for v in self.column(name).values)
            rows += [{"metric": name, "bin_start": i / n_bins, "bin_end": (i + 1) / n_bins, "count": counts.get(i, 0)}
                     for i in range(n_bins)]
        return rows

    def category_rows(self, max_categories: int = MAX_CATEGORIES) -> List[Dict[str, Any]]:
        """aggregate.category_rows: mean per (category, metric), beyond the largest categories pooled."""
        kept = set(self.largest_categories(max_categories))
        sums: Dict[Tuple[str, str], List[float]] = {}
        for (category, metric), (total, n) in self.category_sums.items():
            cell = sums.setdefault((category if category in kept else OTHER_CATEGORY, metric), [0.0, 0])
            cell[0] += total
            cell[1] += n
        return [{"category": c, "metric": m, "mean": round(total / n, 4), "n": n}
                for (c, m), (total, n) in sorted(sums.items())]

    def largest_categories(self, n: int) -> List[str]:
        """The `n` largest categories; of equal ones, those whose first row comes first (Counter.most_common
        over the rows in order)."""
        return sorted(self.categories, key=lambda c: (-self.categories[c], self._category_first[c]))[:n]

    def turn_means(self) -> Dict[str, Dict[str, Any]]:
        """Per turn metric: the mean over every assistant turn, turns scored and turns that have it."""
        order = merged_order(names for names, _ in sorted(self._turn_orders.items(), key=lambda item: item[1]))
        return {m: {"mean": rounded_mean(self.turn_columns[m].ordered()), "scored": len(self.turn_columns[m].values),
                    "total": self.turn_totals[m]} for m in order}
