"""`ragmeter generate`: a test set from documents, and the coverage map of any test set.

    ragmeter generate --docs docs/ --model gpt-4o-mini -o testset.jsonl [--n 50] [--language ar|mix]
    ragmeter generate --docs "postgresql://…" --docs-query "SELECT title, body FROM documents" --model M -o t.csv
    ragmeter generate --docs docs/ --model M --fill-gaps testset.jsonl -o testset2.jsonl
    ragmeter generate --docs docs/ --coverage-only my_questions.csv
    ragmeter generate --docs docs/ --offline -o cloze.jsonl      # extractive, retrieval checks only
    ragmeter generate --docs docs/ --model M -o t.jsonl --history H   # also a job in the history (runs/generation.py)

Exit codes: 0 ok; 1 fewer than --n items passed the checks (the kept ones are written, the last line
says why); 2 bad input or usage, or no model; 3 the judge failed (its cause on the last line);
130 interrupted (the kept items are written: --resume continues).
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Set, Tuple

from ..errors import RagmeterError
from ..service.generation import (DEFAULT_MIX, REASONS, GenerateSettings, Generation, GenerationTask, TestItem,
                                  coverage_table, parse_mix, queue_pinned, read_chunks, read_testset, uncovered,
                                  write_testset)
from ..service.options import OPENAI, TESTSET, RunConfig, file_type

if TYPE_CHECKING:  # type names only
    from ..service.generation import Chunk, Section

EXIT_OK, EXIT_SHORT, EXIT_USAGE, EXIT_JUDGE, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
NO_MODEL = ("generate needs a model to write and check questions: --model NAME [--base-url URL] (any "
            "OpenAI-compatible endpoint); or --offline for extractive cloze items, useful for retrieval checks only")
OFFLINE_NOTE = ("offline extractive mode: each question is a sentence of a chunk with one word blanked; use the "
                "set for retrieval checks (expected-document recall) only, not to judge answers")


class GenerateUsage(RagmeterError):
    """Bad arguments to `ragmeter generate` (exit 2)."""


def run_generate(args: argparse.Namespace) -> int:
    check_args(args)
    documents, chunks = read_chunks(args.docs, args.docs_query, args.chunk_chars)
    sections = {(c.title, c.section) for c in chunks}
    print(f"{documents} documents, {len(sections)} sections, {len(chunks)} chunks")
    if args.coverage_only:
        print(coverage_table(chunks, read_testset(args.coverage_only)))
        return EXIT_OK
    existing, only, n = starting_point(args, chunks)
    if n <= 0:
        print(f"ragmeter: ok: nothing to add ({len(existing)} items already; --n {args.n})", file=sys.stderr)
        write_testset(existing, args.output)
        return EXIT_OK
    if args.offline:
        print(OFFLINE_NOTE)
    config = judge_config(args)
    settings = GenerateSettings(n=n, mix=parse_mix(args.kinds) if args.kinds else dict(DEFAULT_MIX),
                                language=args.language, max_attempts=args.max_attempts, seed=args.seed,
                                workers=config.workers)
    judge = config.build_judge()
    if args.history:
        return generate_as_job(args, judge, chunks, settings, config, existing, only)
    gen = Generation(judge, chunks, settings, existing=existing, only=only, generator=args.model or "")
    interrupted = drive(gen, existing, args)
    return finish(gen, existing + gen.items, chunks, args, interrupted)


def generate_as_job(args: argparse.Namespace, judge: Any, chunks: List[Chunk], settings: GenerateSettings,
                    config: RunConfig, existing: List[TestItem], only: Optional[Set[Section]]) -> int:
    """--history: the generation is stored and queued as a job pinned to this process, claimed by its own
    worker and driven here as without it (the file written as items are kept); `ragmeter runs stop GEN_ID`
    from elsewhere stops it as Ctrl-C does."""
    from ..service import history
    from .jobs import claim_own, failed_to_start, stopped_elsewhere

    store = history.open_history(args.history)
    gen_id = queue_pinned(store, chunks, settings, config, name=os.path.basename(args.docs.rstrip("/")) or args.docs,
                          existing=existing, only=only, generator=args.model or "", judge=judge)
    worker, task = claim_own(store, gen_id, args.quiet)
    if not isinstance(task, GenerationTask):  # None: it failed to start
        print(f"ragmeter: the generation failed: {failed_to_start(store, gen_id)}", file=sys.stderr)
        return EXIT_JUDGE
    if not args.quiet:
        print(f"generation {gen_id} in {store.shown} (stop it with: ragmeter runs stop {gen_id})", file=sys.stderr)
    interrupted = drive(task.gen, existing, args, started=True)
    worker.drain(5.0)  # the job ends in the history before the process goes
    if not interrupted and task.gen.status == "stopped" and stopped_elsewhere(store, gen_id):
        print("ragmeter: the generation was stopped from elsewhere (ragmeter runs stop, or the dashboard)",
              file=sys.stderr)
        interrupted = True
    return finish(task.gen, existing + task.gen.items, chunks, args, interrupted)


def check_args(args: argparse.Namespace) -> None:
    if args.coverage_only:
        if args.output or args.fill_gaps or args.resume:
            raise GenerateUsage("--coverage-only writes nothing: drop --output, --fill-gaps and --resume")
        return
    if not args.model and not args.offline:
        raise GenerateUsage(NO_MODEL)
    if not args.output:
        raise GenerateUsage("generate needs --output testset.jsonl (or .csv, .parquet)")
    file_type(args.output, TESTSET)  # an extension ragmeter does not write: said before any judge call
    if args.n is not None and args.n < 1:
        raise GenerateUsage(f"--n {args.n}: ask for at least one item")
    if args.fill_gaps and args.resume:
        raise GenerateUsage("--fill-gaps and --resume cannot be combined: fill the gaps of one file at a time")
    if args.base_url and not args.model:
        raise GenerateUsage("--base-url needs --model (the model name the endpoint serves)")
    if args.max_attempts < 0 or args.chunk_chars < 1 or args.max_workers < 1:
        raise GenerateUsage("--max-attempts must be >= 0, --chunk-chars and --max-workers >= 1")


def starting_point(args: argparse.Namespace, chunks: List[Chunk]) -> Tuple[List[TestItem], Optional[Set[Section]], int]:
    """(items already there, the sections to write for or None for all, how many new items to keep)."""
    wanted = args.n if args.n is not None else 50
    if args.fill_gaps:
        existing = read_testset(args.fill_gaps)
        gaps: Set[Section] = uncovered(chunks, existing)
        print(f"--fill-gaps: {len(gaps)} untouched sections in {args.fill_gaps}")
        if not gaps:
            return existing, gaps, 0
        return existing, gaps, min(wanted, len(gaps)) if args.n is None else wanted
    if args.resume:
        if not os.path.exists(args.output):
            raise GenerateUsage(f"--resume: {args.output} does not exist yet; run without --resume first")
        existing = read_testset(args.output) if os.path.getsize(args.output) else []  # nothing kept yet
        print(f"--resume: {len(existing)} items already in {args.output}")
        return existing, None, wanted - len(existing)
    return [], None, wanted


def judge_config(args: argparse.Namespace) -> RunConfig:
    if args.offline:
        return RunConfig()
    return RunConfig(judge=OPENAI, model=args.model, base_url=args.base_url or "", api_key_env=args.api_key_env,
                     cache="" if args.no_cache else args.cache, max_workers=args.max_workers)


def drive(gen: Generation, existing: List[TestItem], args: argparse.Namespace, started: bool = False) -> bool:
    """Run the generation (`started`: a worker started it), writing the file as items are kept; True when
    Ctrl-C stopped it."""
    if not started:
        gen.start()
    written = -1
    interrupted = False
    while True:
        try:
            gen.join(0.25)
        except KeyboardInterrupt:
            interrupted = True
            gen.stop()
            print("\nragmeter: stopping: the items in flight finish, then the file is written…", file=sys.stderr)
            continue
        if len(gen.items) != written:
            written = len(gen.items)
            save(existing + gen.items, args.output)
            if not args.quiet:
                print(f"\r{written}/{gen.settings.n} kept, {gen.attempts} attempts, "
                      f"{sum(gen.rejected.values())} rejected", end="", file=sys.stderr, flush=True)
        if not gen.running and gen.status != "ready":
            break
    if not args.quiet:
        print(file=sys.stderr)
    return interrupted


def save(items: List[TestItem], path: str) -> None:
    """Write atomically, so an interrupted write never leaves half a test set."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    tmp = f"{path}.tmp{Path(path).suffix}"
    write_testset(items, tmp)
    os.replace(tmp, path)


def finish(gen: Generation, items: List[TestItem], chunks: List[Chunk], args: argparse.Namespace,
           interrupted: bool) -> int:
    save(items, args.output)
    print_summary(gen)
    print(coverage_table(chunks, items, gen.index))
    print(f"wrote {len(items)} items to {args.output}")
    if gen.status == "failed":
        print(f"ragmeter: judge failed: {gen.error}", file=sys.stderr)
        return EXIT_JUDGE
    if interrupted:
        print(f"ragmeter: interrupted: {len(gen.items)} new items kept; continue with --resume", file=sys.stderr)
        return EXIT_INTERRUPTED
    short = gen.shortfall()
    if short:
        print(f"ragmeter: SHORT: {short}", file=sys.stderr)
        return EXIT_SHORT
    label = " (offline extractive: retrieval checks only)" if gen.offline else ""
    print(f"ragmeter: ok: {len(gen.items)} items kept{label}", file=sys.stderr)
    return EXIT_OK


def print_summary(gen: Generation) -> None:
    kinds: Dict[str, int] = {}
    for item in gen.items:
        kinds[item.kind] = kinds.get(item.kind, 0) + 1
    print(f"kept {len(gen.items)} items ({', '.join(f'{k} {v}' for k, v in sorted(kinds.items())) or 'none'}) "
          f"from {gen.attempts} attempts in {gen.elapsed:.1f} s")
    for reason, count in gen.rejected.most_common():
        print(f"  rejected {count:>4}  {reason}: {REASONS.get(reason, reason)}")
    if not gen.offline:
        per = f", {gen.calls / len(gen.items):.1f} calls and {gen.tokens / len(gen.items):.0f} tokens per kept item" \
            if gen.items else ""
        print(f"judge: {gen.calls} calls, {gen.tokens} tokens{per}")

