"""A sequential A/B test of two pipelines (evaluator/runs/ab.py): which answers better on one metric,
stopping as soon as the data says so. The command line's `ragmeter ab` asks it here."""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

from ..io.datasets import CLI, load_dataset
from ..judges.base import close_judge
from ..model import EvalSample
from ..runs.ab import ABResult, ABSettings, built, run_ab
from ..runs.run import RunConfig
from ..targets import TargetConfig
from ..team.settings import input_limits


def ab_samples(data: str) -> Sequence[EvalSample]:
    """The questions both pipelines are asked (answers, when the file has them, are not needed), within the
    input limits $RAGMETER_MAX_ROWS/_MB or the team file's [inputs] set (team/settings.py)."""
    rows, mb = (int(s.value) for s in input_limits())
    return load_dataset(data, surface=CLI, needs_answer=False, max_rows=rows, max_bytes=mb * 1_000_000)


def ab_target(spec: str, headers: Sequence[str], timeout: float) -> Any:
    """One side's pipeline, built now (a bad spec fails before any question is asked); headers go to HTTP only."""
    return built(TargetConfig.from_options(spec, headers=headers if spec.startswith("http") else (), timeout=timeout))


def ab_test(samples: Sequence[EvalSample], a: Any, b: Any, config: RunConfig, settings: ABSettings, *,
            on_step: Optional[Callable[[ABResult], None]] = None, workers: int = 4) -> ABResult:
    """Run the test with `config`'s judge (closed after); JudgeFailed when the judge fails (no score of a
    failing judge is trusted)."""
    judge = config.build_judge()
    try:
        return run_ab(samples, (a, b), config.evaluator(judge), settings, on_step=on_step, workers=workers)
    finally:
        close_judge(judge)


__all__ = ["ABResult", "ABSettings", "ab_samples", "ab_target", "ab_test"]
