"""Probability-weighted scores (G-Eval, Liu et al. 2023) from the judge's token log-probabilities.

A judge asked for a 1-5 score answers one token, "4", but it may have been nearly as ready
to say "3". When the server returns the top alternatives of each token (OpenAI, vLLM and
llama.cpp's server do, with `logprobs`/`top_logprobs`), the score is the probability-weighted
mean over the score tokens: sum(v * p(v)) / sum(p(v)). That is finer-grained and steadier
than the sampled token alone. Only metrics whose reply holds a single score token use it
(rubrics on the 1-5 and pass-fail scales); when a reply carries no usable probabilities the
stated score stands.
"""
from __future__ import annotations

import math
import re
from typing import Dict, List, Optional, Sequence

from .parsing import normalise

# Where the score token sits: right after `"score":` (the rubric prompt's JSON puts it last).
_BEFORE_SCORE = re.compile(r"[\"']?score[\"']?\s*[:=]\s*[\"']?\s*$", re.IGNORECASE)
_VALUES: Dict[str, Dict[str, float]] = {
    "1-5": {str(v): float(v) for v in range(1, 6)},
    "pass-fail": {"1": 1.0, "0": 0.0, "pass": 1.0, "fail": 0.0},
}


def _token_value(token: str, scale: str) -> Optional[float]:
    return _VALUES.get(scale, {}).get(token.strip().strip("\"'").lower())


def score_position(tokens: Sequence[str], scale: str) -> Optional[int]:
    """Index of the token holding the score: the last value token right after `"score":`, or the
    only non-blank token of a bare reply; None when there is no such token."""
    found, text = None, ""
    for i, token in enumerate(tokens):
        if _token_value(token, scale) is not None and _BEFORE_SCORE.search(text):
            found = i
        text += token
    if found is None:
        solid = [i for i, t in enumerate(tokens) if t.strip()]
        if len(solid) == 1 and _token_value(tokens[solid[0]], scale) is not None:
            found = solid[0]
    return found


def weighted_score(logprobs: Optional[List[list]], stated: Optional[float], scale: str) -> Optional[float]:
    """The probability-weighted score, normalised to 0-1, or None when the reply's token
    probabilities cannot give one (none sent, no score token, or one that disagrees with `stated`).

    `logprobs` is `[[token, [[alternative, logprob], ...]], ...]` (OpenAIJudge.call_info()).
    """
    if not logprobs or stated is None or scale not in _VALUES:
        return None
    tokens = [str(entry[0]) for entry in logprobs]
    pos = score_position(tokens, scale)
    if pos is None or _token_value(tokens[pos], scale) != stated:
        return None
    mass: Dict[float, float] = {}
    for alternative, logprob in logprobs[pos][1]:
        value = _token_value(str(alternative), scale)
        if value is not None:
            mass[value] = mass.get(value, 0.0) + math.exp(float(logprob))
    total = sum(mass.values())
    if total <= 0:
        return None
    return normalise(sum(v * p for v, p in mass.items()) / total, scale)
