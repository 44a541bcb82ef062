"""Reply shapes as bounded JSON schemas, for judges that constrain their output (judges/openai.py).

A grammar made from a schema (llama.cpp) or a json_schema response format (vLLM, LM Studio, Ollama)
keeps a weak model's reply to the shape the metric reads; `maxItems` bounds its lists and the metric's
completion cap its strings, so a constrained reply ends instead of rambling.
Each metric's module builds its own shape from these pieces and sizes its cap for it. A metric whose score
is computed from its verdicts leaves "score" out of its shape: the grammar then keeps the judge from writing a
score that contradicts its own verdicts (and saves its tokens).
"""
from __future__ import annotations

from typing import Any, Dict, Sequence

REASON_CHARS = 200  # one sentence of reasoning
ITEM_CHARS = 160  # one claim, statement or fact


def text(max_chars: int = REASON_CHARS) -> Dict[str, Any]:
    """A string. `max_chars` is what its share of the completion cap is sized for, not a `maxLength`: a
    grammar made from maxLength nests one optional rule per character (llama.cpp's converter), and sampling
    through 160 nested rules takes minutes per token; the completion cap bounds the string instead."""
    return {"type": "string"}


def choice(values: Sequence[Any]) -> Dict[str, Any]:
    return {"enum": list(values)}


def items(item: Dict[str, Any], max_items: int, min_items: int = 0) -> Dict[str, Any]:
    found: Dict[str, Any] = {"type": "array", "items": item, "maxItems": max_items}
    if min_items:
        found["minItems"] = min_items
    return found


def shape(**properties: Dict[str, Any]) -> Dict[str, Any]:
    """An object with exactly these properties, all required, in this order (the order the prompt shows)."""
    return {"type": "object", "properties": dict(properties), "required": list(properties),
            "additionalProperties": False}


SCORE = {"type": "number", "minimum": 0, "maximum": 1}
SCORED = shape(score=SCORE, reasoning=text())  # a stated 0-1 score and one sentence


def cap_for(max_items: int, per_item: int, fixed: int = 80) -> int:
    """A completion cap for a reply of up to `max_items` items of ~`per_item` tokens, plus `fixed`."""
    return fixed + max_items * per_item
