"""The judge that needs nothing: every metric is scored by its lexical heuristic."""
from __future__ import annotations


class OfflineJudge:
    """Never called (`offline = True`); `generate` exists so it satisfies the Judge protocol anyway."""

    offline = True
    name = "offline"

    def generate(self, prompt: str) -> str:
        return ""
