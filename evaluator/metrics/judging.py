"""Asking the judge about one metric of one sample: one call per repeat, each parsed on its own.

A judgement is data, success or failure alike: the score (or why there is none), the raw
reply and what the judge reported about the call (retries, token probabilities). scoring.py
turns a sample's judgements into its MetricScore.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from ..judges.base import accepts, call_info, judge_settings, report_unusable
from ..judges.replies import ENDLESS, TOO_LARGE, bad_reply_kind, strip_thinking
from ..judges.replies import TRUNCATED as TRUNCATED_KIND
from ..safetext import safe
from .geval import weighted_score
from .metric import Metric
from .parsing import ParsedReply, load_json_object

TOP_LOGPROBS = 5  # alternatives asked per token: enough to cover the neighbours of a 1-5 score
UNAVAILABLE = "LLM unavailable — heuristic used."
UNPARSEABLE = "Judge reply had no usable score — heuristic used."
TRUNCATED = "Judge reply was cut off mid-JSON (truncated) — heuristic used."
EMPTY_REPLY = "The judge returned an empty reply."
ENDLESS_REPLY = ("The judge thought until its completion cap and gave no answer (thinking never ended): "
                 "raise --judge-max-tokens or use a model that does not think.")
TOO_LARGE_WORDS = "ragmeter reads"  # in bounded.ReplyTooLarge's message: "more than the 8 MiB ragmeter reads"
# The one repair attempt after a reply with no score: the same prompt, and what went wrong.
REPAIR = {"en": "\n\nYour previous reply could not be read ({why}). Reply again with JSON only, exactly in the "
                "shape above, and keep every text short.",
          "ar": "\n\nتعذّرت قراءة ردّك السابق ({why}). أجب من جديد بـJSON فقط، بالشكل المطلوب أعلاه تمامًا، "
                "وبنصوص قصيرة."}
NO_SCORE_ERROR = "No JSON score or number in the judge reply."
TRUNCATED_ERROR = ("No JSON score: the reply's JSON is cut off before its end (truncated; a max_tokens too low?), "
                   "so any score in what survived is not used.")


@dataclass
class Judgement:
    """One judge call for one metric: a 0-1 score, or `failure` (UNAVAILABLE/UNPARSEABLE) and `error`."""

    score: Optional[float] = None
    parsed: ParsedReply = field(default_factory=lambda: ParsedReply(None))
    reply: Optional[str] = None
    info: dict = field(default_factory=dict)
    how: str = "unparsed"  # how the reply became the score: parsing's `how`, or "logprobs"
    failure: str = ""
    error: str = ""


def options(metric: Optional[Metric], judge: Any, repeat: int = 0, *, max_tokens: int = 0,
            schema: Optional[dict] = None) -> Dict[str, Any]:
    """The generate() options this judge takes for one call: the repeat index, token probabilities, the
    completion cap and the reply schema (the metric's own, or those given for a combined call)."""
    chosen: Dict[str, Any] = {}
    if repeat and accepts(judge, "repeat"):
        chosen["repeat"] = repeat
    if metric is not None and metric.logprobs and accepts(judge, "top_logprobs"):
        chosen["top_logprobs"] = TOP_LOGPROBS
    cap = max_tokens or (metric.max_tokens if metric is not None else 0)
    if cap and accepts(judge, "max_tokens"):
        chosen["max_tokens"] = cap
    shape = schema if schema is not None else (metric.reply_schema if metric is not None else None)
    if shape and accepts(judge, "schema"):
        chosen["schema"] = dict(shape)
    return chosen


def count_reply(judge: Any, bad: str = "", repair: Optional[bool] = None) -> None:
    """Tell a counting judge (ResilientJudge.count_reply) what its reply was; a no-op for the others."""
    count = getattr(judge, "count_reply", None)
    if callable(count):
        count(bad, repair)


def call(judge: Any, prompt: str, chosen: Dict[str, Any]) -> Tuple[Optional[str], dict, str]:
    """(reply or None, call info, why it failed or ""): one judge call, whose failure is data. A reasoning
    model's `<think>` is cut off here whatever the judge (OpenAIJudge has already counted it apart)."""
    try:
        reply = judge.generate(prompt, **chosen)
    except Exception as exc:  # any judge failure is recorded, never aborts the run
        if TOO_LARGE_WORDS in str(exc):  # bounded.ReplyTooLarge, as judges/openai.py words it
            count_reply(judge, TOO_LARGE)
        return None, call_info(judge), f"{type(exc).__name__}: {exc}"
    info = call_info(judge)
    endless = bool(info.get("endless_thinking"))
    if isinstance(reply, str):  # any judge's: SQLite and the exports cannot store these (U+FFFD shows where)
        visible = strip_thinking(safe(reply))
        reply, endless = visible.text, endless or visible.endless
    if not (reply or "").strip():
        why = ENDLESS_REPLY if endless else EMPTY_REPLY
        count_reply(judge, ENDLESS if endless else bad_reply_kind(reply))
        report_unusable(judge, why, not_json=True)
        return reply, info, why
    return reply, info, ""


def ask(metric: Metric, judge: Any, prompt: str, repeat: int = 0) -> Judgement:
    """One judgement; `repeat` > 0 marks a repeated one (its own cache entry, for judges that cache).
    A reply with no score (empty, prose, HTML, the wrong JSON, cut off) gets one repair attempt."""
    first = _ask_once(metric, judge, prompt, repeat)
    if first.score is not None or not _repairable(first, judge):
        return first
    repaired = _ask_once(metric, judge, repair_prompt(prompt, first), repeat)
    count_reply(judge, repair=repaired.score is not None)
    if repaired.score is None:
        return repaired if repaired.error else first
    repaired.info = {**repaired.info, "repaired": True}
    return repaired


def _ask_once(metric: Metric, judge: Any, prompt: str, repeat: int) -> Judgement:
    reply, info, error = call(judge, prompt, options(metric, judge, repeat))
    if error:
        return Judgement(reply=reply, info=info, failure=UNAVAILABLE, error=error)
    return read_reply(metric, str(reply), info, judge)


# The JSON modes in which the server held the reply to the metric's own shape (judges/openai.py).
CONSTRAINED = ("grammar", "schema")


def _repairable(judgement: Judgement, judge: Any = None) -> bool:
    """A reply came back with no score where asking again can help: the server constrains replies to the
    metric's shape (a llama.cpp grammar, json_schema), so the failure was the cap or a slip, not a model
    that ignores the format; or the model thought until the cap. A judge that failed outright, or one
    that wrote prose with no structured output to hold it, is not asked again: a second free-form ask
    rarely helps, doubles its calls, and the run's early stop counts on one call per metric. A reply cut off
    at a cap the user fixed for every call (--judge-max-tokens) would be cut off there again: not repaired
    (the exam's advice says to raise it)."""
    if judgement.error == ENDLESS_REPLY:
        return True
    if judgement.failure == TRUNCATED and judge_settings(judge).get("max_tokens"):
        return False
    constrained = judgement.info.get("json_mode") in CONSTRAINED
    return constrained and (judgement.failure in (UNPARSEABLE, TRUNCATED) or judgement.error == EMPTY_REPLY)


def repair_prompt(prompt: str, failed: Judgement) -> str:
    """The prompt again, and why its reply could not be read."""
    lang = "ar" if "بياناتٌ للتقييم" in prompt[:400] else "en"
    why = failed.error.split(".")[0] if failed.error else "no score"
    return prompt + REPAIR[lang].format(why=why[:160])


def read_reply(metric: Metric, reply: str, info: dict, judge: Any = None) -> Judgement:
    """The judgement in `reply` for `metric`: its verdict reader's score (or G-Eval weighting), else
    unusable (reported to `judge`'s health check when given)."""
    parsed = metric.parse(reply)
    if parsed.score is None:
        if judge is not None:
            count_reply(judge, TRUNCATED_KIND if parsed.how == "truncated" else
                        bad_reply_kind(reply, json_found=load_json_object(reply) is not None))
        return _unusable(judge, parsed, reply, info)
    if metric.logprobs and parsed.how != "verdicts":
        weighted = weighted_score(info.get("logprobs"), parsed.stated, metric.scale)
        if weighted is not None:
            return Judgement(weighted, parsed, reply, info, "logprobs")
    return Judgement(parsed.score, parsed, reply, info, parsed.how)


def _unusable(judge: Any, parsed: ParsedReply, reply: str, info: dict) -> Judgement:
    """A reply with no score: a failed call for the run's health check, and data for the row."""
    truncated = parsed.how == "truncated"
    error = TRUNCATED_ERROR if truncated else NO_SCORE_ERROR
    if judge is not None:
        report_unusable(judge, f"{error} Reply: {_excerpt(reply)}",
                        not_json=not truncated and load_json_object(reply) is None)
    return Judgement(parsed=parsed, reply=reply, info=info, failure=TRUNCATED if truncated else UNPARSEABLE,
                     error=error)


def _excerpt(reply: str, limit: int = 80) -> str:
    text = " ".join(reply.split())
    return repr(text if len(text) <= limit else text[:limit] + "…")


def ask_repeatedly(metric: Metric, judge: Any, prompt: str, repeats: int) -> List[Judgement]:
    return [ask(metric, judge, prompt, i) for i in range(max(1, repeats))]


def retries(judgements: List[Judgement]) -> int:
    return sum(int(j.info.get("retries") or 0) for j in judgements)
