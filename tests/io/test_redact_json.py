"""io/redact.redacted_json: the fast path (plain prose encoded once) gives exactly what the walk gives."""
import json

import pytest

from evaluator.io import redact
from evaluator.io.redact import redact_value, redacted_json, remember

CASES = [
    {"answer": "Refunds take five days.", "contexts": ["Plain prose only."]},
    {"url": "see https://user:pw@example.com/x", "n": 3},
    {"error": "GET /v1?api_key=abc123def456 failed"},
    {"header": "Authorization: Bearer sk1234567890abcdef"},
    {"nested": [{"deep": ["quote \" and backslash \\ kept", None, 1.5]}]},
]


@pytest.mark.parametrize("value", CASES)
def test_the_fast_path_writes_what_the_walk_writes(value):
    assert redacted_json(value) == json.dumps(redact_value(value), ensure_ascii=False, default=str)


def test_a_known_secret_is_masked_in_any_spelling(monkeypatch):
    monkeypatch.setattr(redact, "_known", set())
    monkeypatch.setattr(redact, "_masked", [])
    remember('s3cr"et-value-42')  # a quote: JSON text spells it escaped
    text = redacted_json({"answer": 'the key is s3cr"et-value-42, plainly'})
    assert "s3cr" not in text and "***" in text and json.loads(text)
