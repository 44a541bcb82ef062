"""A bare chat model as a target (`openai:MODEL`): its answers are graded with no retrieval.

It is an HttpTarget pointed at `{base_url}/chat/completions`, reading
`choices[0].message.content`. The key comes from `api_key_env` at each call, when that variable
is set (local servers need none). OPENAI_API_KEY goes only to OpenAI's own URL: a base URL
someone typed gets a key only from a variable named for it (`api_key_env`). The contexts are empty by design, so the context metrics are
skipped with that reason rather than scored as failures.
"""
from __future__ import annotations

import json
from typing import Any, Dict

from ..judges.base import DEFAULT_BASE_URL
from .http import HttpTarget
from ..environment import secret

NO_RETRIEVAL = "The target is a bare model (openai:{model}) with no retrieval, so there are no contexts to judge."


class ChatTarget(HttpTarget):
    """Asks an OpenAI-compatible chat model each question, as the only message."""

    kind = "openai"

    def __init__(self, model: str, *, base_url: str = "", api_key_env: str = "",
                 timeout: float = 60.0) -> None:
        self.model = model
        body = json.dumps({"model": model, "messages": [{"role": "user", "content": "{question}"}]})
        base = (base_url or DEFAULT_BASE_URL).rstrip("/")
        variable = api_key_env or ("OPENAI_API_KEY" if base == DEFAULT_BASE_URL else "")
        headers = [f"Authorization: Bearer ${{{variable}}}"] if secret(variable) else []
        url = base + "/chat/completions"
        super().__init__(url, body=body, headers=headers, timeout=timeout,
                         fields={"answer": "choices.0.message.content"},
                         no_contexts_reason=NO_RETRIEVAL.format(model=model))

    def describe(self) -> Dict[str, Any]:
        return {"kind": self.kind, "model": self.model, "url": super().describe()["url"], "timeout_s": self.timeout}
