"""`RunConfig`: what a user picked for a run, as plain data (judge kind, model, endpoint, the *name* of the
environment variable holding the key, language, heuristic set, workers, cache file, prices).

It builds the judge and the evaluator, and is what the history keeps, so a resumed run scores the
way it started. It never holds a key: the key is passed when the judge is built. It lives here, below
the engines and the run path, because a Ray worker rebuilds its judge and evaluator from it.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, Dict, List, Optional, Tuple

from ..judges import registry as judges
from ..judges.base import Judge, judge_settings
from ..judges.cache import default_cache_path
from ..judges.registry import OFFLINE
from ..metrics.combined import AUTO, resolved_mode
from ..metrics.examples import ExampleSet, apply_example_set
from ..metrics.heuristic_sets import DEFAULT_HEURISTICS
from ..metrics.registry import DEFAULT_METRICS, Metric, resolve_metrics
from ..metrics.rubric import rubrics_from_dict
from .evaluation import Language, RAGEvaluator


@dataclass(frozen=True)
class RunConfig:
    """How a run scores, as plain data that can be stored, shown and sent to other processes.

    `judge` is a registered judge kind (evaluator/judges/registry.py): an unknown one is a
    JudgeConfigError naming the registered kinds, here, before anything runs.
    `cache` is the judge-cache file ("" for none). The API key is read, when the judge is built,
    from the argument given or else from the environment variable named by `api_key_env`; with
    no variable named, OPENAI_API_KEY is read for OpenAI's (or $OPENAI_BASE_URL's) URL only.

    `metrics` names what is scored, in order (() = the built-in defaults, then every rubric);
    `rubrics` holds the run's rubric metrics as their TOML tables (name -> {criteria, fields,
    scale, steps}), so a stored run re-runs with the same rubrics; `repeats` is how many times
    each judged metric is asked per sample (repeats differ only when the judge samples: `temperature`
    above 0, or a server that is not deterministic); `judge_mode` says how the judged metrics of a sample are
    put to the judge (metrics/combined.py: auto, separate, grouped, combined).
    """

    judge: str = OFFLINE
    model: str = ""
    base_url: str = ""
    api_key_env: str = ""  # "" = the judge's own rule (a plugin's entry names its variable)
    language: Language = "auto"
    heuristics: str = DEFAULT_HEURISTICS
    max_workers: int = 4
    cache: str = ""
    price_in: Optional[float] = None
    price_out: Optional[float] = None
    temperature: float = 0.0
    metrics: Tuple[str, ...] = ()
    rubrics: Dict[str, Dict[str, Any]] = field(default_factory=dict)
    repeats: int = 1
    batch: bool = False  # through the Batch API (evaluator/batching.py): half price, replies within 24 h
    batch_poll: float = 10.0  # seconds between looks at a running batch
    # AUTO, SEPARATE, GROUPED or COMBINED (metrics/combined.py); a run stores the mode auto resolved to.
    judge_mode: str = AUTO
    # Seconds one judge request may take; a whole judge call (its retries included) ends near twice this.
    judge_timeout: float = 60.0
    # Completion cap of every judge call (0: each metric's own cap, sized for its reply: metrics/*.py).
    judge_max_tokens: int = 0
    # A few-shot example set from reviews (alignment.ExampleSet.to_dict()), added to the prompts of
    # the metrics it has examples for; kept whole so a resumed or re-scored run asks the same prompts.
    alignment: Dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Stored settings come back from JSON: lists for tuples, and possibly no rubrics at all.
        object.__setattr__(self, "metrics", tuple(self.metrics or ()))
        object.__setattr__(self, "rubrics", {str(k): dict(v) for k, v in dict(self.rubrics or {}).items()})
        object.__setattr__(self, "repeats", int(self.repeats or 1))
        object.__setattr__(self, "alignment", dict(self.alignment or {}))
        judges.get_judge(self.judge)  # a typo must never become a silent offline run

    def chosen_metrics(self) -> List[Metric]:
        """The Metric objects this run scores; ValueError naming the problem (unknown name, bad rubric)."""
        rubrics = {r.name: r for r in rubrics_from_dict(self.rubrics, "rubrics")}
        names = self.metrics or (*DEFAULT_METRICS, *rubrics)
        metrics = resolve_metrics([rubrics.get(name, name) for name in names])
        if not self.alignment:
            return metrics
        return apply_example_set(metrics, ExampleSet.from_dict(self.alignment))

    @property
    def offline(self) -> bool:
        return self.judge_entry.offline

    @property
    def judge_entry(self) -> judges.JudgeEntry:
        """The registry entry of this run's judge kind (label, key, what it supports)."""
        return judges.get_judge(self.judge)

    @property
    def workers(self) -> int:
        """Samples scored at once. The offline judge is pure Python: threads only add GIL overhead."""
        return 1 if self.offline else max(1, int(self.max_workers))

    def build_judge(self, api_key: str = "") -> Judge:
        """The judge its registry entry builds; JudgeConfigError when it cannot start (no key for a hosted
        API, bad cache file, a plugin that fails)."""
        return judges.build(self.judge_entry, self, api_key)

    def evaluator(self, judge: Judge) -> RAGEvaluator:
        return RAGEvaluator(judge, language=self.language, heuristics=self.heuristics,
                            metrics=self.chosen_metrics(), repeats=self.repeats, judge_mode=self.judge_mode)

    def to_dict(self) -> Dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "RunConfig":
        """The config in `data` (unknown keys ignored, so a stored run's settings are accepted)."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})

    def settings(self, judge: Optional[Judge] = None) -> Dict[str, Any]:
        """What the history keeps about a run: this config, and the judge's own settings (never a key)."""
        settings = self.to_dict()
        settings["max_workers"] = self.workers
        # Whether replies were cached, never where: a server's file path must not reach the history,
        # a report or an export (from_settings reads True as the default cache file).
        settings["cache"] = bool(self.cache)
        if judge is not None and not self.offline:  # the layout that scored it, for comparisons (may ask the server)
            settings["judge_mode"] = resolved_mode(self.judge_mode, judge)
        settings.update({k: v for k, v in judge_settings(judge).items() if k not in settings})
        return settings

    @classmethod
    def from_settings(cls, settings: Dict[str, Any]) -> "RunConfig":
        """The config a stored run used (older runs stored the cache as a flag: the default file)."""
        data = dict(settings)
        if data.get("cache") is True:
            data["cache"] = str(default_cache_path())
        data["cache"] = data.get("cache") or ""
        data["max_workers"] = int(data.get("max_workers") or 4)
        return cls.from_dict(data)
