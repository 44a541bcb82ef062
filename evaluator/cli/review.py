"""`ragmeter review`: people's reviews of a run, out as label columns and in from label files.

    ragmeter review export RUN_ID -o labels.csv|.jsonl|.parquet
    ragmeter review import RUN_ID labels.csv [--reviewer NAME]
    ragmeter review stats RUN_ID          the judge's agreement with its reviewers, per metric
    ragmeter review align RUN_ID --name SET [--metric M ...]   save few-shot examples for --align-with
"""
from __future__ import annotations

import argparse
from pathlib import Path

from ..io.filetypes import LABELS, formats_for
from ..review.agreement import format_review_agreement, review_agreement
from ..store.history import RunStore
from ..review.labels import export_labels, import_labels
from ..store.reviews import ReviewStore


def add_review_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    review = sub.add_parser("review", help="export or import a run's human reviews as human_<metric> labels")
    actions = review.add_subparsers(dest="review_command", required=True,
                                     help="export, import, stats or align (each has its own --help)")
    for name, text in (("export", "write the run's reviews as human_<metric> columns"),
                       ("import", "store a file's human_<metric> labels as reviews of the run"),
                       ("stats", "the judge's agreement with the run's reviewers, per metric"),
                       ("align", "save the run's reviewed disagreements as a few-shot example set")):
        action = actions.add_parser(name, help=text)
        action.add_argument("run_id", metavar="RUN_ID")
        action.add_argument("--history", default=None, help="run history database (default $RAGMETER_HISTORY)")
        if name == "export":
            action.add_argument("--output", "-o", required=True, help=f"labels file: {' '.join(formats_for(LABELS))}")
        if name == "import":
            action.add_argument("labels", help="dataset file with sample_id and human_<metric> columns")
            action.add_argument("--reviewer", help="whose labels these are (default: import:<file name>)")
        if name == "align":
            action.add_argument("--name", required=True, help="name of the example set (a new version each time)")
            action.add_argument("--metric", action="append", default=[], help="only this metric (repeatable)")
            action.add_argument("--max-examples", type=int, default=4, help="examples per metric (default 4)")


def run_review(args: argparse.Namespace) -> int:
    store = ReviewStore(RunStore(args.history))
    if args.review_command == "export":
        n = export_labels(store, args.run_id, args.output)
        print(f"Wrote {n} reviewed sample{'' if n == 1 else 's'} to {args.output}.")
    elif args.review_command == "import":
        reviewer = args.reviewer or f"import:{Path(args.labels).name}"
        n = import_labels(store, args.run_id, args.labels, reviewer)
        print(f"Stored {n} review{'' if n == 1 else 's'} by {reviewer} for run {args.run_id}.")
    elif args.review_command == "stats":
        table = review_agreement(store.reviews(args.run_id), store.runs.indexed_results(args.run_id))
        print(format_review_agreement(table))
    else:
        from ..review.alignment import build_example_set, save_example_set

        built = build_example_set(store, args.run_id, metrics=args.metric or None, limit=args.max_examples)
        saved = save_example_set(store, args.name, built)
        print(f"Saved example set {saved.label}: " + ", ".join(f"{m} {len(e)}" for m, e in saved.examples.items()))
    return 0
