"""`ragmeter review`: people's reviews of a run, out as label columns and in from label files.

    ragmeter review export RUN_ID -o labels.csv|.jsonl|.parquet
    ragmeter review import RUN_ID labels.csv [--reviewer NAME]
    ragmeter review stats RUN_ID [--json]   the judge's agreement with its reviewers and the corrected mean, per metric
    ragmeter review queue RUN_ID --metric M [--order informative] [-n N] [--seed S]   what to review next
    ragmeter review align RUN_ID --name SET [--metric M ...]   save few-shot examples for --align-with
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..service import history, reviews
from ..service.options import LABELS, formats_for
from ..service.reviews import DEFAULT_SEED, ORDERS, ReviewStore, queue_label


def add_review_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    review = sub.add_parser("review", help="export or import a run's human reviews as human_<metric> labels")
    actions = review.add_subparsers(dest="review_command", required=True,
                                     help="export, import, stats or align (each has its own --help)")
    for name, text in (("export", "write the run's reviews as human_<metric> columns"),
                       ("import", "store a file's human_<metric> labels as reviews of the run"),
                       ("stats", "the judge's agreement with the run's reviewers, per metric"),
                       ("queue", "the samples to review next on a metric, in a chosen order"),
                       ("align", "save the run's reviewed disagreements as a few-shot example set")):
        action = actions.add_parser(name, help=text)
        action.add_argument("run_id", metavar="RUN_ID")
        action.add_argument("--history", default=None, help="run history database (default $RAGMETER_HISTORY, else the "
                                                                    "team file's [server] history, else ~/.ragmeter)")
        if name == "export":
            action.add_argument("--output", "-o", required=True, help=f"labels file: {' '.join(formats_for(LABELS))}")
        if name == "import":
            action.add_argument("labels", help="dataset file with sample_id and human_<metric> columns")
            action.add_argument("--reviewer", help="whose labels these are (default: import:<file name>)")
            action.add_argument("--queue", choices=["random", "informative"], default=None,
                                help="the labelled samples were drawn by this queue (ragmeter review queue), so "
                                     "they correct the judged mean; default: picked by hand")
            action.add_argument("--seed", type=int, default=DEFAULT_SEED, help="the queue's seed (default 0)")
        if name == "stats":
            action.add_argument("--json", action="store_true", help="print every figure as JSON")
        if name == "queue":
            action.add_argument("--metric", required=True, help="the metric to queue by")
            action.add_argument("--order", default="informative", choices=list(ORDERS),
                                help="informative (default: weighted to shrink the corrected interval fastest, "
                                     "unbiased), random, worst, gap, noise or unreviewed")
            action.add_argument("-n", type=int, default=None, help="at most this many samples")
            action.add_argument("--seed", type=int, default=DEFAULT_SEED, help="seed of the random/informative draw")
        if name == "align":
            action.add_argument("--name", required=True, help="name of the example set (a new version each time)")
            action.add_argument("--metric", action="append", default=[], help="only this metric (repeatable)")
            action.add_argument("--max-examples", type=int, default=4, help="examples per metric (default 4)")


def run_review(args: argparse.Namespace) -> int:
    store = reviews.review_store(history.open_history(history.history_for(args.history)))
    if args.review_command == "export":
        exported = reviews.export_reviews(store, args.run_id, args.output)
        n = exported.rows
        if exported.reviewed:
            print(f"Wrote {n} reviewed sample{'' if n == 1 else 's'} to {args.output}.")
        else:
            print(f"Wrote {n} row{'' if n == 1 else 's'} to label to {args.output}: fill in the human_<metric> "
                  f"columns, then ragmeter review import {args.run_id} {args.output}")
    elif args.review_command == "import":
        reviewer = args.reviewer or f"import:{Path(args.labels).name}"
        queue = queue_label(args.queue, args.seed) if args.queue else "import"
        n = reviews.import_reviews(store, args.run_id, args.labels, reviewer, queue)
        print(f"Stored {n} review{'' if n == 1 else 's'} by {reviewer} for run {args.run_id}.")
    elif args.review_command == "stats":
        table = reviews.agreement(store, args.run_id)
        if args.json:
            print(json.dumps({m: a.to_dict() for m, a in table.items()}, indent=2, ensure_ascii=False))
        else:
            print(reviews.format_review_agreement(table))
    elif args.review_command == "queue":
        print_queue(store, args)
    else:
        saved = reviews.save_examples(store, args.run_id, args.name, metrics=args.metric or None,
                                      limit=args.max_examples)
        print(f"Saved example set {saved.label}: " + ", ".join(f"{m} {len(e)}" for m, e in saved.examples.items()))
    return 0


def print_queue(store: ReviewStore, args: argparse.Namespace) -> None:
    """One line per sample to review: position, run index, sample id, the judge's score, reviewed yet."""
    queue = reviews.next_to_review(store, args.run_id, args.metric, args.order, n=args.n, seed=args.seed)
    print(f"# queue {queue_label(args.order, args.seed)} on {args.metric}: review in this order "
          "(reviews from the Review page record the queue; the corrected mean needs the random or informative one)")
    for q in queue:
        mark = "reviewed" if q.reviews else ""
        print(f"{q.place:>4}  #{q.index:<5} {q.sample_id:<20} {q.score:.3f}  {mark}".rstrip())
