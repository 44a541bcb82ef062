"""Agent metrics: did the agent call the tools it should have, and did it get the task done?

    tool_call_recall     rule: share of the expected tools that were called at least once
    tool_call_precision  rule: share of the calls that went to an expected tool
    task_completion      judged: did the final answer accomplish what the question asked, given
                         the steps taken; a heuristic stands in offline and when the judge fails

All three are registry entries (builtin.py lists them) and appear only on agent rows: the rules
need `expected_tools`, task completion a row with tool calls or expected tools. Tool names are
compared trimmed and case-insensitively; the reasoning names the missing and the unexpected tools.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence

from ..model import METHOD_RULE, METHOD_SKIPPED, EvalSample, MetricScore
from ..text import analyse, content_words
from .heuristics import HeuristicScore, answer_type_match, is_evasive
from .metric import RULE, Metric, advice
from .units import spell_units
from .prompts import GUARD_AR, GUARD_EN, JSON_ONLY_AR, JSON_ONLY_EN, fenced

# The judge's instructions: one call a sample. The steps are shown so that an answer claiming a
# result no step produced can be marked as not accomplished.
TASK_COMPLETION_EN = """Decide whether the agent's FINAL ANSWER accomplishes what the QUESTION asked, given the STEPS
it took (each tool, its arguments and its output). 1.0: the task is fully done and the answer
reports it; 0.5: partly done; 0.0: not done, refused, or the answer claims results no step produced.
{guard}
{json_only}
{{"score": <0.0-1.0>, "reasoning": "<one sentence naming what was or was not done>"}}

{data}"""
TASK_COMPLETION_AR = """قرّر هل تُنجز الإجابة النهائية للوكيل ما طلبه السؤال، في ضوء الخطوات التي نفّذها (كل أداة
ومُدخلاتها ومُخرجاتها). 1.0: أُنجزت المهمة كاملةً وذكرتها الإجابة؛ 0.5: أُنجز جزء منها؛ 0.0: لم تُنجز، أو رفض
الوكيل، أو ادّعت الإجابة نتائج لم تُنتجها أي خطوة.
{guard}
{json_only}
{{"score": <من 0.0 إلى 1.0>, "reasoning": "<جملة واحدة تذكر ما أُنجز وما لم يُنجز>"}}

{data}"""
_HEADINGS = {"en": ("QUESTION", "STEPS", "FINAL ANSWER"), "ar": ("السؤال", "الخطوات", "الإجابة النهائية")}
NOT_AGENT = "Not an agent sample: no tool calls and no expected tools."
_OUTPUT_CHARS = 600  # per step shown to the judge: enough to see a result, cheap in tokens
_ERROR_WORDS = ("error", "exception", "traceback", "failed", "not found")


def _norm(name: Any) -> str:
    return str(name).strip().casefold()


def called_names(sample: EvalSample) -> List[str]:
    return [str(call.get("name", "")) for call in sample.tool_calls]


def tool_call_recall(calls: List[str], expected: List[str]) -> MetricScore:
    """Share of expected tools called at least once; reasoning names the missing ones."""
    made = {_norm(c) for c in calls}
    missing = [e for e in expected if _norm(e) not in made]
    return _share("tool_call_recall", expected, missing, "expected tools were called", "missing")


def tool_call_precision(calls: List[str], expected: List[str]) -> MetricScore:
    """Share of calls that went to an expected tool; skipped when no tool was called."""
    if not calls:
        return MetricScore("tool_call_precision", 0.0, "No tool was called.", skipped=True, method=METHOD_SKIPPED)
    wanted = {_norm(e) for e in expected}
    unexpected = [c for c in calls if _norm(c) not in wanted]
    return _share("tool_call_precision", calls, unexpected, "tool calls were to expected tools", "unexpected")


def _share(name: str, items: List[str], off: List[str], what: str, off_label: str) -> MetricScore:
    """The share of `items` not in `off`, its reasoning naming the ones that are (each once)."""
    good = len(items) - len(off)
    reasoning = f"{good}/{len(items)} {what}"
    reasoning += f"; {off_label}: {', '.join(dict.fromkeys(off))}." if off else "."
    return MetricScore(name, round(good / len(items), 4), reasoning, method=METHOD_RULE)


def steps_text(calls: List[Dict[str, Any]]) -> str:
    """The trajectory as numbered lines: tool, arguments, (truncated) output."""
    lines = []
    for i, call in enumerate(calls, 1):
        args = json.dumps(call.get("arguments"), ensure_ascii=False, default=str)
        output = call.get("output")
        shown = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False, default=str)
        lines.append(f"({i}) {call.get('name')}({args}) -> {shown[:_OUTPUT_CHARS]}")
    return "\n".join(lines) or "(no tool was called)"


# "How far/long/old/often…" asks for a quantity of one kind: an answer giving a number of another
# kind (a price for "how far") has not given it. The unit words, as `units.spell_units` writes them.
_ASKED_KIND = re.compile(r"\bhow (far|long|old|often)\b", re.IGNORECASE)
_KIND_WORDS = {
    "far": r"kilometres?|miles?|metres?|yards?|feet|foot|km|mi",
    "long": r"seconds?|minutes?|hours?|days?|weeks?|months?|years?|nights?|hrs?|mins?|"
            r"kilometres?|miles?|metres?|centimetres?|millimetres?|feet|foot|inch(?:es)?",
    "old": r"years?|months?|weeks?|days?|old|age|aged?",
    "often": r"times?|daily|weekly|monthly|yearly|annually|every|each|once|twice|hourly|per",
}
KIND_MISSING_CREDIT = 0.4
SHAPE_COVERAGE = 0.8
_QUESTION_WORDS = frozenset(content_words("far long old often"))


def _kind_missing(question: str, answer: str) -> Optional[str]:
    """The kind of quantity the question asks for ("far") when the answer gives none of it, else None."""
    asked = _ASKED_KIND.search(question or "")
    if not asked:
        return None
    kind = asked.group(1).lower()
    found = re.search(rf"\b(?:{_KIND_WORDS[kind]})\b", spell_units(answer), re.IGNORECASE)
    return None if found else kind


def task_completion_heuristic(sample: EvalSample, lang: str = "en", kind: str = "") -> HeuristicScore:
    """Offline estimate: an answer that is not evasive, takes up the question and gives what it asks
    for, after steps that did not fail.

    score = coverage x kind x steps: coverage is the share of the question's content words the
    final answer takes up (the tool outputs are not read: a retrieved passage that repeats the
    question's words says nothing of whether the answer addressed it); kind is KIND_MISSING_CREDIT
    when a "how far/long/old/often" question gets no quantity of that kind, else 1, and an answer of
    the shape the question asks for (a distance for "how far", yes/no, a name) has coverage at least
    SHAPE_COVERAGE, as a terse right answer ("About 60 km.") repeats few of its words; steps is
    0.6 + 0.4 x the share of tool calls whose output is not an error (1 when no tool was called).
    """
    answer = (sample.answer or "").strip()
    if not answer or is_evasive(answer):
        return HeuristicScore(0.0, "The final answer is empty or declines the task.")
    asked = set(content_words(sample.question)) - _QUESTION_WORDS  # "far" in "how far" asks, it is not a topic
    said = set(content_words(answer))
    coverage = len(asked & said) / len(asked) if asked else 1.0
    reasoning = f"the final answer takes up {coverage:.0%} of the question's content words"
    unaddressed = sorted(asked - said)
    if unaddressed:
        reasoning += f" (not: {', '.join(map(analyse(sample.question).as_written, unaddressed[:4]))})"
    missing = _kind_missing(sample.question, answer)
    if missing:
        reasoning += f"; the question asks how {missing} and the answer gives no such quantity"
    elif coverage < SHAPE_COVERAGE and answer_type_match(sample.question, answer) > 0:
        coverage = SHAPE_COVERAGE
        reasoning += f", but gives the kind of answer it asks for (counted as {SHAPE_COVERAGE:.0%})"
    failed = [c["name"] for c in sample.tool_calls if _looks_failed(c.get("output"))]
    ok_share = 1 - len(failed) / len(sample.tool_calls) if sample.tool_calls else 1.0
    score = coverage * (KIND_MISSING_CREDIT if missing else 1.0) * (0.6 + 0.4 * ok_share)
    reasoning += f"; {len(failed)} failed step(s)" + (f" ({', '.join(failed)})." if failed else ".")
    return HeuristicScore(round(score, 4), reasoning[0].upper() + reasoning[1:])


def _looks_failed(output: Any) -> bool:
    if isinstance(output, dict) and ("error" in output or "exception" in output):
        return True
    text = output if isinstance(output, str) else ""
    return any(word in text[:200].casefold() for word in _ERROR_WORDS)


@dataclass(frozen=True)
class TaskCompletionMetric(Metric):
    """A judged metric whose judge sees the agent's steps, and that applies to agent rows only."""

    def skip_reason(self, sample: EvalSample) -> Optional[str]:
        if not sample.tool_calls and not sample.expected_tools:
            return NOT_AGENT
        return super().skip_reason(sample)

    def prompt(self, sample: EvalSample, lang: str, fields: Optional[Sequence[str]] = None) -> str:
        # Its own layout (the steps / the transcript): `fields` of the shared prefix do not apply.
        lang = lang if lang in self.prompts else "en"
        question, steps, answer = (f"[{h}]" for h in _HEADINGS[lang])
        data = fenced([question, sample.question or "", steps, steps_text(sample.tool_calls), answer, sample.answer or ""])
        guard, json_only = (GUARD_AR, JSON_ONLY_AR) if lang == "ar" else (GUARD_EN, JSON_ONLY_EN)
        return self.prompts[lang].format(guard=guard, json_only=json_only, data=data)



def _tool_rule(name: str, measure: Callable[[List[str], List[str]], MetricScore], why: str, *fixes: str,
               description: str) -> Metric:
    """A rule over the tools the agent called against the tools the row expects."""
    return Metric(name, kind=RULE, needs=("expected_tools",),
                  rule=lambda s: measure(called_names(s), s.expected_tools or []),
                  advice=advice(why, *fixes), description=description, optional=True,
                  default=True)  # optional: only rows with tool calls or expected tools show it


TOOL_CALL_RECALL = _tool_rule(
    "tool_call_recall", tool_call_recall, "The agent skips tools it needs for these questions.",
    "Describe each tool's purpose more clearly in its schema and the system prompt.",
    "Check the agent's stopping rule: it may answer before calling the tools it needs.",
    description="Share of the expected tools that the agent called.")

TOOL_CALL_PRECISION = _tool_rule(
    "tool_call_precision", tool_call_precision, "The agent calls tools these questions do not need.",
    "Narrow the tool descriptions so they say when not to use each tool.",
    "Limit the tools offered for each kind of question.",
    description="Share of the agent's tool calls that went to an expected tool.")

TASK_COMPLETION = TaskCompletionMetric(
    "task_completion", zero_if_empty=("answer",), prompts={"en": TASK_COMPLETION_EN, "ar": TASK_COMPLETION_AR},
    shows=("question", "answer"), heuristic=task_completion_heuristic, languages=("en", "ar"),
    advice=advice("The agent's final answers do not accomplish what was asked.",
                   "Read the trajectories of the lowest rows: a failing tool, or an answer that ignores its output.",
                   "Tell the agent to report the result of its steps, and to say so when a step failed."),
    description="Whether the final answer accomplishes the task, given the steps taken (judged).",
    optional=True,
    default=True,  # optional: only rows with tool calls or expected tools show it
)

AGENT_METRICS = (TOOL_CALL_RECALL, TOOL_CALL_PRECISION, TASK_COMPLETION)
