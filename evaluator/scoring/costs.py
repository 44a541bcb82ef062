"""Pre-run estimates of judge calls, tokens and cost, computed without any network.

Tokenizer files cannot be fetched at run time, so tokens are estimated from the text of the
very prompts the run would send: about 4 characters per token for Latin script and about 2.5
for Arabic (BPE vocabularies split Arabic more finely), never fewer than one per word. On
English RAG prompts this lands within ~10% of tiktoken's cl100k counts, which is what a
budget decision needs.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Dict, Iterable, List, Optional, Tuple

from ..judges.replies import bad_reply_note
from ..judges.base import is_offline
from ..metrics.combined import AUTO, GROUPED
from ..metrics.registry import Metric, MetricChoice, resolve_metrics
from ..metrics.scoring import planned_prompts
from ..model import EvalSample
from ..text import estimate_tokens, resolve_language
from .conversations import judged_parts

# A judge reply is a short JSON verdict list; measured ~60-250 tokens on the loopback bench.
COMPLETION_TOKENS_PER_CALL = 150
# OpenAI's automatic prompt caching: prompts of at least 1,024 tokens, cached in steps of 128 tokens.
OPENAI_CACHE_MIN = 1024
OPENAI_CACHE_STEP = 128


@dataclass(frozen=True)
class RunEstimate:
    samples: int
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost: Optional[float] = None  # in the currency of the prices given, None without prices
    # Of prompt_tokens, those OpenAI's prompt cache would bill as cached: the shared prefix of each
    # sample's calls after its first (prompts.py), when the prompt is long enough to be cached.
    cached_prompt_tokens: int = 0
    judge_mode: str = ""  # the layout estimated ("grouped" for auto: no server is asked which it is)

    def to_dict(self) -> dict:
        return asdict(self)


def price(prompt_tokens: int, completion_tokens: int,
          price_in: Optional[float], price_out: Optional[float]) -> Optional[float]:
    """Cost given prices per million prompt / completion tokens (None when no price is known)."""
    if price_in is None and price_out is None:
        return None
    return round(prompt_tokens / 1e6 * (price_in or 0.0) + completion_tokens / 1e6 * (price_out or 0.0), 6)


def estimate_run(samples: Iterable[EvalSample], language: str = "auto", *,
                 price_in: Optional[float] = None, price_out: Optional[float] = None,
                 judge: object = None, metrics: Optional[Iterable[MetricChoice]] = None,
                 repeats: int = 1, judge_mode: str = AUTO) -> RunEstimate:
    """Judge calls and tokens a run of the chosen `metrics`, each asked `repeats` times, would spend
    (zero for the offline judge), in `judge_mode` (metrics/combined.py; "auto" is estimated as grouped, the
    layout of a server that bills every prompt token, since no server is asked)."""
    chosen = resolve_metrics(metrics)
    n = calls = prompt_tokens = cached = 0
    for row in samples:
        n += 1
        if judge is not None and is_offline(judge):
            continue
        for sample, asked in judged_parts(row, chosen, language):  # a conversation: each reply, then the whole
            c, p, k = _estimate(sample, [m for m in asked if m.judged], language, repeats, judge_mode)
            calls, prompt_tokens, cached = calls + c, prompt_tokens + p, cached + k
    completion = calls * COMPLETION_TOKENS_PER_CALL
    return RunEstimate(n, calls, prompt_tokens, completion, price(prompt_tokens, completion, price_in, price_out),
                       cached, GROUPED if judge_mode == AUTO else judge_mode)


def _estimate(sample: EvalSample, judged: List[Metric], language: str, repeats: int,
              judge_mode: str) -> Tuple[int, int, int]:
    """(calls, prompt tokens, cached prompt tokens) of one exchange."""
    calls = prompt_tokens = cached = 0
    if judged:
        lang = resolve_language(language, sample.question, sample.answer, *sample.contexts)
        prompts, prefix = planned_prompts(judged, sample, lang, judge_mode)
        prefix_tokens = estimate_tokens(prefix)
        for i, prompt in enumerate(prompts):
            tokens = estimate_tokens(prompt)
            calls += repeats
            prompt_tokens += repeats * tokens
            # The first call of a sample fills the cache; every later one (repeats too) can read it.
            cached += (repeats - (i == 0)) * openai_cached_tokens(prefix_tokens, tokens)
    return calls, prompt_tokens, cached


def openai_cached_tokens(prefix_tokens: int, prompt_tokens: int) -> int:
    """The tokens of a prompt OpenAI bills as cached when `prefix_tokens` of it were sent before."""
    if prompt_tokens < OPENAI_CACHE_MIN:
        return 0
    return prefix_tokens // OPENAI_CACHE_STEP * OPENAI_CACHE_STEP


def usage_line(usage: Dict[str, Any], price_in: Optional[float], price_out: Optional[float]) -> str:
    """Judge calls, cache hits, tokens, retries, failures and the cost when prices are known."""
    line = (f"judge: {usage.get('calls', 0)} calls, {usage.get('cache_hits', 0)} cache hits, "
            f"{usage.get('prompt_tokens', 0)} prompt{cached_note(usage)} + {usage.get('completion_tokens', 0)} "
            f"completion tokens, {usage.get('retries', 0)} retries, {usage.get('failures', 0)} failures")
    cost = price(usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0), price_in, price_out)
    return line + (f", cost {cost:.4f}" if cost is not None else "") + bad_reply_note(usage)


def cached_note(usage: Dict[str, Any]) -> str:
    """' (N cached)' when the server read some prompt tokens from its prompt cache (billed at a discount)."""
    cached = usage.get("cached_prompt_tokens") or 0
    return f" ({cached} cached)" if cached else ""
