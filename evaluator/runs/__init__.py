"""Runs: `Run` (start, stop, resume, re-score, saved row by row), started from a `RunConfig` (what a user
picked, as plain data; defined in scoring/run_config.py so the engines can use it, re-exported here);
`ab` the sequential A/B test of two targets (or two stored runs); `jobs` and `worker`, runs queued in
the history and the workers that score them; `child`, the dashboard's worker in a process of its own;
`ray_run`, a worker's runs scored on a Ray cluster.

Used by the CLI and the dashboard; built on scoring/, store/ and targets/.
"""
from .run import Run, RunConfig

__all__ = ["Run", "RunConfig"]
