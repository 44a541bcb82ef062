"""Runs: `RunConfig` (what a user picked, as plain data) and `Run` (start, stop, resume, re-score, saved row by row);
`ab` the sequential A/B test of two targets (or two stored runs).

Used by the CLI, the dashboard and the engines; built on scoring/ and store/.
"""
from .run import Run, RunConfig

__all__ = ["Run", "RunConfig"]
