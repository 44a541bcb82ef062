"""Agent metrics: did the agent call the tools it should have, and did it get the task done?

    tool_call_recall     rule: share of the expected tools that were called at least once
    tool_call_precision  rule: share of the calls that went to an expected tool
    task_completion      judged: did the final answer accomplish what the question asked, given
                         the steps taken; with a heuristic for fallback and offline runs

Tool names are compared trimmed and case-insensitively. The reasoning names the missing and the
unexpected tools, so a score of 0.5 says which half went wrong.
"""
from __future__ import annotations

import json
from typing import Any, Dict, List, Optional

from ..model import METHOD_BLEND, METHOD_FALLBACK, METHOD_OFFLINE, METHOD_RULE, METHOD_SKIPPED, EvalSample, MetricScore
from ..text import content_words
from .heuristics import is_evasive
from .parsing import parse_reply
from .scoring import skipped_for_target
from .prompts import DATA_CLOSE, DATA_OPEN, _GUARD_EN, _JSON_ONLY_EN

# The judge's instructions. One call per sample; the steps are shown so an answer that claims a
# result no step produced can be marked as not accomplished.
TASK_COMPLETION_EN = """Decide whether the agent's FINAL ANSWER accomplishes what the QUESTION asked, given the STEPS
it took (each tool, its arguments and its output). 1.0: the task is fully done and the answer
reports it; 0.5: partly done; 0.0: not done, refused, or the answer claims results no step produced.
{guard}
{json_only}
{{"score": <0.0-1.0>, "reasoning": "<one sentence naming what was or was not done>"}}

{data}"""
_OUTPUT_CHARS = 600  # per step shown to the judge: enough to see a result, cheap in tokens
_ERROR_WORDS = ("error", "exception", "traceback", "failed", "not found")


def _norm(name: str) -> str:
    return str(name).strip().casefold()


def called_names(sample: EvalSample) -> List[str]:
    return [str(call.get("name", "")) for call in sample.tool_calls]


def tool_call_recall(calls: List[str], expected: List[str]) -> MetricScore:
    """Share of expected tools called at least once; reasoning names the missing ones."""
    made = {_norm(c) for c in calls}
    missing = [e for e in expected if _norm(e) not in made]
    found = len(expected) - len(missing)
    reasoning = f"{found}/{len(expected)} expected tools were called"
    reasoning += f"; missing: {', '.join(missing)}." if missing else "."
    return MetricScore("tool_call_recall", round(found / len(expected), 4), reasoning, method=METHOD_RULE)


def tool_call_precision(calls: List[str], expected: List[str]) -> MetricScore:
    """Share of calls that went to an expected tool; skipped when no tool was called."""
    if not calls:
        return MetricScore("tool_call_precision", 0.0, "No tool was called.", skipped=True, method=METHOD_SKIPPED)
    wanted = {_norm(e) for e in expected}
    unexpected = [c for c in calls if _norm(c) not in wanted]
    good = len(calls) - len(unexpected)
    reasoning = f"{good}/{len(calls)} tool calls were to expected tools"
    reasoning += f"; unexpected: {', '.join(dict.fromkeys(unexpected))}." if unexpected else "."
    return MetricScore("tool_call_precision", round(good / len(calls), 4), reasoning, method=METHOD_RULE)


def steps_text(calls: List[Dict[str, Any]]) -> str:
    """The trajectory as numbered lines: tool, arguments, (truncated) output."""
    lines = []
    for i, call in enumerate(calls, 1):
        args = json.dumps(call.get("arguments"), ensure_ascii=False, default=str)
        output = call.get("output")
        shown = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False, default=str)
        lines.append(f"({i}) {call.get('name')}({args}) -> {shown[:_OUTPUT_CHARS]}")
    return "\n".join(lines) or "(no tool was called)"


def task_completion_prompt(sample: EvalSample) -> str:
    clean = lambda text: (text or "").replace(DATA_OPEN, "").replace(DATA_CLOSE, "")  # noqa: E731
    data = "\n".join([DATA_OPEN, "[QUESTION]", clean(sample.question), "[STEPS]", clean(steps_text(sample.tool_calls)),
                      "[FINAL ANSWER]", clean(sample.answer), DATA_CLOSE])
    return TASK_COMPLETION_EN.format(guard=_GUARD_EN, json_only=_JSON_ONLY_EN, data=data)


def task_completion_heuristic(sample: EvalSample) -> MetricScore:
    """Offline estimate: an answer that is not evasive, on the question's words, after steps that did not fail.

    score = 0 for an empty or evasive answer, else 0.5 * (share of the question's content words in
    the answer or the tool outputs) + 0.5 * (share of tool calls whose output is not an error;
    1 when no tool was called).
    """
    answer = (sample.answer or "").strip()
    if not answer or is_evasive(answer):
        return MetricScore("task_completion", 0.0, "The final answer is empty or declines the task.")
    asked = set(content_words(sample.question))
    seen = set(content_words(answer + " " + steps_text(sample.tool_calls)))
    coverage = len(asked & seen) / len(asked) if asked else 1.0
    failed = [c["name"] for c in sample.tool_calls if _looks_failed(c.get("output"))]
    ok_share = 1 - len(failed) / len(sample.tool_calls) if sample.tool_calls else 1.0
    reasoning = f"{coverage:.0%} of the question's words are addressed; {len(failed)} failed step(s)"
    reasoning += f" ({', '.join(failed)})." if failed else "."
    return MetricScore("task_completion", round(0.5 * coverage + 0.5 * ok_share, 4), reasoning)


def _looks_failed(output: Any) -> bool:
    if isinstance(output, dict) and ("error" in output or "exception" in output):
        return True
    text = output if isinstance(output, str) else ""
    return any(word in text[:200].casefold() for word in _ERROR_WORDS)


def task_completion(sample: EvalSample, judge: Any) -> MetricScore:
    """One judge call blended 70/30 with the heuristic; the heuristic alone offline or when the judge fails."""
    h = task_completion_heuristic(sample)
    if getattr(judge, "offline", False):
        return MetricScore("task_completion", h.score, f"Offline heuristic: {h.reasoning}", method=METHOD_OFFLINE,
                           heuristic_score=h.score)
    try:
        reply = judge.generate(task_completion_prompt(sample))
    except Exception as exc:  # a judge failure degrades to the heuristic, visibly
        return _fallback(h, f"{type(exc).__name__}: {exc}", None)
    parsed = parse_reply(reply or "", "task_completion")
    if parsed.score is None:
        return _fallback(h, "No JSON score or number in the judge reply.", reply)
    return MetricScore("task_completion", round(0.7 * parsed.score + 0.3 * h.score, 4),
                       parsed.reasoning or f"Judge scored {parsed.score:.3f}.", method=METHOD_BLEND,
                       llm_score=round(parsed.score, 4), heuristic_score=h.score, raw_reply=reply)


def _fallback(h: MetricScore, error: str, reply: Optional[str]) -> MetricScore:
    return MetricScore("task_completion", h.score, f"Judge unavailable — heuristic used. {h.reasoning}",
                       method=METHOD_FALLBACK, heuristic_score=h.score, raw_reply=reply, error=error)


def agent_scores(sample: EvalSample, judge: Any) -> Dict[str, MetricScore]:
    """The agent metrics this sample supports: none unless it has tool calls or expected tools."""
    if sample.target_error:
        # A failed call has no steps: only rows that expected tools are agent rows.
        names = ["tool_call_recall", "tool_call_precision", "task_completion"]
        return skipped_for_target(names if sample.expected_tools else [], sample)
    scores: Dict[str, MetricScore] = {}
    if sample.expected_tools:
        calls = called_names(sample)
        scores["tool_call_recall"] = tool_call_recall(calls, sample.expected_tools)
        scores["tool_call_precision"] = tool_call_precision(calls, sample.expected_tools)
    if sample.tool_calls or sample.expected_tools:
        scores["task_completion"] = task_completion(sample, judge)
    return scores
