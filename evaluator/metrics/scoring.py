"""Scoring one metric of one sample: heuristic, one judge call, parse, blend — or a visible fallback."""
from __future__ import annotations

import os
import statistics
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from ..engines.pool import Pool
from ..judges.base import caches_prefix, is_offline
from .heuristic_sets import DEFAULT_HEURISTICS
from ..model import (
    METHOD_BLEND,
    METHOD_EMPTY,
    METHOD_FALLBACK,
    METHOD_FLAGGED,
    METHOD_LLM,
    METHOD_OFFLINE,
    METHOD_SKIPPED,
    METHOD_UNSCORED,
    EvalSample,
    MetricScore,
)
from .judging import UNAVAILABLE, UNPARSEABLE, Judgement, ask_repeatedly, retries  # noqa: F401 (UNAVAILABLE, UNPARSEABLE: public)
from .combined import (
    AUTO,
    COMBINED,
    GROUPED,
    SEPARATE,
    ask_combined_repeatedly,
    call_groups,
    combined_prompt,
    resolved_mode,
)
from .metric import MISSING, Metric
from .prompts import prefix_fields, shared_prefix
from .registry import get_metric
from .rules import expected_doc_recall, keyword_coverage  # noqa: F401  (their home before the registry)

LLM_WEIGHT = 0.7
HEURISTIC_WEIGHT = 0.3
NEEDS_JUDGE = "Needs a judge: this metric has no offline heuristic."
NO_SCORE = "No score: the judge failed and this metric has no heuristic to fall back on."
# Skip reasons that a failed target call explains (it returned no answer, contexts or tool calls).
_TARGET_OUTPUTS = frozenset(MISSING[f] for f in ("answer", "contexts", "tool_calls"))


def blend(llm: float, heuristic: float) -> float:
    return round(LLM_WEIGHT * llm + HEURISTIC_WEIGHT * heuristic, 4)


def _metric(metric: Union[str, Metric]) -> Metric:
    return metric if isinstance(metric, Metric) else get_metric(metric)


def skip_reason(metric: Union[str, Metric], sample: EvalSample) -> Optional[str]:
    """Why `metric` cannot be computed for `sample`, or None when it can."""
    m = _metric(metric)
    return target_reason(m, sample) or m.skip_reason(sample)


def target_reason(m: Metric, sample: EvalSample) -> Optional[str]:
    """Why a target's sample cannot be scored on `m`: the call failed, or a bare model retrieves nothing."""
    if sample.target_error:
        return f"The target call failed, so there is no answer to score: {sample.target_error}"
    if "contexts" in m.shows and not sample.contexts and sample.no_contexts_reason:
        return sample.no_contexts_reason
    if sample.no_answer_reason and not sample.answer and m.reads("answer"):
        return sample.no_answer_reason  # no answer at all is N/A; an answer that is "" scores 0
    return None


def _applies(m: Metric, sample: EvalSample) -> bool:
    """Whether `m` belongs in this row's result: a plain judged metric always does; a rule or optional
    one when the sample has its inputs, or lacks only what a target would have returned."""
    if m.judged and not m.optional:
        return True
    reason = m.skip_reason(sample)
    return reason is None or (bool(sample.target_error) and reason in _TARGET_OUTPUTS)


def score_metric(metric: Union[str, Metric], sample: EvalSample, judge: Any, lang: str,
                 heuristics: str = DEFAULT_HEURISTICS, repeats: int = 1) -> MetricScore:
    """Score one judged metric (a name or a Metric) for `sample`: one judge call per repeat.

    The judge's score is the mean over the repeats that gave one (`llm_scores` keeps each,
    `llm_std` their spread), blended 70/30 with the heuristic when the metric has one. When no
    repeat gave a score, the heuristic stands in (visibly), or, without one, the metric is unscored.
    """
    m = _metric(metric)
    reason = target_reason(m, sample)
    if reason:
        return MetricScore(m.name, 0.0, reason, skipped=True, method=METHOD_SKIPPED)
    return _score_judged(m, sample, judge, lang, heuristics, repeats)


def _score_judged(m: Metric, sample: EvalSample, judge: Any, lang: str, heuristics: str,
                  repeats: int) -> MetricScore:
    """`score_metric` once the target's failure is ruled out (score_sample has checked it)."""
    done, h = _without_judge(m, sample, judge, lang, heuristics)
    if done is not None:
        return done
    return _judged(_Ask(m, h), sample, judge, lang, repeats, None)


@dataclass(frozen=True)
class _Ask:
    """A judged metric of one sample that needs the judge: the metric and its heuristic (or None)."""

    metric: Metric
    heuristic: Any


def _without_judge(m: Metric, sample: EvalSample, judge: Any, lang: str,
                   heuristics: str) -> Tuple[Optional[MetricScore], Any]:
    """(the score, when it needs no judge call: skipped, empty, offline; else None) and the heuristic."""
    reason = m.skip_reason(sample)
    if reason:
        return MetricScore(m.name, 0.0, reason, skipped=True, method=METHOD_SKIPPED), None
    empty = m.zero_reason(sample)
    if empty:  # nothing to judge: 0 without a judge call
        return MetricScore(m.name, 0.0, empty, method=METHOD_EMPTY, heuristic_score=0.0), None
    h = m.heuristic(sample, lang, heuristics) if m.heuristic is not None else None
    if is_offline(judge):
        if h is None:
            return MetricScore(m.name, 0.0, NEEDS_JUDGE, skipped=True, method=METHOD_SKIPPED), None
        return MetricScore(m.name, round(h.score, 4), f"Offline heuristic: {h.reasoning}",
                           method=METHOD_OFFLINE, heuristic_score=h.score), h
    return None, h


def _judged(ask: _Ask, sample: EvalSample, judge: Any, lang: str, repeats: int,
            fields: Optional[Tuple[str, ...]]) -> MetricScore:
    """One metric's judge calls (one per repeat) and the score they give, or its visible fallback."""
    m = ask.metric
    prompt = m.prompt(sample, lang, fields) if fields and m.shares_prefix else m.prompt(sample, lang)
    return from_judgements(m.name, ask.heuristic, ask_repeatedly(m, judge, prompt, repeats))


def from_judgements(name: str, h: Any, judgements: List[Judgement]) -> MetricScore:
    """A metric's score from its judgements: their mean (blended with the heuristic `h`), or the fallback."""
    good = [j for j in judgements if j.score is not None]
    if not good:
        last = judgements[-1]
        return _fallback(name, h, last.failure, last.error, last.reply, {"retries": retries(judgements)})
    return _combined(name, h, good, judgements)


def _combined(name: str, h: Any, good: List[Judgement], judgements: List[Judgement]) -> MetricScore:
    values = [j.score for j in good if j.score is not None]
    llm = statistics.fmean(values)
    first = good[0]
    reasoning = first.parsed.reasoning or f"Judge scored {values[0]:.3f} ({first.how})."
    if len(judgements) > 1:
        reasoning += f" (mean of {len(good)} judgements: {', '.join(f'{v:.3f}' for v in values)})"
    failed = [j for j in judgements if j.score is None]
    if failed:
        reasoning += f" ({len(failed)} of {len(judgements)} judge calls gave no score: {failed[0].error})"
    n = retries(judgements)
    if n:
        reasoning += f" (judge call succeeded after {n} retr{'y' if n == 1 else 'ies'})"
    # Without a heuristic to blend with (a rubric), the judge's score is the score.
    score, method = (round(llm, 4), METHOD_LLM) if h is None else (blend(llm, h.score), METHOD_BLEND)
    contradictions = [j.parsed.contradiction for j in good if j.parsed.contradiction]
    if contradictions:  # the verdicts' score stands, and says so where the score is shown
        reasoning = f"{contradictions[0]} {reasoning}"
        method = METHOD_FLAGGED
    return MetricScore(name, score, reasoning, method=method, llm_score=round(llm, 4),
                       heuristic_score=None if h is None else h.score, raw_reply=first.reply,
                       verdicts=first.parsed.verdicts,
                       llm_scores=[round(v, 4) for v in values] if len(judgements) > 1 else [],
                       llm_std=round(statistics.stdev(values), 4) if len(values) > 1 else None,
                       scored_from=",".join(dict.fromkeys(j.how for j in good)))


def score_sample(metrics: Iterable[Metric], sample: EvalSample, judge: Any, lang: str,
                 heuristics: str = DEFAULT_HEURISTICS, repeats: int = 1,
                 after_each: Optional[Callable[[], None]] = None, *,
                 parallel_calls: bool = False, judge_mode: str = AUTO) -> Dict[str, MetricScore]:
    """Every chosen metric's score for one sample, in the order chosen.

    A rule-based (or `optional`) metric whose inputs the sample lacks is left out (no keywords, no
    keyword coverage), as before the registry; a judged one is kept as skipped, with its reason. A
    sample whose target call failed keeps each metric it would have had, skipped with that failure.
    `after_each` runs after each judged metric's calls (the evaluator's judge-health check, which may raise).

    In the separate mode the judged prompts of a sample share one prefix (prompts.py): the first metric's
    call goes alone, so the server has the prefix cached before the others arrive; with `parallel_calls`
    the others then go together. The grouped mode asks the metrics that read the contexts in one call,
    the combined mode all of them (combined.py); `auto` is one of these two, by what the server reuses.
    """
    metrics = list(metrics)
    scores: Dict[str, Optional[MetricScore]] = {}
    asks: List[_Ask] = []
    for m in metrics:
        if not _applies(m, sample):
            continue  # a rule (or agent) metric without its inputs is left out, not shown as skipped
        reason = target_reason(m, sample)
        if reason:
            scores[m.name] = MetricScore(m.name, 0.0, reason, skipped=True, method=METHOD_SKIPPED)
        elif m.judged:
            scores[m.name], h = _without_judge(m, sample, judge, lang, heuristics)
            if scores[m.name] is None:
                asks.append(_Ask(m, h))
        elif m.rule is not None and m.skip_reason(sample) is None:
            scores[m.name] = m.rule(sample)
    fields = prefix_fields(*(m.shows for m in metrics if m.shares_prefix))
    mode = resolved_mode(judge_mode, judge) if asks else SEPARATE
    if mode == SEPARATE:
        if asks and caches_prefix(judge, _prefix_tokens(sample, fields)) is False:
            fields = ()  # a server known not to reuse the prefix: each prompt carries only its metric's fields
        scores.update(_ask_all(asks, sample, judge, lang, repeats, fields, after_each, parallel_calls))
    else:
        scores.update(score_together(asks, sample, judge, lang, repeats, mode, fields, after_each))
    return {name: score for name, score in scores.items() if score is not None}


def _prefix_tokens(sample: EvalSample, fields: Sequence[str]) -> int:
    """About how many tokens the shared data section of `fields` holds (characters / 4)."""
    sizes = {"question": len(sample.question or ""), "answer": len(sample.answer or ""),
             "contexts": sum(len(c) for c in sample.contexts or ()), "reference": len(sample.ground_truth or "")}
    return sum(sizes.get(f, 0) for f in fields) // 4 + 40


def _ask_all(asks: List[_Ask], sample: EvalSample, judge: Any, lang: str, repeats: int,
             fields: Tuple[str, ...], after_each: Optional[Callable[[], None]],
             parallel: bool) -> Dict[str, MetricScore]:
    """Each ask's score: the first alone (it fills the server's prompt cache), then the rest."""
    def one(ask: _Ask) -> MetricScore:
        return _judged(ask, sample, judge, lang, repeats, fields)

    done: Dict[str, MetricScore] = {}
    rest = asks[1:]
    if asks:
        done[asks[0].metric.name] = one(asks[0])
        if after_each is not None:
            after_each()
    if parallel and len(rest) > 1:
        with Pool(len(rest), "ragmeter-call") as pool:
            for ask, score in zip(rest, pool.map(one, rest)):
                done[ask.metric.name] = score
                if after_each is not None:
                    after_each()
        return done
    for ask in rest:
        done[ask.metric.name] = one(ask)
        if after_each is not None:
            after_each()
    return done


def score_together(asks: List[_Ask], sample: EvalSample, judge: Any, lang: str, repeats: int, mode: str,
                   fields: Tuple[str, ...], after_each: Optional[Callable[[], None]]) -> Dict[str, MetricScore]:
    """The grouped and combined modes: each call of `call_groups` in turn; a call for several metrics scores
    each from its own part of the reply. Combined calls share the prefix of every chosen metric's fields (the
    first call fills a server's prompt cache); grouped ones carry only what their metrics read."""
    by_metric = {id(a.metric): a for a in asks}
    done: Dict[str, MetricScore] = {}
    for group in call_groups([a.metric for a in asks], mode):
        shown = _call_fields(mode, group, fields)
        if len(group) == 1:
            done.update(_ask_all([by_metric[id(group[0])]], sample, judge, lang, repeats, shown, after_each, False))
            continue
        judgements = ask_combined_repeatedly(group, judge, combined_prompt(group, sample, lang, shown), repeats)
        done.update({m.name: from_judgements(m.name, by_metric[id(m)].heuristic, judgements[m.name]) for m in group})
        if after_each is not None:
            after_each()
    return done


def _call_fields(mode: str, group: Sequence[Metric], shared: Tuple[str, ...]) -> Tuple[str, ...]:
    """The data fields one call shows: the shared prefix's (separate, combined: a cache may reuse it), or in the
    grouped mode only what the call's own metrics read (no cache to fill)."""
    return prefix_fields(*(m.shows for m in group)) if mode == GROUPED else shared


def planned_prompts(judged: Sequence[Metric], sample: EvalSample, lang: str,
                    judge_mode: str = SEPARATE) -> Tuple[List[str], str]:
    """(the prompts one repeat of `sample` sends, in order; their shared prefix): what costs.py estimates.
    `auto` is estimated as grouped: with no judge asked, the server is taken to bill every token."""
    asked = [m for m in judged if target_reason(m, sample) is None and m.skip_reason(sample) is None
             and m.zero_reason(sample) is None]
    fields = prefix_fields(*(m.shows for m in judged if m.shares_prefix))
    prefix = shared_prefix(lang, fields, sample.question, sample.answer, sample.contexts, sample.ground_truth)
    mode = GROUPED if judge_mode == AUTO else judge_mode
    prompts = []
    for group in call_groups(asked, mode):
        shown = _call_fields(mode, group, fields)
        if len(group) > 1:
            prompts.append(combined_prompt(group, sample, lang, shown))
        else:
            prompts.append(group[0].prompt(sample, lang, shown) if group[0].shares_prefix else group[0].prompt(sample, lang))
    if mode == GROUPED:  # no prefix was shared on purpose: what the calls happen to begin with
        prefix = os.path.commonprefix(prompts) if len(prompts) > 1 else ""
    return prompts, prefix


def _fallback(metric: str, h: Any, reasoning: str, error: str, reply: Optional[str], info: dict) -> MetricScore:
    if info.get("retries") and "retries" not in error:  # OpenAIJudge's own message already counts them
        error += f" (after {info['retries']} retries)"
    if h is None:  # no heuristic: no number at all, and never in a mean
        return MetricScore(metric, 0.0, f"{NO_SCORE} {error}", skipped=True, method=METHOD_UNSCORED,
                           raw_reply=reply, error=error)
    return MetricScore(metric, round(h.score, 4), f"{reasoning} {h.reasoning}", method=METHOD_FALLBACK,
                       heuristic_score=h.score, raw_reply=reply, error=error)


def rule_scores(sample: EvalSample) -> dict:
    """The built-in rule-based metrics this sample supports (none without keywords/expected docs)."""
    return score_sample([get_metric("keyword_coverage"), get_metric("expected_doc_recall")], sample, None, "en")
