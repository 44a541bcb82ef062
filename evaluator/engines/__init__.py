"""Engines: where a Run's pending rows are scored. `Run` (evaluator/runs/run.py) is the only way to run;
an engine is the callable it scores with, `engine(samples, on_progress=, on_result=, stop=) -> EvalReport`,
so history, resume, re-score, labels, outputs and the verdict are the same whatever the engine. Every
engine finishes its rows through the one per-row loop, scoring/passes.ScoringPass: it alone decides
whether another row may start (Stop, or a judge its health found dead: judges/health.py), what a row the
dead judge dropped becomes (nothing: it stays pending), progress, usage, and the JudgeFailed that ends a
run early. An engine only decides where rows are scored:

    local (the default)                 the evaluator's own scoring (scoring/evaluation.py), the target
                                        pipeline when the run calls the user's pipeline first (a stage
                                        before scoring), or the Batch API's two passes
    pool.Pool(workers, name)            the one bounded thread pool every local stage runs on (the only
                                        ThreadPoolExecutor in ragmeter): N in flight, stop, cancel on exit
    ray.score_on_ray(config, n, ...)    Ray Data: samples_frame (whole samples) -> map_batches(FrameScorer) ->
                                        rows in order; each worker watches its judge and marks the rows a dead
                                        judge dropped, the driver's pass adopts why and stops as a local run
                                        does; runs/ray_run.RayEngine places a run on it (`--engine ray`, workers)
    partition.score_frame(df, config)   rows in, one results row per sample out (what each Ray worker runs)
    summary.RunTally                    judge usage summed from streamed results frames
"""
from __future__ import annotations

from typing import Callable

from ..model import EvalReport

# An engine: (samples, on_progress=(done, total, result), on_result=(position, result), stop=Event) -> EvalReport.
Engine = Callable[..., EvalReport]
