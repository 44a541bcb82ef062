"""`ragmeter runs`: the run history listed (queued runs with their place in line) with the test-set generations,
or a run or a generation stopped or deleted (cli/jobs.py). The history's reads are the service's (history.py)."""
from __future__ import annotations

import argparse
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .args import UsageError
from ..safetext import drawable
from ..service import history
from ..service.evaluation import version_of
from ..service.history import RunInfo, RunStore

EXIT_OK = 0


# NAME: the run's name (--name, else "dataset · scorer · date"); SCORER: who scored it (store/naming.py);
# DATA: the version of the test set the run scored (io/versions.py).
RUNS_HEADER = ("RUN", "CREATED", "STATUS", "ROWS", "OVERALL", "NAME", "SCORER", "PROJECT", "DATASET", "DATA", "OWNER",
               "ENDING")


def run_row(r: RunInfo, places: Optional[Dict[str, int]] = None) -> Tuple[str, ...]:
    """One run as `ragmeter runs` lists it, under RUNS_HEADER; ENDING says why a run did not pass;
    a queued run's STATUS has its place in the queue (`places`)."""
    status = f"queued #{places[r.run_id]}" if r.status == "queued" and places and r.run_id in places else r.status
    overall = "N/A" if r.overall_mean is None else f"{r.overall_mean:.3f}"
    ending = "-" if r.verdict is None else (r.verdict.label if r.verdict.ok
                                            else f"{r.verdict.label}: {r.verdict.counts.summary()}")
    return (r.run_id, r.created_at.replace("T", " ")[:16], status, f"{r.n_done}/{r.n_samples}", overall,
            one_line(r.label), r.scorer, r.project or "-", r.dataset_name, version_of(r.settings) or "-", r.owner or "-",
            ending)


def one_line(text: str) -> str:
    """A name on one line of the table (a name stored before names were checked may hold a line break)."""
    return " ".join(text.split())


def aligned_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> List[str]:
    """Lines of left-aligned columns, each as wide as its widest cell, the header first. A cell is shown as one
    line of drawable text (safetext.drawable): a name's ESC, CR or bidi control cannot rewrite the terminal."""
    rows = [[_cell(c) for c in row] for row in rows]
    widths = [max(len(str(c)) for c in column) for column in zip(header, *rows)]
    return ["  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip() for row in (header, *rows)]


def _cell(value: object) -> str:
    return " ".join(drawable(str(value)).split())


def run_list(args: argparse.Namespace, store: RunStore) -> int:
    from .jobs import delete_command, stop_command

    if args.action != "list":
        if not args.run_id:
            raise UsageError(f"'ragmeter runs {args.action}' needs a RUN_ID (see 'ragmeter runs')")
        return (stop_command if args.action == "stop" else delete_command)(store, args.run_id)
    places = history.queued_places(store)  # runs whose worker died show as interrupted, not running forever
    runs = store.list_runs(owner=args.owner, project=args.project)
    generations = [] if args.project is not None else history.generations_of(store, owner=args.owner)
    if not runs:
        print("No runs saved yet." if args.owner is None and args.project is None else "No runs match.")
    else:
        print("\n".join(aligned_table(RUNS_HEADER, [run_row(r, places) for r in runs])))
    if any(r.status == "interrupted" for r in runs):
        print("interrupted: its worker stopped mid-run; every finished row is kept: "
              "ragmeter evaluate --resume RUN_ID scores the rest")
    if generations:  # test sets being written (ragmeter generate --history, the Generate page)
        print("\nGenerations (test sets; ragmeter runs stop|delete GEN_ID):")
        print("\n".join(aligned_table(GENERATIONS_HEADER, [generation_row(g, places) for g in generations])))
    return EXIT_OK


GENERATIONS_HEADER = ("GENERATION", "CREATED", "STATUS", "ITEMS", "OWNER", "NAME")


def generation_row(g: Any, places: Dict[str, int]) -> Tuple[str, ...]:
    status = f"queued #{places[g.gen_id]}" if g.status == "queued" and g.gen_id in places else g.status
    return (g.gen_id, g.created_at, status, f"{g.n_items}/{g.target}", g.owner or "-", g.name or "-")
