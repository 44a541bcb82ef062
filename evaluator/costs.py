"""Pre-run estimates of judge calls, tokens and cost, computed without any network.

Tokenizer files cannot be fetched at run time, so tokens are estimated from the text of the
very prompts the run would send: about 4 characters per token for Latin script and about 2.5
for Arabic (BPE vocabularies split Arabic more finely), never fewer than one per word. On
English RAG prompts this lands within ~10% of tiktoken's cl100k counts, which is what a
budget decision needs.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Dict, Iterable, Optional

from .judges.base import is_offline
from .metrics.registry import MetricChoice, resolve_metrics
from .model import EvalSample
from .text import estimate_tokens, resolve_language

# A judge reply is a short JSON verdict list; measured ~60-250 tokens on the loopback bench.
COMPLETION_TOKENS_PER_CALL = 150
@dataclass(frozen=True)
class RunEstimate:
    samples: int
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost: Optional[float] = None  # in the currency of the prices given, None without prices

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
                 repeats: int = 1) -> RunEstimate:
    """Judge calls and tokens a run of the chosen `metrics`, each asked `repeats` times, would spend
    (zero for the offline judge)."""
    judged = [m for m in resolve_metrics(metrics) if m.judged]
    n = calls = prompt_tokens = 0
    for sample in samples:
        n += 1
        if judge is not None and is_offline(judge):
            continue
        lang = resolve_language(language, sample.question, sample.answer, *sample.contexts)
        for metric in judged:
            if metric.skip_reason(sample):
                continue
            if metric.zero_reason(sample):
                continue  # scored 0 without a call (an empty answer)
            calls += repeats
            prompt_tokens += repeats * estimate_tokens(metric.prompt(sample, lang))
    completion = calls * COMPLETION_TOKENS_PER_CALL
    return RunEstimate(n, calls, prompt_tokens, completion, price(prompt_tokens, completion, price_in, price_out))


def usage_line(usage: Dict[str, Any], price_in: Optional[float], price_out: Optional[float]) -> str:
    """Judge calls, cache hits, tokens, retries, failures and the cost when prices are known."""
    line = (f"judge: {usage.get('calls', 0)} calls, {usage.get('cache_hits', 0)} cache hits, "
            f"{usage.get('prompt_tokens', 0)} prompt + {usage.get('completion_tokens', 0)} completion tokens, "
            f"{usage.get('retries', 0)} retries, {usage.get('failures', 0)} failures")
    cost = price(usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0), price_in, price_out)
    return line + (f", cost {cost:.4f}" if cost is not None else "")
