"""`ragmeter runs --chart ...`: parses the flags, writes the file through service/charts.py, prints its path.

    ragmeter runs --run RUN_ID --chart means|distributions|by-category -o FILE.png|.svg|.pdf
    ragmeter runs --project P --chart trend -o trend.svg      (--run RUN_ID: that run's project)
"""
from __future__ import annotations

import argparse

from ..service.charts import chart_file


def run_chart(args: argparse.Namespace) -> int:
    """One run's chart (--run) or a project's trend (--project); the path written, on stdout."""
    path = chart_file(args.history, args.chart, args.output, run_id=args.run or args.run_id, project=args.project)
    print(f"ragmeter: wrote {path}")
    return 0
