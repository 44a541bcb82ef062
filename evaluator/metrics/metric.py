"""One metric, defined in one place: what it needs, what the judge sees, how a reply becomes a score.

A `Metric` is plain frozen data plus a few small methods. The evaluator never looks a metric up
by its name anywhere else: skip reasons, prompts, parsing, the offline heuristic in each heuristic
set, its sanity checks, its claims view, the advice when it is low and whether it counts towards
`overall` all come from here. A built-in metric is one module that makes one Metric
(faithfulness.py, answer_relevancy.py, ...), registered like a plugin's (builtin.py, registry.py).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from ..model import EvalSample, MetricScore
from .heuristics import LEXICAL
from .heuristics import Heuristic as SetScorer  # (sample, lang) -> HeuristicScore, in one set
from .offline import SETS, SetHeuristic
from .parsing import SCALES, ParsedReply, Verdicts, parse_score
from .prompts import own_layout, render_prompt

_NAME = re.compile(r"^\w+(@\d+)?$")  # `ndcg@5`: a retrieval metric's cut-off is part of its name
# A judged metric's completion cap unless its module sizes its own (a reply of a score and one sentence
# fits in ~60 tokens; the cap is what stops a small model rambling for minutes). --judge-max-tokens wins.
DEFAULT_MAX_TOKENS = 256
JUDGED = "judged"  # asks the judge (blended with its heuristic when it has one)
RULE = "rule"  # computed by a deterministic rule from the sample alone

# Why a metric cannot be computed when a field it needs is empty, per field.
MISSING = {
    "question": "The question is empty.",
    "answer": "The answer is empty.",
    "contexts": "No contexts were retrieved.",
    "ground_truth": "No reference answer (ground_truth) for this sample.",
    "expected_answer_keywords": "No expected keywords for this sample.",
    "expected_docs": "No expected documents for this sample.",
    "tool_calls": "No tool was called.",
    "expected_tools": "No expected tools for this sample.",
}

# (sample, language, heuristic set name) -> an object with .score and .reasoning (HeuristicScore).
Heuristic = Callable[[EvalSample, str, str], Any]
Rule = Callable[[EvalSample], MetricScore]
# (sample, the judge's verdicts) -> a ClaimView (claim_spans.py): the claims behind a judged score.
JudgeClaims = Callable[[EvalSample, List[Dict[str, Any]]], Any]
# (sample) -> a ClaimView from the heuristic's own evidence, for an offline score.
OfflineClaims = Callable[[EvalSample], Any]


def _empty(value: Any) -> bool:
    if isinstance(value, str):
        return not value or value.isspace()  # `not value.strip()`, without copying the text
    return not value


def advice(diagnosis: str, *actions: str) -> Tuple[str, Tuple[str, ...]]:
    """A Metric's `advice`: what a low mean says, then what to try."""
    return diagnosis, actions


@dataclass(frozen=True)
class Metric:
    """Everything ragmeter knows about one metric.

    name: the key in results, reports, exports and `--fail-under`.
    kind: JUDGED (one judge call per repeat) or RULE (`rule(sample)`, no judge).
    needs: sample fields it cannot do without; an empty one skips the metric with MISSING's reason
        (a RULE metric is then left out of the result instead, as keyword coverage always was).
    zero_if_empty: sample fields whose emptiness scores 0 without a judge call (an empty answer
        is neither relevant nor correct).
    prompts: language -> the metric's instructions and reply shape, with a {json_only} slot; they follow
        the sample's shared prefix (prompts.py). A template with its own {guard} and {data} slots
        keeps its own layout (and shares no prefix with the other metrics).
    shows: the sample fields the judge sees, in order (question, answer, contexts, ground_truth).
    verdicts: computes the score from a JSON reply's evidence lists; None reads the stated score.
    scale: how the prompt asks for the score: "0-1", "1-5" or "pass-fail" (normalised to 0-1).
    heuristic: the offline scorer, also blended 30% with the judge; None means "needs a judge". Made
        from `heuristics` when it is not given.
    heuristics: heuristic set name -> the metric's scorer (sample, lang) -> HeuristicScore in that set
        ("ragmeter" needed; a set without one uses it: offline.py); they become `heuristic`, units
        spelled one way and garbage capped in the `prose` fields (sanity.py).
    prose: sample fields the heuristic reads as prose, whose word salad caps it (sanity.py).
    claims: the judge's verdicts as claims located in the text (claim_spans.py), for the drill-down.
    offline_claims: the heuristic's own evidence as claims, for an offline score.
    logprobs: weight a single-token score by the judge's token probabilities (G-Eval) when it can.
    advice: (diagnosis, actions) shown when the metric's mean is low.
    optional: left out of a result (not kept as skipped) when the sample lacks what it needs, as a
        rule metric is: agent metrics on a plain RAG row, so default runs show no empty column.
    max_tokens: the completion cap of each of its judge calls (sized for its reply shape; the judge's
        own cap, `--judge-max-tokens`, wins).
    reply_schema: its reply shape as a JSON schema, sent as structured output where the server takes it
        (a llama.cpp grammar, json_schema); bounded (maxItems, maxLength) so a constrained reply ends.
    default: scored by a run that names no metrics (DEFAULT_METRICS, registry.py). False unless said: a new
        metric costs a judge call a sample on every run, so it is opt-in until someone decides otherwise.
    languages: the languages it promises its own prompt in, e.g. ("en", "ar"); a judged metric claiming one
        without a prompt for it is refused. A default judged metric must claim every language scoring knows
        (languages.SCORED): `registry.contract_problems` says what is missing, tests/test_extending.py asks it.
    heuristic_sets: the heuristic sets it promises its own scorer in ("ragmeter", "jaccard", "embedding"); one
        claimed without a scorer in `heuristics` is refused (a set it has no scorer in uses its "ragmeter" one).
    """

    name: str
    kind: str = JUDGED
    needs: Tuple[str, ...] = ()
    zero_if_empty: Tuple[str, ...] = ()
    prompts: Mapping[str, str] = field(default_factory=dict)
    shows: Tuple[str, ...] = ()
    verdicts: Optional[Verdicts] = None
    scale: str = "0-1"
    heuristic: Optional[Heuristic] = None
    rule: Optional[Rule] = None
    logprobs: bool = False
    advice: Optional[Tuple[str, Tuple[str, ...]]] = None
    description: str = ""
    optional: bool = False
    heuristics: Mapping[str, SetScorer] = field(default_factory=dict)
    prose: Tuple[str, ...] = ()
    claims: Optional[JudgeClaims] = None
    offline_claims: Optional[OfflineClaims] = None
    max_tokens: int = DEFAULT_MAX_TOKENS
    reply_schema: Optional[Mapping[str, Any]] = None
    default: bool = False
    languages: Tuple[str, ...] = ()
    heuristic_sets: Tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not _NAME.fullmatch(self.name):
            raise ValueError(f"metric name {self.name!r}: use letters, digits and underscores (and @k for a cut-off)")
        if self.kind not in (JUDGED, RULE):
            raise ValueError(f"metric {self.name}: kind must be {JUDGED!r} or {RULE!r}, not {self.kind!r}")
        if self.kind == RULE and self.rule is None:
            raise ValueError(f"rule metric {self.name} needs rule=<function(sample) -> MetricScore>")
        if self.kind == JUDGED and "en" not in self.prompts:
            raise ValueError(f"judged metric {self.name} needs an English prompt (prompts={{'en': ...}})")
        if self.max_tokens < 1:
            raise ValueError(f"metric {self.name}: max_tokens must be at least 1, not {self.max_tokens}")
        if self.scale not in SCALES:
            raise ValueError(f"metric {self.name}: scale must be one of {', '.join(SCALES)}, not {self.scale!r}")
        unknown = [f for f in self.needs + self.zero_if_empty + self.prose if f not in MISSING]
        if unknown:
            raise ValueError(f"metric {self.name}: unknown sample field(s) {unknown}; use {', '.join(MISSING)}")
        if self.heuristics and LEXICAL not in self.heuristics:
            raise ValueError(f"metric {self.name}: heuristics needs a {LEXICAL!r} scorer (the other sets fall back to it)")
        self._check_claims()
        if self.heuristics and (self.heuristic is None or isinstance(self.heuristic, SetHeuristic)):
            # made here, so that dataclasses.replace(metric, heuristics=...) makes it anew
            object.__setattr__(self, "heuristic", SetHeuristic(self.heuristics, self.prose))

    def _check_claims(self) -> None:
        """Each language and heuristic set the metric claims has its prompt and its scorer."""
        no_prompt = [lang for lang in self.languages if self.judged and lang not in self.prompts]
        if no_prompt:
            raise ValueError(f"metric {self.name} claims languages={self.languages} but has no prompt for "
                             f"{', '.join(no_prompt)}: add prompts={{{no_prompt[0]!r}: ...}} or drop the language")
        unknown = [s for s in self.heuristic_sets if s not in SETS]
        if unknown:
            raise ValueError(f"metric {self.name}: unknown heuristic set(s) {unknown}; the sets are {', '.join(SETS)}")
        no_scorer = [s for s in self.heuristic_sets if s not in self.heuristics]
        if no_scorer:
            raise ValueError(f"metric {self.name} claims heuristic_sets={self.heuristic_sets} but has no scorer "
                             f"in {', '.join(no_scorer)}: add heuristics={{{no_scorer[0]!r}: ...}} or drop the set")

    @property
    def judged(self) -> bool:
        return self.kind == JUDGED

    def skip_reason(self, sample: EvalSample) -> Optional[str]:
        """Why this metric cannot be computed for `sample`, or None when it can."""
        for name in self.needs:
            if _empty(getattr(sample, name, None)):
                return MISSING[name]
        return None

    def reads(self, name: str) -> bool:
        """Whether this metric reads sample field `name` (needs it, scores 0 when it is empty, or shows it)."""
        return name in self.needs or name in self.zero_if_empty or name in self.shows

    def zero_reason(self, sample: EvalSample) -> Optional[str]:
        """Why this metric scores 0 for `sample` without asking anyone (see zero_if_empty), or None."""
        for name in self.zero_if_empty:
            if _empty(getattr(sample, name, None)):
                return f"The {name.replace('_', ' ')} is empty: nothing is relevant or correct."
        return None

    @property
    def shares_prefix(self) -> bool:
        """Whether this metric's prompt opens with the sample's shared prefix (see prompts.py), so
        `prompt(..., fields=)` may show it the fields the other chosen metrics need too."""
        return self.judged and bool(self.prompts) and not any(own_layout(t) for t in self.prompts.values())

    def prompt(self, sample: EvalSample, lang: str, fields: Optional[Sequence[str]] = None) -> str:
        """The judge prompt for `sample` in `lang` (the sample's text fenced as data). `fields` is the
        shared data section of the sample's calls (default: what this metric shows)."""
        return render_prompt(self.prompts, self.shows, lang, sample.question, sample.answer,
                             sample.contexts, sample.ground_truth, fields=fields)

    def parse(self, reply: str) -> ParsedReply:
        """The judge's score in `reply`, normalised to 0-1 (score None when there is none)."""
        return parse_score(reply, self.verdicts, self.scale)

    def actions(self) -> List[str]:
        return list(self.advice[1]) if self.advice else []
