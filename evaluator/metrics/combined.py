"""How a sample's judged metrics are put to the judge (`--judge-mode`), and the one-call prompt they share.

- separate: one call per metric, all beginning with the same data section (prompts.py), which a
  server that reuses a cached prompt prefix (llama.cpp, vLLM, Ollama, LM Studio) computes once.
- grouped: for a server that bills every prompt token in full (OpenAI's own, and any OpenAI-compatible
  server not known to reuse a prefix), the retrieved contexts, usually the largest part of a sample,
  are sent once: the metrics that read them are asked in one call; the others each get a call with
  only the fields they read. (Even past OpenAI's 1,024-token cache threshold this bills less than
  separate calls: its cached tokens still cost half, or a tenth on newer models, and the grouped call
  sends the contexts once.)
- combined (opt-in): one call per sample for every judged metric.
- auto (the default): grouped where the judge says its server does not reuse a prefix, else separate
  (`resolved_mode`; a run stores the mode it resolved to, so a comparison sees which one scored it).

A call for several metrics is described below (one-call mode).

One-call mode (opt-in, `--judge-mode combined`): one judge call per sample for every judged metric.

The prompt is the sample's shared prefix (prompts.py), then each metric's own instructions and
reply shape under its name, then one line asking for a single JSON object keyed by metric name:

    {"faithfulness": {"claims": [...], "reasoning": "..."}, "answer_relevancy": {"score": 0.9, ...}}

Each part is read by its metric's own verdict reader (parsing.py), so a score means what it means
in the default mode. A reply that lacks one metric's part, or whose part holds no score, leaves
that metric alone to fall back visibly, with the reason; the others keep their verdicts.

It is opt-in because one long reply asks more of the judge than several short ones (a small local
model may drop parts), while the default mode already sends the data once to a caching server.
Metrics that keep their own prompt layout (a plugin's with a {data} slot) are asked on their own.
"""
from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Sequence

from ..model import EvalSample
from ..judges.base import caches_prefix, report_unusable
from .judging import UNAVAILABLE, UNPARSEABLE, Judgement, call, options, read_reply
from .metric import Metric
from .parsing import load_json_object
from .prompts import guard_phrases, shared_prefix

AUTO = "auto"  # separate where the server reuses a cached prefix, else grouped (the default)
SEPARATE = "separate"  # one call per judged metric, sharing one prompt prefix
GROUPED = "grouped"  # the metrics that read the contexts in one call, the others alone
COMBINED = "combined"  # one call per sample for all of them
JUDGE_MODES = (AUTO, SEPARATE, GROUPED, COMBINED)
# What each mode does, in a few words (the dashboard's choices, the CLI's help, the docs).
MODE_WORDS = {
    AUTO: "auto: one call per metric on a server that reuses a cached prompt prefix (llama.cpp, vLLM, Ollama, "
          "LM Studio), else grouped",
    SEPARATE: "one call per metric, sharing one prompt prefix",
    GROUPED: "the metrics that read the contexts in one call, so the contexts are sent once; the others alone",
    COMBINED: "one call per sample for every metric",
}

_HEAD = {
    "en": ("Judge the data above on each of the {n} metrics below: {names}. Reply with ONE JSON object only, "
           "with one key per metric name; each key's value is that metric's JSON reply as described under it."),
    "ar": ("قيّم البيانات أعلاه على كل مقياس من المقاييس الـ{n} أدناه: {names}. أجب بكائن JSON واحد فقط، "
           "فيه مفتاح لكل اسم مقياس، وقيمة كل مفتاح هي رد ذلك المقياس بصيغة JSON كما هو موصوف تحته."),
}
_PART = {"en": 'Its value, under the key "{name}":', "ar": 'قيمته، تحت المفتاح "{name}":'}


def combinable(metric: Metric) -> bool:
    """Whether `metric` can be asked in the combined call (it follows the shared prefix)."""
    return metric.shares_prefix


def resolved_mode(mode: str, judge: Any) -> str:
    """The mode `mode` stands for with this judge: `auto` becomes grouped when the judge says its server does not
    reuse a cached prompt prefix (judges.base.caches_prefix: OpenAI's own for a sample's prompts, and any
    OpenAI-compatible server not known to), else separate (a judge that does not say, such as a plugin's, is
    asked as before); the other modes are themselves."""
    if mode != AUTO:
        return mode
    return GROUPED if caches_prefix(judge, 0) is False else SEPARATE


def call_groups(metrics: Sequence[Metric], mode: str) -> List[List[Metric]]:
    """The judge calls that ask `metrics` (in order) in `mode` (separate, grouped or combined): each call's
    metrics. A call for one metric is that metric's own prompt; a call for several is `combined_prompt`."""
    if mode == COMBINED:
        together = [m for m in metrics if combinable(m)]
    elif mode == GROUPED:
        together = [m for m in metrics if combinable(m) and "contexts" in m.shows]
    else:
        together = []
    if len(together) < 2:
        together = []
    alone = [[m] for m in metrics if all(m is not t for t in together)]
    return ([together] if together else []) + alone


def combined_prompt(metrics: Sequence[Metric], sample: EvalSample, lang: str, fields: Sequence[str]) -> str:
    """The one prompt that asks for every metric in `metrics` about `sample`."""
    head_lang = "ar" if lang == "ar" else "en"
    names = ", ".join(m.name for m in metrics)
    guard, _ = guard_phrases(lang)
    parts = []
    for m in metrics:
        template = m.prompts.get(lang) or m.prompts["en"]
        part_lang = lang if lang in m.prompts else "en"
        parts.append(f"### {m.name}\n" + template.format(guard=guard, json_only=_PART[part_lang].format(name=m.name)))
    prefix = shared_prefix(lang, fields, sample.question, sample.answer, sample.contexts, sample.ground_truth)
    head = _HEAD[head_lang].format(n=len(metrics), names=names)
    return prefix + "\n\n" + head + "\n\n" + "\n\n".join(parts)


def combined_cap(metrics: Sequence[Metric]) -> int:
    """The combined call's completion cap: room for every metric's own reply."""
    return sum(m.max_tokens for m in metrics) + 16 * len(metrics)


def combined_schema(metrics: Sequence[Metric]) -> Optional[dict]:
    """One object keyed by metric name, each its metric's own shape (None unless every metric has one)."""
    if not metrics or any(m.reply_schema is None for m in metrics):
        return None
    return {"type": "object", "properties": {m.name: dict(m.reply_schema or {}) for m in metrics},
            "required": [m.name for m in metrics], "additionalProperties": False}


def reply_parts(reply: str, metrics: Sequence[Metric]) -> Dict[str, Optional[str]]:
    """Each metric's part of a combined reply, as JSON text for its own reader (None when absent)."""
    obj = load_json_object(reply) or {}
    parts: Dict[str, Optional[str]] = {}
    for m in metrics:
        part = obj.get(m.name)
        parts[m.name] = json.dumps(part, ensure_ascii=False) if isinstance(part, dict) else None
    return parts


def ask_combined(metrics: Sequence[Metric], judge: Any, prompt: str, repeat: int = 0) -> Dict[str, Judgement]:
    """One combined call: each metric's judgement, read from its own part of the reply."""
    reply, info, error = call(judge, prompt, options(None, judge, repeat, max_tokens=combined_cap(metrics),
                                                     schema=combined_schema(metrics)))
    if error:
        return {m.name: Judgement(reply=reply, info=info, failure=UNAVAILABLE, error=error) for m in metrics}
    parts = reply_parts(str(reply), metrics)
    if not any(parts.values()):  # nothing usable at all: a failed call for the run's health check
        report_unusable(judge, "The combined reply has no metric's part.", not_json=load_json_object(str(reply)) is None)
    out: Dict[str, Judgement] = {}
    for m in metrics:
        part = parts[m.name]
        if part is None:
            out[m.name] = Judgement(reply=reply, info=info, failure=UNPARSEABLE,
                                    error=f'The combined reply has no "{m.name}" part.')
        else:
            out[m.name] = read_reply(m, part, info)
    return out


def ask_combined_repeatedly(metrics: Sequence[Metric], judge: Any, prompt: str,
                            repeats: int) -> Dict[str, List[Judgement]]:
    """`repeats` combined calls: each metric's judgements, one per call."""
    out: Dict[str, List[Judgement]] = {m.name: [] for m in metrics}
    for i in range(max(1, repeats)):
        for name, judgement in ask_combined(metrics, judge, prompt, i).items():
            out[name].append(judgement)
    return out
