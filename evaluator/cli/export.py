"""`ragmeter export RUN_ID -o FILE`: a saved run as any file the Report page downloads.

    ragmeter export RUN_ID -o summary.pdf      the one-page PDF summary
    ragmeter export RUN_ID -o report.html      the HTML report
    ragmeter export RUN_ID -o results.xlsx     the Excel workbook (.csv, .json, .parquet: every row)

The type is the file's extension. The file is built by the same use case as the dashboard's download buttons
(service/exports.py), from the run's stored summary and its rows read a page at a time. Exit 0, or 2 for an
unknown run, an extension ragmeter does not write, or a path it cannot write to.
"""
from __future__ import annotations

import argparse
from typing import Any

from ..service.compare import cli_history
from ..service.exports import EXPORT_TYPES, export_run


def add_export_parser(sub: Any) -> None:
    types = ", ".join(f".{t.ext} ({t.what})" for t in EXPORT_TYPES.values())
    cmd = sub.add_parser("export", help="write a saved run as PDF, HTML, Excel, CSV, JSON or Parquet (by -o's extension)",
                         description=__doc__.split("\n\n")[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    cmd.add_argument("run_id", metavar="RUN_ID", help="the run to export (list them with: ragmeter runs)")
    cmd.add_argument("--output", "-o", required=True, metavar="FILE", help=f"the file to write; its type: {types}")
    cmd.add_argument("--pdf-page", choices=("a4", "letter"), default=None,
                     help="the .pdf summary's page size (default $RAGMETER_PDF_PAGE, else a4)")
    cmd.add_argument("--history", default=None, help="run history: a SQLite file or a postgresql:// URL "
                     "(default $RAGMETER_HISTORY, else the team file's [server] history, else ~/.ragmeter)")


def run_export(args: argparse.Namespace) -> int:
    kind = export_run(cli_history(args.history), args.run_id, args.output, page=args.pdf_page or "")
    print(f"ragmeter: wrote {args.output} ({kind.what})")
    return 0
