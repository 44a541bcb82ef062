"""Targets: the user's RAG pipeline or agent, called for each question before its answer is scored.

    from evaluator.targets import TargetConfig
    target = TargetConfig("http://127.0.0.1:8765/ask").build()      # or "my_app.rag:answer",
    target.call("How do I reset my password?")                       # "app.py:answer", "openai:gpt-4o-mini"

Three kinds share one interface (`Target.call(question) -> TargetResponse`): a Python function
(function.py), an HTTP endpoint (http.py) and a bare chat model (chat.py). `ask` (base.py) adds
retries and timing; `evaluate_with_target` (pipeline.py) calls the target and judges each answer
as soon as it arrives.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Literal, Optional, Sequence, Tuple

from ..errors import TargetConfigError
from .base import NO_RETRY, RetryPolicy, Target, ask
from .chat import ChatTarget
from .function import FunctionTarget
from .http import DEFAULT_BODY, HttpTarget, parse_field_specs
from ..io.shapes import TargetResponse


TargetKind = Literal["python", "http", "openai"]  # a function, an HTTP endpoint, a bare chat model


@dataclass(frozen=True)
class TargetConfig:
    """A target as a user names it: plain data, so a CLI flag set or a dashboard form can hold it.

    `spec` is an http(s):// URL, `module:function`, `path/file.py:function` or `openai:MODEL`.
    `headers` are 'Name: value' lines whose ${VAR}s are read at call time; `settings()` keeps only
    their names.
    """

    spec: str
    body: Optional[str] = None
    headers: Tuple[str, ...] = ()
    fields: Dict[str, str] = field(default_factory=dict)
    base_url: str = ""
    timeout: float = 60.0
    workers: int = 4
    retries: int = 3

    @property
    def kind(self) -> TargetKind:
        if self.spec.startswith(("http://", "https://")):
            return "http"
        return "openai" if self.spec.startswith("openai:") else "python"

    def build(self) -> Target:
        """The target itself; TargetConfigError when it cannot be used."""
        if not self.spec.strip():
            raise TargetConfigError("no target given: a URL, module:function, file.py:function or openai:MODEL")
        if self.kind != "http" and (self.body or self.headers or self.fields):
            raise TargetConfigError("--target-body, --target-header and --target-field apply to HTTP targets only")
        if self.kind == "python" and _restricted():
            raise TargetConfigError("a Python function target is not allowed here: this server's configuration "
                                    "lets targets call only the HTTP URLs under [targets].allow")
        if self.kind == "http":
            return HttpTarget(self.spec, body=self.body, headers=self.headers, fields=self.fields,
                              timeout=self.timeout)
        if self.kind == "openai":
            return ChatTarget(self.spec.partition(":")[2], base_url=self.base_url, timeout=self.timeout)
        return FunctionTarget.from_spec(self.spec, timeout=self.timeout)

    @property
    def policy(self) -> RetryPolicy:
        return RetryPolicy(retries=max(0, self.retries))

    def settings(self, target: Optional[Target] = None) -> Dict[str, Any]:
        """What the run history keeps: kind, URL or function, field paths; never a header value."""
        described = dict((target or self.build()).describe())
        described.update(workers=self.workers, retries=self.retries)
        return described

    @classmethod
    def from_settings(cls, stored: Dict[str, Any], headers: Sequence[str] = ()) -> "TargetConfig":
        """The target a stored run used, to resume it. Header values were never stored: give them again."""
        kind = stored.get("kind")
        if kind == "python":
            spec = str(stored.get("function") or "")
        elif kind == "openai":
            spec = f"openai:{stored.get('model', '')}"
        else:
            spec = str(stored.get("url") or "")
            if spec.endswith("?…"):
                raise TargetConfigError("this run's endpoint URL had a query string, which is not saved; "
                                        "give the URL again with --target")
        names = sorted(stored.get("header_names") or [])
        given = sorted(line.partition(":")[0].strip() for line in headers)
        if names and given != names:
            raise TargetConfigError(f"this run's target sent the header(s) {', '.join(names)}, whose values are "
                                    "never saved; give them again with --target-header 'Name: value'")
        base_url = str(stored.get("url") or "").removesuffix("/chat/completions") if kind == "openai" else ""
        body = stored.get("body") if kind == "http" and stored.get("body") != DEFAULT_BODY else None
        return cls(spec, body, tuple(headers),
                   dict(stored.get("fields") or {}) if kind == "http" else {}, base_url,
                   float(stored.get("timeout_s") or 60.0), int(stored.get("workers") or 4),
                   int(stored.get("retries") if stored.get("retries") is not None else 3))  # type: ignore[arg-type]

    @classmethod
    def from_options(cls, spec: str, *, body: Optional[str] = None, headers: Sequence[str] = (),
                     fields: Sequence[str] = (), base_url: str = "", timeout: float = 60.0,
                     workers: int = 4, retries: int = 3) -> "TargetConfig":
        """From CLI-style options: fields as 'name=path' strings."""
        return cls(spec, body or None, tuple(headers), parse_field_specs(fields), base_url, timeout, workers, retries)


def _restricted() -> bool:
    from ..config import current

    return current().targets.restricted


def __getattr__(name: str) -> Any:
    if name == "evaluate_with_target":  # pipeline.py imports the evaluator: loaded on first use
        from .pipeline import evaluate_with_target

        return evaluate_with_target
    raise AttributeError(name)


__all__ = [
    "ChatTarget",
    "FunctionTarget",
    "HttpTarget",
    "NO_RETRY",
    "RetryPolicy",
    "Target",
    "TargetConfig",
    "TargetResponse",
    "ask",
    "evaluate_with_target",
]
