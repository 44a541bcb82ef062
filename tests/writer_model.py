"""A canned question-writing model for `ragmeter generate`, served by tests/openai_server.py.

`WriterModel` is a ChatServer responder: it reads which of the generator's prompts it got and
answers it the way a model would, from the passages in the prompt, deterministically:
- a write prompt: a question naming the passage's section and two of its words (never a copied
  sentence), the passage's first sentence as the answer, its first number (or word) as keyword;
- the unanswerable prompt: a question about a detail no passage gives;
- a check prompt: answerable and supported, unless the question is in `reject` (or, with
  `reject_every=k`, every k-th check by prompt hash) - then "supported": false;
- the corpus check of an unanswerable question: not answerable.
`arabic=True` writes Arabic questions when the prompt asks for Arabic.

    with ChatServer(responder=WriterModel()) as srv: ...
"""
from __future__ import annotations

import hashlib
import json
import re
from typing import Optional, Set

from openai_server import Behaviour, Recorded, reply

_PASSAGE = re.compile(r"\[PASSAGE (\d+)\] document: (.*?); section: (.*?)\n(.*?)(?=\n\n\[PASSAGE|\n\[QUESTIONS|\nRAGMETER_DATA>>>)", re.S)
_QUESTION = re.compile(r"\[QUESTION\]\n(.*?)\n", re.S)


def _digest(text: str) -> int:
    return int(hashlib.sha256(text.encode("utf-8")).hexdigest()[:8], 16)


class WriterModel:
    def __init__(self, *, reject: Set[str] = frozenset(), reject_every: int = 0, garbage_every: int = 0) -> None:
        self.reject, self.reject_every, self.garbage_every = set(reject), reject_every, garbage_every
        self.writes = 0

    def __call__(self, request: Recorded) -> Optional[Behaviour]:
        prompt = request.prompt
        if prompt.startswith("Check a test question"):
            question = (_QUESTION.search(prompt) or [None, ""])[1]
            bad = question in self.reject or (self.reject_every and _digest(prompt) % self.reject_every == 0)
            return reply(json.dumps({"answerable": True, "supported": not bad, "reason": "canned"}))
        if prompt.startswith("Here are the passages a search"):
            return reply(json.dumps({"answerable": False, "reason": "no passage gives it"}))
        passages = _PASSAGE.findall(prompt)
        if not passages:
            return None
        self.writes += 1
        if self.garbage_every and self.writes % self.garbage_every == 0:
            return reply("Sure! Here is a question about the passage.")
        arabic = "Write the question and the answer in Modern Standard Arabic" in prompt or \
                 "Write the question in Modern Standard Arabic" in prompt
        return reply(json.dumps(self._item(prompt, passages, arabic), ensure_ascii=False))

    def _item(self, prompt: str, passages: list, arabic: bool) -> dict:
        _, title, section, text = passages[0]
        words = [w for w in re.findall(r"[^\W\d_]{4,}", text)]
        seed = _digest(prompt)
        picked = [words[(seed + 7 * i) % len(words)] for i in range(2)] if words else ["it", "that"]
        picked = picked if len(set(picked)) == 2 or len(words) < 2 else [picked[0], words[(seed + 1) % len(words)]]
        if "does NOT answer" in prompt:
            if arabic:
                return {"question": f"ما رقم هاتف مدير قسم {section} في {title} يوم الجمعة؟"}
            return {"question": f"Who signs off the {section} budget for {title} ({picked[0]}), and on which weekday?"}
        first = re.split(r"(?<=[.!?])\s", text.strip())[0]
        number = re.search(r"\d+", first)
        keyword = number.group(0) if number else (first.split() or ["x"])[0]
        if arabic:
            return {"question": f"ماذا تقول وثيقة {title} عن {section}؟ ({picked[0]})",
                    "answer": first, "keywords": [keyword]}
        kind = "both" if len(passages) == 2 else "overall" if len(passages) > 2 else "about"
        return {"question": f"What {kind} {picked[0].lower()} and {picked[1].lower()} ({section.lower()})?",
                "answer": first, "keywords": [keyword]}
