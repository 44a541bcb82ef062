"""The data model: what goes in (EvalSample) and what comes out (MetricScore, EvalResult, EvalReport,
and how the run ended: RowCounts, Verdict).

Every row is a conversation. A single-turn row is one exchange (question, answer, contexts); a
multi-turn row also carries its `Conversation` (conversation.py), and its result the scores of each
assistant turn (`EvalResult.turns`). `EvalReport` means are over rows (`mean_scores`) and over every
assistant turn (`turn_mean_scores`); for single-turn rows the two are the same.

Everything here is plain data with no I/O, so every other module can import it.
"""
from __future__ import annotations

import statistics
import warnings
from dataclasses import asdict, dataclass, field
from types import MappingProxyType
from typing import Any, Dict, Iterable, List, Literal, Mapping, Optional, Sequence, Tuple

from .conversation import ASSISTANT, USER, Conversation, Exchange, Turn, in_context, transcript

# The five judged metrics, in display order: the default choice (evaluator.metrics.registry
# defines each metric; these names stay for code that lists the seed's metrics).
METRICS = (
    "faithfulness",
    "answer_relevancy",
    "context_precision",
    "context_recall",
    "answer_correctness",
)
# Rule-based metrics, reported only for samples that carry keywords / expected documents.
RULE_METRICS = ("keyword_coverage", "expected_doc_recall")

# How a score was made; shown beside every score so no number is unexplained.
METHOD_BLEND = "llm_blend"  # 0.7 * judge + 0.3 * heuristic
METHOD_FALLBACK = "heuristic_fallback"  # judge failed; heuristic alone, and the reason is recorded
METHOD_OFFLINE = "offline"  # no judge by choice; heuristic alone
METHOD_SKIPPED = "skipped"  # not computable for this sample (e.g. no reference)
METHOD_RULE = "rule"  # deterministic rule (keyword coverage, expected-doc recall)
METHOD_EMPTY = "empty_answer"  # the answer is empty: 0 on relevancy/correctness, no judge call
METHOD_LLM = "llm"  # the judge alone: the metric has no heuristic to blend with (rubrics)
METHOD_UNSCORED = "unscored"  # judge failed and the metric has no heuristic: no score, the error kept
METHOD_FLAGGED = "llm_flagged"  # the judge's reply contradicted itself: its verdicts' score, blended, flagged

METHOD_LABELS = {
    METHOD_BLEND: "LLM + heuristic blend",
    METHOD_FALLBACK: "heuristic after judge failure",
    METHOD_OFFLINE: "offline heuristic",
    METHOD_SKIPPED: "skipped",
    METHOD_RULE: "rule-based",
    METHOD_EMPTY: "empty answer (0)",
    METHOD_LLM: "LLM judge",
    METHOD_UNSCORED: "unscored (judge failed)",
    METHOD_FLAGGED: "LLM blend, flagged (reply contradicts its verdicts)",
}


@dataclass
class EvalSample:
    """One RAG interaction to score."""

    question: str
    answer: str
    contexts: List[str]
    ground_truth: Optional[str] = None
    sample_id: Optional[str] = None
    expected_answer_keywords: Optional[List[str]] = None
    expected_docs: Optional[List[str]] = None
    category: Optional[str] = None
    metadata: Dict[str, Any] = field(default_factory=dict)
    # Agent steps: [{"name", "arguments", "output"}], from a target or a file's tools_called column.
    tool_calls: List[Dict[str, Any]] = field(default_factory=list)
    expected_tools: Optional[List[str]] = None
    # Filled when a target answered this sample (see evaluator.targets): how long the call took,
    # why it failed (the answer is then empty and the metrics are skipped naming this), and why
    # the sample has no contexts by design (a bare model target retrieves nothing).
    target_latency_ms: Optional[float] = None
    target_error: Optional[str] = None
    no_contexts_reason: Optional[str] = None
    # Retrieval by document id (metrics/retrieval.py): the retrieved documents' ids in rank order ("" for
    # a document without one, so the ranks below it stay true), and graded relevance {doc id: grade}.
    retrieval_ids: Optional[List[str]] = None
    relevance: Optional[Dict[str, float]] = None
    # Why the row has no answer at all (its file gave none: a null or absent cell), as opposed to an
    # answer that is truly "" (the pipeline answered empty, scored 0). Metrics that read the answer are
    # then N/A with this reason, never 0; a target's answer clears it.
    no_answer_reason: Optional[str] = None
    # A multi-turn row's turns (None: the row is the one exchange above). Its question is then the
    # transcript up to the last reply, its answer that reply, what conversation-level metrics judge.
    conversation: Optional[Conversation] = None

    @classmethod
    def from_conversation(cls, conv: Conversation) -> "EvalSample":
        """The row of a conversation: every turn's contexts and tool calls, the expected outcome as ground truth,
        and its first target failure (a replay's) as `target_error`."""
        replies = [i for i, t in enumerate(conv.turns) if t.role == ASSISTANT and not t.not_asked]
        last = conv.turns[replies[-1]] if replies else None
        upto = replies[-1] if replies else len(conv.turns)
        return cls(transcript(conv.turns[:upto]), last.content if last else "",
                   [c for i in replies for c in conv.turns[i].contexts], conv.expected_outcome or conv.reference,
                   sample_id=conv.conversation_id, metadata=dict(conv.metadata), tool_calls=conv.all_tool_calls(),
                   expected_tools=conv.expected_tools, target_error=conv.first_error(), conversation=conv)

    @property
    def answered(self) -> bool:
        """Whether a target already answered this row: its latency or failure is recorded, or a replay
        recorded its conversation (a resumed run never asks the target again for it)."""
        if self.conversation is not None:
            return self.conversation.recorded_by is not None
        return self.target_latency_ms is not None or self.target_error is not None

    def exchanges(self) -> List[Exchange]:
        """The row's user turns with their replies: a conversation's, or the one exchange of a single-turn row."""
        if self.conversation is not None:
            return self.conversation.exchanges()
        reply = Turn(ASSISTANT, self.answer, list(self.contexts), list(self.tool_calls), self.ground_truth,
                     error=self.target_error, latency_ms=self.target_latency_ms)
        return [Exchange(0, 1, [], Turn(USER, self.question), reply, list(self.tool_calls))]

    def turn_sample(self, ex: Exchange, number: int, language: str) -> "EvalSample":
        """What one reply's turn metrics score: the reply, its contexts and steps, the user's turn in context."""
        reply, cid = ex.reply, self.sample_id or ""
        assert reply is not None  # callers pass exchanges with a reply
        return EvalSample(in_context(ex, language), reply.content, list(reply.contexts), reply.reference,
                          sample_id=f"{cid}#{number}", tool_calls=list(ex.tool_calls),
                          metadata={"conversation_id": cid, "turn": ex.reply_index},
                          target_latency_ms=reply.latency_ms, target_error=reply.error)


@dataclass
class MetricScore:
    """A score with everything needed to see how it was made."""

    name: str
    score: float
    reasoning: str = ""
    skipped: bool = False
    method: str = ""
    llm_score: Optional[float] = None
    heuristic_score: Optional[float] = None
    raw_reply: Optional[str] = None
    verdicts: List[Dict[str, Any]] = field(default_factory=list)
    error: Optional[str] = None
    llm_scores: List[float] = field(default_factory=list)  # one judge score per repeat
    llm_std: Optional[float] = None  # spread of llm_scores (the judge's own noise), None under 2 repeats
    scored_from: Optional[str] = None  # how the judge's reply became llm_score (see parsing.ParsedReply.how)

    def __repr__(self) -> str:
        if self.skipped:
            return f"MetricScore({self.name}=N/A [skipped])"
        return f"MetricScore({self.name}={self.score:.3f})"

    def to_dict(self) -> Dict[str, Any]:
        return {
            "name": self.name,
            "score": None if self.skipped else round(self.score, 4),
            "skipped": self.skipped,
            "method": self.method,
            "llm_score": self.llm_score,
            "heuristic_score": self.heuristic_score,
            "reasoning": self.reasoning,
            "raw_reply": self.raw_reply,
            "verdicts": list(self.verdicts),
            "error": self.error,
            "llm_scores": list(self.llm_scores),
            "llm_std": self.llm_std,
            "scored_from": self.scored_from,
        }

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "MetricScore":
        score = data.get("score")
        return cls(
            name=data["name"],
            score=0.0 if score is None else float(score),
            reasoning=data.get("reasoning") or "",
            skipped=bool(data.get("skipped")),
            method=data.get("method") or "",
            llm_score=data.get("llm_score"),
            heuristic_score=data.get("heuristic_score"),
            raw_reply=data.get("raw_reply"),
            verdicts=list(data.get("verdicts") or []),
            error=data.get("error"),
            llm_scores=list(data.get("llm_scores") or []),
            llm_std=data.get("llm_std"),
            scored_from=data.get("scored_from"),
        )


class Scores(Dict[str, MetricScore]):
    """Metric name -> MetricScore, in the order the metrics were chosen.

    Calling it, `result.scores()`, is the seed's API and returns the rounded floats; use
    `result.score_values()` instead.
    """

    def __call__(self) -> Dict[str, Optional[float]]:
        warnings.warn("EvalResult.scores() is deprecated: EvalResult.scores is now a dict of MetricScore; "
                      "use EvalResult.score_values() for the rounded floats", DeprecationWarning, stacklevel=2)
        return _rounded(self)


def _rounded(scores: Dict[str, MetricScore]) -> Dict[str, Optional[float]]:
    return {name: None if ms.skipped else round(ms.score, 4) for name, ms in scores.items()}


class _Seed:
    """`result.faithfulness` and the seed's four other attributes, read from and written to `scores`.

    A metric that was not chosen for the run reads as skipped, so seed code keeps working.
    """

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, result: Optional["EvalResult"], owner: type) -> Any:
        if result is None:
            return self
        found = result.scores.get(self.name)
        if found is None:
            return MetricScore(self.name, 0.0, "Not chosen for this run.", skipped=True, method=METHOD_SKIPPED)
        return found

    def __set__(self, result: "EvalResult", value: MetricScore) -> None:
        result.scores[self.name] = value


@dataclass
class TurnResult:
    """The scores of one assistant turn of a conversation: its index in Conversation.turns, the index
    of the user turn it answers, and its result (the turn sample and the turn metrics)."""

    index: int
    user_index: int
    result: "EvalResult"

    def to_dict(self) -> Dict[str, Any]:
        return {"turn": self.index, "user_turn": self.user_index,
                "scores": {n: ms.to_dict() for n, ms in self.result.scores.items()}}


@dataclass(init=False)
class EvalResult:
    """The scores of one sample: `scores` maps every chosen metric's name to its MetricScore.

    The seed's `EvalResult(sample_id, faithfulness, answer_relevancy, context_precision,
    context_recall, answer_correctness, elapsed_sec, extra, sample)` still works, and so do
    `result.faithfulness` and the other four; new code passes `scores={...}`.

    A conversation's result also has `turns`, each assistant turn's scores; its own `scores` are the
    conversation-level metrics plus, per turn metric, the mean over its turns. A single-turn row has none.
    """

    sample_id: Optional[str]
    scores: Scores
    elapsed_sec: float
    sample: Optional[EvalSample]
    turns: List[TurnResult]

    faithfulness = _Seed()
    answer_relevancy = _Seed()
    context_precision = _Seed()
    context_recall = _Seed()
    answer_correctness = _Seed()

    def __init__(self, sample_id: Optional[str], faithfulness: Optional[MetricScore] = None,
                 answer_relevancy: Optional[MetricScore] = None, context_precision: Optional[MetricScore] = None,
                 context_recall: Optional[MetricScore] = None, answer_correctness: Optional[MetricScore] = None,
                 elapsed_sec: float = 0.0, extra: Optional[Dict[str, MetricScore]] = None,
                 sample: Optional[EvalSample] = None, *, scores: Optional[Dict[str, MetricScore]] = None,
                 turns: Optional[List[TurnResult]] = None) -> None:
        seed = dict(zip(METRICS, (faithfulness, answer_relevancy, context_precision, context_recall,
                                  answer_correctness)))
        self.sample_id = sample_id
        self.scores = Scores((name, ms) for name, ms in seed.items() if ms is not None)
        self.scores.update(extra or {})
        self.scores.update(scores or {})
        self.elapsed_sec = elapsed_sec
        self.sample = sample
        self.turns = list(turns or [])

    @property
    def conversation(self) -> Optional[Conversation]:
        """The row's conversation (None for a single-turn row)."""
        return None if self.sample is None else self.sample.conversation

    def turn_results(self) -> List["EvalResult"]:
        """The results of its assistant turns; a single-turn row is its own one turn."""
        return [t.result for t in self.turns] if self.conversation is not None else [self]

    def worst_turn(self) -> Optional[TurnResult]:
        """The turn with the lowest mean score (None when no turn was scored)."""
        scored = [t for t in self.turns if any(not ms.skipped for ms in t.result.scores.values())]
        return min(scored, key=lambda t: t.result.overall(), default=None)

    @property
    def extra(self) -> Mapping[str, MetricScore]:
        """The scores beyond the seed's five (rule-based, rubric, plugin metrics), read-only."""
        return MappingProxyType({n: ms for n, ms in self.scores.items() if n not in METRICS})

    def metric_scores(self) -> Dict[str, MetricScore]:
        """Every MetricScore of this result, in the order the metrics were chosen (a copy)."""
        return dict(self.scores)

    def score_values(self) -> Dict[str, Optional[float]]:
        """Metric name -> score rounded to 4 decimals, or None when skipped or unscored."""
        return _rounded(self.scores)

    def overall(self) -> float:
        """Mean of the judged metrics that have a score (rule-based ones left out); 0.0 when none has.

        The seed's number: anything that averages rows uses `overall_score()`, which is None for a
        row with no score at all (its target failed, nothing could be judged), so it is never a 0."""
        found = self.overall_score()
        return 0.0 if found is None else found

    def overall_score(self) -> Optional[float]:
        """Mean of the judged metrics that have a score (rule-based ones left out); None when none has."""
        values = [ms.score for ms in self.scores.values() if not ms.skipped and ms.method != METHOD_RULE]
        return round(sum(values) / len(values), 4) if values else None

    def summary(self) -> str:
        lines = [f"Sample {self.sample_id or '-'}  (overall {_cell(self.overall_score())}, {self.elapsed_sec:.2f}s)"]
        for name, ms in self.scores.items():
            shown = "N/A [skipped]" if ms.skipped else f"{ms.score:.3f}"
            how = METHOD_LABELS.get(ms.method, ms.method)
            lines.append(f"  {name:<20} {shown:<14} {how}")
            if ms.reasoning:
                lines.append(f"    {ms.reasoning}")
        return "\n".join(lines)

    def to_dict(self) -> Dict[str, Any]:
        data: Dict[str, Any] = dict(self.score_values())
        data["overall"] = self.overall_score()
        data["elapsed_sec"] = round(self.elapsed_sec, 4)
        data["sample_id"] = self.sample_id
        conv = self.conversation
        if conv is not None:  # every turn, each reply with its scores
            by_turn = {t.index: t.to_dict()["scores"] for t in self.turns}
            data.update(conversation_id=conv.conversation_id, scores={n: ms.to_dict() for n, ms in self.scores.items()},
                        turns=[dict(t.to_dict(), index=i, **({"scores": by_turn[i]} if i in by_turn else {}))
                               for i, t in enumerate(conv.turns)])
            data.update({k: getattr(conv, k) for k in ("scenario", "expected_outcome") if getattr(conv, k)})
        return data


def merged_order(sequences: Iterable[Iterable[str]]) -> List[str]:
    """The names of several ordered lists in one order that keeps each list's order where it can:
    a name first seen later goes right after its predecessor in its own list."""
    order: List[str] = []
    for names in sequences:
        previous = None
        for name in names:
            if name not in order:
                order.insert(order.index(previous) + 1 if previous is not None else len(order), name)
            previous = name
    return order


def rounded_mean(values: List[float]) -> Optional[float]:
    """The mean to 4 decimals, as every report shows it; None (N/A) for no values, never 0."""
    return round(statistics.fmean(values), 4) if values else None


def _stdev(values: List[float]) -> Optional[float]:
    return round(statistics.stdev(values), 4) if len(values) >= 2 else None


def percentile(sorted_values: List[float], pct: float) -> Optional[float]:
    """Nearest-rank percentile of an ascending list (None when empty): p95 of 20 calls is the 19th."""
    if not sorted_values:
        return None
    rank = max(1, -(-len(sorted_values) * pct // 100))  # ceil without floats drifting
    return round(sorted_values[int(rank) - 1], 1)


def _ms(value: Optional[float]) -> str:
    return "–" if value is None else f"{value:.0f} ms"


LANGUAGE_NOTE_KEY = "language_note"  # sample.metadata: why a row was scored with English prompts (metrics/languages.py)


def header_note(metadatas: Sequence[Mapping[str, Any]], noun: str = "sample") -> Optional[str]:
    """The run header's line: how many rows were scored with English prompts for want of their own, in which
    languages; None when there are none."""
    return language_header([str(m[LANGUAGE_NOTE_KEY]) for m in metadatas if m.get(LANGUAGE_NOTE_KEY)],
                           len(metadatas), noun)


def language_header(notes: Sequence[str], total: int, noun: str = "sample") -> Optional[str]:
    """`header_note` from the notes of the rows that have one and the number of rows."""
    names = [note.split(":")[0].replace("Written in ", "") for note in notes]
    if not names:
        return None
    which = ", ".join(sorted(set(names)))
    return (f" language: {len(names)} of {total} {noun}s in {which}, scored with the English prompts "
            "and heuristics (no prompts of their own)")


@dataclass
class EvalReport:
    """All results of a run, with aggregate statistics."""

    results: List[EvalResult] = field(default_factory=list)
    total_time: float = 0.0
    usage: Dict[str, Any] = field(default_factory=dict)

    def metric_names(self) -> List[str]:
        """Every metric any result has, in the order they were chosen (the five when there are no results).

        A rule-based metric appears only when at least one sample could be scored on it."""
        if not self.results:
            return list(METRICS)
        return merged_order(r.scores for r in self.results)

    def values(self, metric: str) -> List[float]:
        """The non-skipped scores of one metric across results, in result order."""
        out = []
        for r in self.results:
            ms = r.scores.get(metric)
            if ms is not None and not ms.skipped:
                out.append(ms.score)
        return out

    def mean_scores(self) -> Dict[str, Optional[float]]:
        return {m: rounded_mean(self.values(m)) for m in self.metric_names()}

    def std_scores(self) -> Dict[str, Optional[float]]:
        return {m: _stdev(self.values(m)) for m in self.metric_names()}

    def overall_scores(self) -> List[float]:
        """Each row's overall score, for the rows with at least one judged score (unscored rows left out)."""
        return [v for v in (r.overall_score() for r in self.results) if v is not None]

    def overall_mean(self) -> Optional[float]:
        """Mean overall over the rows with a score; None (N/A) when no row has one, never 0."""
        return rounded_mean(self.overall_scores())

    def method_counts(self, metric: str) -> Dict[str, int]:
        """How many samples were scored each way for one metric (blend, fallback, offline, skipped)."""
        counts: Dict[str, int] = {}
        for r in self.results:
            ms = r.scores.get(metric)
            if ms is not None:
                counts[ms.method] = counts.get(ms.method, 0) + 1
        return counts

    @property
    def multi_turn(self) -> bool:
        """Whether the rows are conversations (then reports say "conversations" and show the turn means)."""
        return any(r.conversation is not None for r in self.results)

    def turn_results(self) -> List[EvalResult]:
        """Every assistant turn's result, in row order (a single-turn row is its own one turn)."""
        return [t for r in self.results for t in r.turn_results()]

    def turn_metric_names(self) -> List[str]:
        return merged_order(t.scores for t in self.turn_results())

    def turn_mean_scores(self) -> Dict[str, Optional[float]]:
        """Per turn metric, the mean over every assistant turn (equal to mean_scores for single-turn rows)."""
        turns = self.turn_results()
        return {m: rounded_mean([t.scores[m].score for t in turns if m in t.scores and not t.scores[m].skipped])
                for m in self.turn_metric_names()}

    def turn_counts(self) -> Dict[str, Tuple[int, int]]:
        """Per turn metric: (turns scored, turns that have it), the scored/total of the turn means."""
        turns = self.turn_results()
        return {m: (sum(1 for t in turns if m in t.scores and not t.scores[m].skipped),
                    sum(1 for t in turns if m in t.scores)) for m in self.turn_metric_names()}

    def target_stats(self) -> Optional[Dict[str, Any]]:
        """Target calls (one per assistant turn): how many, how many failed, p50/p95 latency in ms; None when
        no target answered."""
        samples = [r.sample for r in self.turn_results() if r.sample is not None]
        called = [s for s in samples if s.target_latency_ms is not None or s.target_error]
        if not called:
            return None
        latencies = sorted(s.target_latency_ms for s in called if s.target_latency_ms is not None)
        return {"calls": len(called), "failures": sum(1 for s in called if s.target_error),
                "p50_ms": percentile(latencies, 50), "p95_ms": percentile(latencies, 95)}

    def to_dict(self) -> Dict[str, Any]:
        data = {
            "num_samples": len(self.results),
            "total_time_s": round(self.total_time, 4),
            "mean_scores": self.mean_scores(),
            "std_scores": self.std_scores(),
            "overall_mean": self.overall_mean(),
            "samples": [r.to_dict() for r in self.results],
        }
        if self.usage:
            data["usage"] = dict(self.usage)
        target = self.target_stats()
        if target:
            data["target"] = target
        if self.multi_turn:
            counts = self.turn_counts()
            data.update(kind="conversations", num_conversations=len(self.results),
                        num_turns_scored=len(self.turn_results()),
                        means_over="mean_scores: over conversations (each conversation's turn mean); "
                                   "turn_mean_scores: over every assistant turn",
                        turn_mean_scores=self.turn_mean_scores(),
                        turn_scored={m: f"{s}/{n}" for m, (s, n) in counts.items()})
            data["conversations"] = data.pop("samples")
        return data

    def format_report(self) -> str:
        means, stds = self.mean_scores(), self.std_scores()
        rows = [(m, means[m], stds[m], len(self.values(m))) for m in self.metric_names()]
        turns = (self.turn_mean_scores(), self.turn_counts()) if self.multi_turn else None
        return report_table(len(self.results), self.total_time, rows, self.overall_mean(), len(self.overall_scores()),
                            target=self.target_stats(), language=self.language_note(), turns=turns)

    def language_note(self) -> Optional[str]:
        """The header's line on rows scored with English prompts for want of their own (languages.py), or None."""
        return header_note([r.sample.metadata if r.sample else {} for r in self.results],
                           "conversation" if self.multi_turn else "sample")

    def print_report(self) -> None:
        print(self.format_report())


def _cell(value: Optional[float]) -> str:
    return "N/A" if value is None else f"{value:.3f}"


CONVERSATION_TABLE = {"title": "Conversation report", "noun": "conversation"}  # format_table's words for chats


def report_table(n_rows: int, total_time: float, rows: List[Tuple[str, Optional[float], Optional[float], int]],
                 overall: Optional[float], n_overall: int, *, target: Optional[Mapping[str, Any]] = None,
                 language: Optional[str] = None,
                 turns: Optional[Tuple[Mapping[str, Optional[float]], Mapping[str, Tuple[int, int]]]] = None) -> str:
    """The printed report of a run (EvalReport.format_report, or analysis.summary.format_summary from a stored
    summary): the metric table, the target's calls, the language note and, for conversations (`turns`: turn
    means and scored/total counts), the per-turn lines."""
    notes = [f" target: {target['calls']} calls, {target['failures']} failed, "
             f"p50 {_ms(target['p50_ms'])}, p95 {_ms(target['p95_ms'])}"] if target else []
    notes += [language] if language else []
    if turns is None:
        return format_table(n_rows, total_time, rows, overall, notes, n_overall=n_overall)
    return format_table(n_rows, total_time, rows, overall, notes + turn_notes(*turns), n_overall=n_overall,
                        **CONVERSATION_TABLE)


def turn_notes(means: Mapping[str, Optional[float]], counts: Mapping[str, Tuple[int, int]]) -> List[str]:
    """The report's per-turn lines: each turn metric's mean over every assistant turn, scored/total turns."""
    return [" per turn (mean over all assistant turns):"] + [
        f"   {m:<18} {_cell(mean):<15} {counts[m][0]}/{counts[m][1]} turns" for m, mean in means.items()]


def format_table(n_samples: int, total_time: float, rows: List[Tuple[str, Optional[float], Optional[float], int]],
                 overall: Optional[float], notes: Sequence[str] = (), *, n_overall: Optional[int] = None,
                 title: str = "RAG evaluation report", noun: str = "sample") -> str:
    """The printed report: one line per (metric, mean, std, scored/total), then the overall mean over the
    `n_overall` rows that have one (N/A when none), then `notes`."""
    width = 44
    heading = f" {title}: {n_samples} {noun}{'' if n_samples == 1 else 's'}, {total_time:.2f}s"
    lines = ["=" * width, heading, "=" * width]
    for m, mean, std, n in rows:
        cell = _cell(mean) + (f" ± {std:.3f}" if mean is not None and std is not None else "")
        lines.append(f" {m:<20} {cell:<15} n={n}/{n_samples}")
    lines.append("-" * width)
    counted = n_samples if n_overall is None else n_overall
    lines.append(f" {'overall':<20} {_cell(overall):<15} n={counted}/{n_samples}")
    lines.extend(notes)
    lines.append("=" * width)
    return "\n".join(lines)


# --- how a run ended (decided by scoring/verdict.py, stored by the history) ----------------------

VerdictKind = Literal["ok", "thresholds_missed", "judge_failed", "target_failed", "nothing_scored",
                      "history_failed"]
Severity = Literal["success", "warning", "error"]

EXIT_CODES: Mapping[str, int] = {"ok": 0, "thresholds_missed": 1, "judge_failed": 3, "target_failed": 4,
                                 "nothing_scored": 5, "history_failed": 6}
_SEVERITY: Mapping[str, Severity] = {"ok": "success", "thresholds_missed": "warning", "target_failed": "warning",
                                     "history_failed": "warning", "judge_failed": "error",
                                     "nothing_scored": "error"}
_LABELS: Mapping[str, str] = {"ok": "ok", "thresholds_missed": "FAIL", "judge_failed": "judge failed",
                              "target_failed": "target failed", "nothing_scored": "nothing scored",
                              "history_failed": "history write failed"}


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


@dataclass(frozen=True)
class RowCounts:
    """What happened to a run's rows (`scoring.verdict.row_counts(report)` counts them). `scored` rows have at
    least one judged (non-rule) score, or, when the row's metrics are all rule-based, any score."""

    total: int
    scored: int
    target_failures: int = 0
    unusable_replies: int = 0  # rows with a score the judge's reply could not give (METHOD_UNSCORED)
    fallbacks: int = 0  # scores the judge failed to give, every metric counted (analysis.judging.fallback_counts)
    judged: int = 0  # scores the judge was asked for

    @property
    def unscored(self) -> int:
        return self.total - self.scored

    def summary(self) -> str:
        """'4 of 6 scored · 2 target failures': the rows behind every mean, named."""
        parts = [f"{self.scored} of {self.total} scored"]
        if self.target_failures:
            parts.append(plural(self.target_failures, "target failure"))
        if self.unusable_replies:
            parts.append(f"{self.unusable_replies} with an unusable judge reply")
        return " · ".join(parts)


@dataclass(frozen=True)
class Verdict:
    """How a run ended: `kind` (scoring/verdict.py decides it and draws the kinds), the row counts, and `cause`
    when not ok. Plain data here, below the history that stores it; `scoring.verdict.verdict(report)` makes one."""

    kind: VerdictKind
    counts: RowCounts
    cause: str = ""
    missed: Tuple[str, ...] = ()  # each missed --fail-under threshold, as "overall: 0.51 < 0.6"

    @property
    def ok(self) -> bool:
        return self.kind == "ok"

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.kind]

    @property
    def severity(self) -> Severity:
        """The colour of the end-of-run box: success (green), warning (amber) or error (red)."""
        return _SEVERITY[self.kind]

    @property
    def label(self) -> str:
        return _LABELS[self.kind]

    @property
    def line(self) -> str:
        """The last line's text: 'ok: 6 samples scored', 'target failed: 4 of 6 scored · 2 target failures (…)'."""
        if self.ok:
            return f"ok: {plural(self.counts.total, 'sample')} scored"
        return f"{self.label}: {self.cause}"

    def to_dict(self) -> Dict[str, Any]:
        return {"kind": self.kind, "exit_code": self.exit_code, "cause": self.cause, "missed": list(self.missed),
                "counts": asdict(self.counts), "summary": self.counts.summary()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Verdict":
        return cls(kind=data["kind"], counts=RowCounts(**data["counts"]), cause=data.get("cause") or "",
                   missed=tuple(data.get("missed") or ()))
