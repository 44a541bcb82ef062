"""Scoring conversations: each assistant turn in context, then the conversation as a whole.

    from evaluator.scoring.conversations import evaluate_conversations
    report = evaluate_conversations(RAGEvaluator(judge), conversations)

Per assistant turn, the evaluator's own metrics (faithfulness to that turn's contexts, relevancy
to the user's turn with the conversation so far shown to the judge as part of the question…):
one judged call per metric and repeat, as for a single-turn sample. Per conversation: knowledge
retention and goal completion (one call each when judged), conversation relevancy (no call: from
the turns' answer_relevancy), the agent metrics over every turn's tool calls (task_completion one
call), and rubrics declared `level = "conversation"` (one call each).

The report's results are one `ConversationResult` per conversation. Its `scores` are the
conversation-level metrics plus, per turn metric, the mean over that conversation's scored turns;
so `report.mean_scores()` is a mean over conversations. `ConversationReport.turn_mean_scores()`
is the mean over every assistant turn of the dataset instead.
"""
from __future__ import annotations

import copy
import dataclasses
import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..conversation import NOT_ASKED, Conversation, Exchange, transcript
from .evaluation import RAGEvaluator
from ..metrics.conversational import (CONVERSATION_METRICS, LABELS, ConversationSample, conversation_relevancy)
from ..metrics.metric import Metric
from ..metrics.tools import AGENT_METRICS
from ..model import (METHOD_RULE, METHOD_SKIPPED, EvalReport, EvalResult, EvalSample, MetricScore, merged_order,
                    rounded_mean)
from ..text import resolve_language

METHOD_TURNS = "from_turns"  # a conversation's score computed from its turns' scores, no judge call
_AGENT_NAMES = frozenset(m.name for m in AGENT_METRICS)
_HISTORY_HEAD = {"en": ("Conversation so far:", "The user now says:"), "ar": ("المحادثة حتى الآن:", "يقول المستخدم الآن:")}


def level_of(metric: Metric) -> str:
    """"conversation" for metrics that score a whole conversation, else "turn"."""
    if metric.name in _AGENT_NAMES or metric in CONVERSATION_METRICS:
        return "conversation"
    return str(getattr(metric, "level", "turn"))


def in_context(ex: Exchange, language: str) -> str:
    """The user's turn as the judge sees it: the conversation so far, then what the user now says."""
    if not ex.history:
        return ex.user.content
    lang = resolve_language(language, ex.user.content)
    before, now = _HISTORY_HEAD.get(lang, _HISTORY_HEAD["en"])
    return f"{before}\n{transcript(ex.history, LABELS.get(lang, LABELS['en']))}\n\n{now}\n{ex.user.content}"


def turn_sample(conv: Conversation, ex: Exchange, number: int, language: str) -> EvalSample:
    reply = ex.reply
    assert reply is not None  # callers pass exchanges with a reply
    return EvalSample(in_context(ex, language), reply.content, list(reply.contexts), reply.reference,
                      sample_id=f"{conv.conversation_id}#{number}", tool_calls=list(ex.tool_calls),
                      metadata={"conversation_id": conv.conversation_id, "turn": ex.reply_index},
                      target_latency_ms=reply.latency_ms, target_error=reply.error)


def conversation_sample(conv: Conversation) -> ConversationSample:
    replies = [t for t in conv.turns if t.role == "assistant" and not t.not_asked]
    last = replies[-1].content if replies else ""
    contexts = [c for t in replies for c in t.contexts]
    upto = max((i for i, t in enumerate(conv.turns) if replies and t is replies[-1]), default=len(conv.turns))
    # The judge of a conversation-level rubric or task_completion sees the chat up to its last reply.
    return ConversationSample(transcript(conv.turns[:upto]), last,
                              contexts, conv.expected_outcome or conv.reference, sample_id=conv.conversation_id,
                              tool_calls=conv.all_tool_calls(), expected_tools=conv.expected_tools,
                              metadata=dict(conv.metadata), conversation=conv)


@dataclass
class TurnResult:
    """The scores of one assistant turn: which turn (its index in Conversation.turns) and its result."""

    index: int
    user_index: int
    result: EvalResult

    def to_dict(self) -> Dict[str, Any]:
        return {"turn": self.index, "user_turn": self.user_index,
                "scores": {n: ms.to_dict() for n, ms in self.result.scores.items()}}


class ConversationResult(EvalResult):
    """One conversation's result: its own scores (see the module docstring) and its turns' results."""

    def __init__(self, conversation: Conversation, scores: Dict[str, MetricScore], turns: List[TurnResult],
                 sample: ConversationSample, elapsed_sec: float = 0.0) -> None:
        super().__init__(conversation.conversation_id, elapsed_sec=elapsed_sec, sample=sample, scores=scores)
        self.conversation = conversation
        self.turns = turns

    def worst_turn(self) -> Optional[TurnResult]:
        """The turn with the lowest mean score (None when no turn was scored)."""
        scored = [t for t in self.turns if any(not ms.skipped for ms in t.result.scores.values())]
        return min(scored, key=lambda t: t.result.overall(), default=None)

    def to_dict(self) -> Dict[str, Any]:
        data = super().to_dict()
        by_turn = {t.index: t for t in self.turns}
        turns = []
        for i, turn in enumerate(self.conversation.turns):
            entry = dict(turn.to_dict(), index=i)
            if i in by_turn:
                entry["scores"] = by_turn[i].to_dict()["scores"]
            turns.append(entry)
        data.update(conversation_id=self.conversation.conversation_id, turns=turns,
                    scores={n: ms.to_dict() for n, ms in self.scores.items()})
        for key in ("scenario", "expected_outcome"):
            if getattr(self.conversation, key):
                data[key] = getattr(self.conversation, key)
        return data


@dataclass
class ConversationReport(EvalReport):
    """An EvalReport over conversations: means over conversations, and `turn_mean_scores` over turns."""

    turn_metrics: List[str] = field(default_factory=list)

    def turn_results(self) -> List[EvalResult]:
        return [t.result for r in self.results if isinstance(r, ConversationResult) for t in r.turns]

    def turn_mean_scores(self) -> Dict[str, Optional[float]]:
        turns = self.turn_results()
        return {m: rounded_mean([t.scores[m].score for t in turns if m in t.scores and not t.scores[m].skipped])
                for m in self.turn_metrics}

    def turn_counts(self) -> Dict[str, Tuple[int, int]]:
        """Per turn metric: (turns scored, turns that have it), the scored/total of the turn means."""
        turns = self.turn_results()
        return {m: (sum(1 for t in turns if m in t.scores and not t.scores[m].skipped),
                    sum(1 for t in turns if m in t.scores)) for m in self.turn_metrics}

    def target_stats(self) -> Optional[Dict[str, Any]]:
        calls = [t.sample for t in self.turn_results() if t.sample is not None
                 and (t.sample.target_latency_ms is not None or t.sample.target_error)]
        if not calls:
            return None
        from ..model import percentile

        latencies = sorted(s.target_latency_ms for s in calls if s.target_latency_ms is not None)
        return {"calls": len(calls), "failures": sum(1 for s in calls if s.target_error),
                "p50_ms": percentile(latencies, 50), "p95_ms": percentile(latencies, 95)}

    def to_dict(self) -> Dict[str, Any]:
        data = super().to_dict()
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
        text = super().format_report().replace("RAG evaluation report:", "Conversation report:", 1)
        text = text.replace(" sample,", " conversation,").replace(" samples,", " conversations,")
        lines = [" per turn (mean over all assistant turns):"]
        counts = self.turn_counts()
        for m, mean in self.turn_mean_scores().items():
            shown = "N/A" if mean is None else f"{mean:.3f}"
            lines.append(f"   {m:<18} {shown:<15} {counts[m][0]}/{counts[m][1]} turns")
        head, sep, tail = text.rpartition("=" * 44)
        return head + "\n".join(lines) + "\n" + sep + tail


def _turn_mean(name: str, turns: List[EvalResult]) -> Optional[MetricScore]:
    found = [t.scores[name] for t in turns if name in t.scores]
    if not found:
        return None
    scored = [ms for ms in found if not ms.skipped]
    if not scored:
        return MetricScore(name, 0.0, f"No turn could be scored: {found[0].reasoning}", skipped=True,
                           method=METHOD_SKIPPED)
    method = METHOD_RULE if all(ms.method == METHOD_RULE for ms in scored) else METHOD_TURNS
    return MetricScore(name, round(statistics.fmean(ms.score for ms in scored), 4),
                       f"Mean over {len(scored)}/{len(found)} assistant turns.", method=method)


def _not_asked(sample: EvalSample, metrics: Sequence[Metric]) -> EvalResult:
    return EvalResult(sample.sample_id, sample=sample, scores={
        m.name: MetricScore(m.name, 0.0, NOT_ASKED, skipped=True, method=METHOD_SKIPPED) for m in metrics if m.judged})


def split_metrics(metrics: Sequence[Metric]) -> Tuple[List[Metric], List[Metric]]:
    """(turn metrics, conversation metrics): the evaluator's choice, agent metrics and conversation-level
    rubrics moved to the conversation, and the built-in conversation metrics added there."""
    turn = [m for m in metrics if level_of(m) == "turn"]
    conv = list(CONVERSATION_METRICS) + [m for m in metrics if level_of(m) == "conversation"
                                         and m not in CONVERSATION_METRICS]
    if not any(m.name in _AGENT_NAMES for m in conv):
        conv += list(AGENT_METRICS)
    return turn, conv


def evaluate_conversations(evaluator: RAGEvaluator, conversations: Sequence[Conversation], *,
                           max_workers: int = 1, on_progress: Any = None) -> ConversationReport:
    """Score every conversation (see the module docstring); results in input order.

    A judge failure raises JudgeFailed as `evaluate_dataset` does; the turn scoring runs first."""
    start = time.perf_counter()
    turn_metrics, conv_metrics = split_metrics(evaluator.metrics)
    turn_eval, conv_eval = copy.copy(evaluator), copy.copy(evaluator)
    turn_eval.metrics, conv_eval.metrics = turn_metrics, conv_metrics
    plan: List[Tuple[int, Exchange, EvalSample]] = []
    for c, conv in enumerate(conversations):
        for n, ex in enumerate((e for e in conv.exchanges() if e.reply is not None), 1):
            plan.append((c, ex, turn_sample(conv, ex, n, evaluator.language)))
    asked = [p for p in plan if not (p[1].reply and p[1].reply.not_asked)]
    turn_report = turn_eval.evaluate_dataset([s for _, _, s in asked], max_workers=max_workers,
                                             on_progress=on_progress) if asked else EvalReport()
    by_id = {r.sample_id: r for r in turn_report.results}
    conv_report = conv_eval.evaluate_dataset([conversation_sample(c) for c in conversations],
                                             max_workers=max_workers)
    results = []
    for c, conv in enumerate(conversations):
        turns = [TurnResult(ex.reply_index or 0, ex.user_index, by_id.get(s.sample_id) or _not_asked(s, turn_metrics))
                 for i, ex, s in plan if i == c]
        results.append(_combine(conv, turns, conv_report.results[c], turn_metrics))
    usage = {k: turn_report.usage.get(k, 0) + conv_report.usage.get(k, 0)
             for k in set(turn_report.usage) | set(conv_report.usage)
             if isinstance(turn_report.usage.get(k, 0), (int, float)) and isinstance(conv_report.usage.get(k, 0), (int, float))}
    names = merged_order(t.result.scores for r in results for t in r.turns)
    return ConversationReport(results=list(results), total_time=time.perf_counter() - start, usage=usage,
                              turn_metrics=names)


def _combine(conv: Conversation, turns: List[TurnResult], whole: EvalResult,
             turn_metrics: Sequence[Metric]) -> ConversationResult:
    results = [t.result for t in turns]
    scores: Dict[str, MetricScore] = {}
    for name in merged_order(r.scores for r in results):
        mean = _turn_mean(name, results)
        if mean is not None:
            scores[name] = mean
    if any("answer_relevancy" in r.scores for r in results):
        scores["conversation_relevancy"] = conversation_relevancy(
            [r.scores.get("answer_relevancy") for r in results], METHOD_TURNS)
    scores.update(whole.scores)
    sample = whole.sample if isinstance(whole.sample, ConversationSample) else conversation_sample(conv)
    if conv.first_error():  # after scoring: a failed turn leaves the rest of the conversation scorable
        sample = dataclasses.replace(sample, target_error=conv.first_error())
    elapsed = whole.elapsed_sec + sum(r.elapsed_sec for r in results)
    return ConversationResult(conv, scores, turns, sample, elapsed)
