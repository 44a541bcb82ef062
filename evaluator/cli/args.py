"""The `ragmeter` command's options: every flag, its default and its help, in one place.

`ragmeter evaluate --help` shows them in groups (data, target, judge, metrics, output, history, scale);
`ragmeter --help` ends with every input the tool reads (readable_formats_help). What the options mean at run
time (configs, thresholds, targets) is turned into plain data here and in command.py.
"""
from __future__ import annotations

import argparse
import textwrap
from typing import Any, Dict, Sequence, Tuple
from urllib.parse import quote

from .review import add_review_parser
from .compare import add_compare_parser
from .export import add_export_parser
from .note import add_note_parser
from .config_cmd import add_config_parser
from .judge_check import add_judge_parser
from .serve import add_serve_parsers
from ..errors import RagmeterError
from ..service.options import AB_METRIC as DEFAULT_METRIC
from ..service.options import DATASET, DOCUMENTS, FILE_TYPES, formats_for
from ..service.options import AUTO_JUDGE_MODE as AUTO, JUDGE_MODES
from ..service.options import DEFAULT_HEURISTICS, HEURISTIC_SETS, canonical, known_metrics, load_rubrics
from ..service.options import MAX_FALLBACK_RATE as DEFAULT_MAX_FALLBACK_RATE
from ..service.options import OFFLINE, OPENAI, RunConfig, get_judge, judge_cache, judge_kinds


# Every input the tool reads, for `ragmeter --help`: (what, where it is given, the formats). The file types
# come from the registry (io/filetypes.py), read when the help is made, so a format registered is listed.
def readable_formats_help() -> Tuple[Tuple[str, str, str], ...]:
    datasets = " ".join(formats_for(DATASET))
    both = {DATASET.name, DOCUMENTS.name}
    tables = " ".join(t.suffix for t in FILE_TYPES if t.table and both <= t.purposes)
    documents = " ".join(t.suffix for t in FILE_TYPES if DOCUMENTS.name in t.purposes and not t.table)
    abouts = "; ".join(f"{t.suffix}: {t.about}" for t in FILE_TYPES if t.about and DATASET.name in t.purposes)
    return (
        ("datasets", "evaluate DATA", f"{datasets}{f' ({abouts})' if abouts else ''}, or a Hugging Face "
                                      "save_to_disk folder"),
        ("conversations", "evaluate DATA", "the same files holding ragas MultiTurnSample, deepeval turns, OpenAI "
                                            "messages, ShareGPT, one row per turn, or ragmeter's own turns"),
        ("other tools' files", "evaluate DATA", "ragas, deepeval (datasets and test runs), Phoenix (files, spans, "
                                                 "dataset exports), TruLens, LangSmith, Langfuse (items, traces, "
                                                 "observations), MLflow (results, traces, datasets), promptfoo, "
                                                 "Haystack evaluation reports, LlamaIndex datasets, DSPy Evaluate "
                                                 "results; inspect_ai logs; OpenInference and OTLP/JSON spans"),
        ("retrieval runs", "evaluate RUN --qrels QRELS", "TREC run and qrels files (any extension); a BEIR folder "
                                                          "with --run RUN"),
        ("documents", "generate --docs", f"{documents} files in a folder, tables {tables}, or PostgreSQL with "
                                          "--docs-query"),
        ("labels", "review import", f"{tables} with human_<metric> columns"),
        ("rubrics", "evaluate --rubrics", ".toml, one table per metric"),
        ("run history", "--history", "a SQLite file or a postgresql:// URL"),
    )


def formats_epilog(columns: int = 100) -> str:
    """readable_formats_help() as `ragmeter --help`'s last lines: one entry each, wrapped under its formats."""
    inputs = readable_formats_help()
    width = max(len(what) for what, _, _ in inputs)
    entries = [textwrap.fill(f"{formats} ({where})", columns, initial_indent=f"  {what:<{width}}  ",
                             subsequent_indent=" " * (width + 4)) for what, where, formats in inputs]
    return "ragmeter reads:\n" + "\n".join(entries)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ragmeter", description="Measure the quality of RAG answers.",
                                     epilog=formats_epilog(), formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"ragmeter {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    ev = sub.add_parser("evaluate", help="score a dataset (CSV, JSONL, JSON, Parquet, a saved dataset folder)")
    for add in (_data_group, add_target_arguments, _judge_group, _metrics_group, _output_group, _history_group,
                _scale_group):
        add(ev)
    add_review_parser(sub)
    add_ab_parser(sub)
    add_generate_parser(sub)
    add_compare_parser(sub)
    add_export_parser(sub)
    add_note_parser(sub)
    add_collect_parser(sub)
    runs = sub.add_parser("runs", help="list saved runs (queued ones with their place); stop or delete one",
                          description="ragmeter runs                 list the history, newest first: queued runs "
                                      "show their place in the queue, interrupted ones can be resumed\n"
                                      "ragmeter runs stop RUN_ID     stop a run wherever it runs (a CLI, a worker, "
                                      "a dashboard): it ends within about a second, every finished row kept\n"
                                      "ragmeter runs delete RUN_ID   stop it first, then delete it with its rows",
                          formatter_class=argparse.RawDescriptionHelpFormatter)
    runs.add_argument("action", nargs="?", choices=("list", "stop", "delete"), default="list",
                      help="list (default), stop or delete")
    runs.add_argument("run_id", nargs="?", metavar="RUN_ID", help="the run to stop or delete (see 'ragmeter runs')")
    runs.add_argument("--history", default=None, help=HISTORY_HELP)
    runs.add_argument("--owner", default=None, help="only the runs this user started")
    runs.add_argument("--project", default=None, help="only the runs of this project")
    runs.add_argument("--chart", choices=("means", "distributions", "by-category", "trend"), default=None,
                      help="write a chart with its provenance caption: one run's (with --run) or a project's "
                           "runs over time (trend, with --project) to -o FILE.png|.svg|.pdf (cli/charts.py)")
    runs.add_argument("--run", default=None, metavar="RUN_ID", help="the run whose chart --chart writes")
    runs.add_argument("--output", "-o", default=None, metavar="FILE",
                      help="where --chart writes (default ./ragmeter-<dataset>-<run>-<chart>.svg)")
    add_worker_parser(sub)
    add_config_parser(sub)
    add_judge_parser(sub)  # ragmeter judge check (cli/judge_check.py)
    add_serve_parsers(sub)
    return parser


def add_worker_parser(sub: Any) -> None:
    """`ragmeter worker`: executes queued runs (evaluator/runs/worker.py) until stopped."""
    worker = sub.add_parser(
        "worker", help="run queued runs from the history until stopped (a team's runs, or 'evaluate --submit')",
        description="Claim queued runs from the history and score them, --slots at a time, until SIGTERM or "
                    "Ctrl-C (then runs in flight end 'interrupted' with every finished row saved, within 10 s, "
                    "and another worker resumes them). Prints one line per run claimed and ended. Start any "
                    "number, on any machine, pointing at one PostgreSQL history. A run's judge key is read "
                    "from this worker's environment (the variable the run names, e.g. OPENAI_API_KEY).")
    worker.add_argument("--history", default=None, help=HISTORY_HELP)
    worker.add_argument("--slots", type=int, default=2, metavar="N", help="runs scored at once (default %(default)s)")
    worker.add_argument("--engine", choices=("local", "ray"), default=None,
                        help="where a claimed run is scored: local (this process) or ray (a Ray cluster this "
                             "worker joins or starts; default: the team config's [runs] engine, else local)")
    worker.add_argument("--ray-address", default=None, metavar="ADDRESS",
                        help="with --engine ray: the Ray cluster to join, auto or ray://host:10001 (default: the "
                             "team config's [runs] ray_address, else a local cluster started by this worker)")
    worker.add_argument("--ray-workers", type=int, default=None, metavar="N",
                        help="with --engine ray: Ray workers scoring each run; the run's judge concurrency is "
                             "shared among them (default: [runs] ray_workers, else 2)")
    worker.add_argument("--once", action="store_true", help="exit once no run is queued or running here")
    worker.add_argument("--parent", type=int, default=None, metavar="PID",
                        help="stop as on SIGTERM when process PID ends (the dashboard starts its worker so)")


HISTORY_HELP = ("run history: a SQLite file or a postgresql:// URL (default $RAGMETER_HISTORY, else the team file's "
                "[server] history, else ~/.ragmeter; 'ragmeter config' shows which)")


def _data_group(ev: argparse.ArgumentParser) -> None:
    group = ev.add_argument_group("data", "the file to score and how its columns are read")
    group.add_argument("data", nargs="?", help="dataset file; optional with --resume")
    group.add_argument("--mapping", action="append", default=[], metavar="FIELD=COLUMN",
                       help="read a field from a column, or from a path inside one "
                            "(question=inputs.question, contexts=outputs.documents[].page_content)")
    group.add_argument("--qrels", metavar="QRELS", help="DATA is a TREC run file (query Q0 doc rank score name): "
                       "score it against these TREC or BEIR qrels with the retrieval metrics (any extension)")
    group.add_argument("--run", metavar="RUN", help="DATA is a BEIR folder (queries.jsonl, qrels/test.tsv): score this "
                       "TREC run file of its queries with the retrieval metrics")
    group.add_argument("--sheet", metavar="NAME", help="an Excel workbook's sheet to read (default: the first sheet "
                       "whose header names a question)")
    group.add_argument("--max-rows", type=int, metavar="N", help="refuse a dataset of more rows (default: "
                       "$RAGMETER_MAX_ROWS, the team file's [inputs] max_rows, else 100,000)")
    group.add_argument("--max-mb", type=int, metavar="MB", help="refuse a dataset file larger, or unpacking to more, "
                       "than this (default: $RAGMETER_MAX_MB, the team file's [inputs] max_mb, else 1,000)")
    group.add_argument("--labels", action="store_true", help="report agreement with human_<metric> label columns "
                       "and with other tools' grades (external_<tool>_<metric>) of the metrics ragmeter also scores")
    group.add_argument("--no-tool-evidence", action="store_true", help="conversations: do not read a tool's reply as "
                       "a context of the assistant turn after it (it is, by default)")


def _judge_group(ev: argparse.ArgumentParser) -> None:
    group = ev.add_argument_group("judge", "who gives the scores, and what it may cost")
    judge = group.add_mutually_exclusive_group()
    judge.add_argument("--offline", action="store_true", help="score with heuristics only (the default without --model)")
    judge.add_argument("--model", help="judge model name on an OpenAI-compatible endpoint (or the --judge's model)")
    group.add_argument("--judge", metavar="NAME",
                       help=f"which judge scores: {', '.join(judge_kinds())} (default: openai with --model, else "
                            "offline; packages add more under the 'ragmeter.judges' entry points)")
    group.add_argument("--base-url", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1")
    group.add_argument("--api-key-env", default="",
                       help="environment variable holding the API key (default: the judge's own; for openai "
                            "OPENAI_API_KEY, which is sent only to OpenAI's own URL or $OPENAI_BASE_URL; name it "
                            "to send it to --base-url)")
    group.add_argument("--judge-timeout", type=float, default=60.0, metavar="S",
                       help="seconds one judge request may take, its whole reply included (default %(default)s); a "
                            "judge call, retries included, ends within about twice this, and a run whose judge never "
                            "answers within it stops after its first calls")
    group.add_argument("--judge-max-tokens", type=int, default=None, metavar="N",
                       help="completion cap of every judge call (default: $RAGMETER_JUDGE_MAX_TOKENS, the team "
                            "file's [judge] max_tokens, else each metric's own: 128 for a score, ~500 for verdict lists)")
    group.add_argument("--judge-mode", default=AUTO, choices=JUDGE_MODES,
                       help="how a sample's judged metrics are asked: auto (default) is separate on a server that "
                            "reuses a cached prompt prefix (llama.cpp, vLLM, Ollama, LM Studio) and grouped on any "
                            "other; separate: one call per metric, the calls sharing one prompt prefix; grouped: "
                            "the metrics that read the contexts in one call, so the contexts are sent (and billed) "
                            "once; combined: one call per sample (fewest calls and tokens, a harder task for small "
                            "judges)")
    group.add_argument("--temperature", type=float, default=0.0, help="the judge's sampling temperature (default 0)")
    group.add_argument("--no-cache", action="store_true", help="do not use the on-disk judge cache")
    group.add_argument("--cache", default=str(judge_cache().value),
                       help="judge cache file (default $RAGMETER_JUDGE_CACHE or %(default)s)")
    group.add_argument("--dry-run", action="store_true", help="estimate judge calls, tokens and cost; call nothing")
    group.add_argument("--price-in", type=float, help="price per million prompt tokens")
    group.add_argument("--price-out", type=float, help="price per million completion tokens")


def _metrics_group(ev: argparse.ArgumentParser) -> None:
    group = ev.add_argument_group("metrics", "what is scored, in which language, how many times")
    group.add_argument("--metrics", metavar="NAMES",
                       help="comma-separated metrics to score, in order, e.g. faithfulness,answer_relevancy,"
                            "politeness (default: the five built-ins, keyword/expected-doc rules, and every "
                            "--rubrics metric)")
    group.add_argument("--rubrics", action="append", default=[], metavar="FILE.toml",
                       help="rubric metrics in plain words, one TOML table each: criteria, fields, scale, steps")
    group.add_argument("--language", choices=["ar", "en", "auto"], default="auto",
                       help="language of the prompts and heuristics; auto detects it per sample (default)")
    group.add_argument("--heuristics", default=DEFAULT_HEURISTICS, choices=sorted(HEURISTIC_SETS),
                       help="offline scorers: ragmeter (default), jaccard (the seed's), embedding "
                            "(needs pip install 'ragmeter[embeddings]')")
    group.add_argument("--repeats", type=int, default=1, metavar="K",
                       help="ask the judge K times per judged metric; the score is the mean and the report "
                            "shows the judge's noise (default 1; use with --temperature above 0)")
    group.add_argument("--align-with", metavar="SET", help="add a saved few-shot example set (NAME or NAME@vN, made "
                       "by 'ragmeter review align') to the judged metrics' prompts")


def _output_group(ev: argparse.ArgumentParser) -> None:
    group = ev.add_argument_group("output", "the report, the exit code and the progress line")
    group.add_argument("--output", "-o",
                       help="write the report: .json (default), .csv, .xlsx, .html, .parquet (one row per sample; "
                            ".xlsx: a Summary and a Samples sheet) or .pdf (the one-page summary)")
    group.add_argument("--pdf-page", choices=("a4", "letter"), default=None,
                       help="the .pdf summary's page size (default $RAGMETER_PDF_PAGE, else a4)")
    group.add_argument("--no-bom", action="store_true", help="write a .csv report without the UTF-8 byte-order mark "
                       "(it has one by default, so Excel reads non-Latin text correctly)")
    group.add_argument("--fail-under", action="append", default=[], metavar="METRIC=VALUE",
                       help="exit 1 when the mean of METRIC (any chosen metric, or 'overall') is below VALUE "
                            "(0-1, e.g. faithfulness=0.8)")
    group.add_argument("--max-fallback-rate", type=float, default=DEFAULT_MAX_FALLBACK_RATE, metavar="RATE",
                       help="exit 3 when more than this share of judged scores fell back to the heuristic "
                            "after judge failures (0-1, default %(default)s)")
    group.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    group.add_argument("--dashboard-url", default=None, metavar="URL",
                       help="the team dashboard's address: print the run's share link (URL/report?run=RUN_ID) "
                            "as the last line of output")


def _history_group(ev: argparse.ArgumentParser) -> None:
    group = ev.add_argument_group("history", "where the run is saved, and runs taken up again")
    group.add_argument("--history", default=None, help=HISTORY_HELP)
    group.add_argument("--no-history", action="store_true", help="do not save this run in the history")
    group.add_argument("--project", default=None, help="the project the run is listed under (default: the "
                       "dataset's file name); the owner is $RAGMETER_USER, else your login name")
    group.add_argument("--name", default=None, metavar="NAME",
                       help="the run's name in `ragmeter runs`, History, compare and the reports (at most 120 "
                            "characters; default: 'dataset · scorer · YYYY-MM-DD HH:MM')")
    group.add_argument("--prompt-version", default=None, metavar="LABEL",
                       help="the version of your prompt or template this run measures (e.g. v3): recorded with "
                            "the run, with the git commit, and listed by compare and the History trend")
    group.add_argument("--resume", metavar="RUN_ID", help="continue an interrupted run from the history")
    group.add_argument("--rescore", metavar="RUN_ID", help="score the answers saved in a run again (e.g. with "
                       "another judge); the target is not called")
    group.add_argument("--submit", action="store_true", help="queue the run for 'ragmeter worker' processes and "
                       "print its id; nothing is scored here (the workers read the judge key from their own "
                       "environment). Without it the run is scored here, and 'ragmeter runs stop RUN_ID' "
                       "from another shell stops it")


def add_judge_options(parser: argparse.ArgumentParser, offline_default: str, judge_help: str) -> None:
    """The judge flags of a command that scores besides `evaluate` (ab, collect): --offline | --model, --judge,
    --base-url, --api-key-env."""
    judge = parser.add_mutually_exclusive_group()
    judge.add_argument("--offline", action="store_true", help=f"score with heuristics only ({offline_default})")
    judge.add_argument("--model", help="judge model name on an OpenAI-compatible endpoint")
    parser.add_argument("--judge", metavar="NAME", help=judge_help)
    parser.add_argument("--base-url", help="the judge's OpenAI-compatible endpoint")
    parser.add_argument("--api-key-env", default="", help="environment variable holding the judge's API key")


def _scale_group(ev: argparse.ArgumentParser) -> None:
    group = ev.add_argument_group("scale", "how many at once, where, and the Batch API")
    group.add_argument("--max-workers", type=int, default=4,
                       help="samples scored at once against the judge (default %(default)s)")
    group.add_argument("--engine", choices=["local", "ray"], default="local",
                       help="local: this process (default); ray: a Ray cluster (pip install 'ragmeter[ray]')")
    group.add_argument("--ray-address",
                       help="Ray cluster to join: auto, or ray://host:10001 (default: start a local one)")
    group.add_argument("--ray-workers", type=int, default=2,
                       help="scoring workers on Ray; --max-workers is the judge concurrency shared among them")
    group.add_argument("--batch", action="store_true",
                       help="send the judge calls through the OpenAI Batch API (/files + /batches): half price on "
                            "OpenAI and Azure, replies within 24 h; give batch prices to --price-in/--price-out")
    group.add_argument("--batch-poll", type=float, default=10.0, metavar="SECONDS",
                       help="seconds between looks at a running batch (default %(default)s)")


def add_target_arguments(ev: argparse.ArgumentParser) -> None:
    """Options of a target: the user's pipeline, called for each question before scoring."""
    group = ev.add_argument_group("target", "ask your pipeline each question; the file then needs only questions")
    group.add_argument("--target", help="http(s)://… endpoint, module.sub:function, path/file.py:function, "
                                        "or openai:MODEL (a bare chat model, no retrieval); its answers and "
                                        "contexts replace any the file has")
    group.add_argument("--target-body", help='JSON body template; {question} is replaced, JSON-escaped '
                                             '(default {"question": "{question}"})')
    group.add_argument("--target-header", action="append", default=[], metavar="'NAME: VALUE'",
                       help="HTTP header; ${VAR} is read from the environment at call time, never saved")
    group.add_argument("--target-field", action="append", default=[], metavar="NAME=PATH",
                       help="where the reply holds answer/contexts/tool_calls, e.g. contexts=data.hits[].passage")
    group.add_argument("--target-base-url", default="", help="endpoint of an openai:MODEL target")
    group.add_argument("--target-workers", type=int, default=4, help="questions sent to the target at once")
    group.add_argument("--record", metavar="PATH.jsonl", help="conversations: also write the replayed conversations "
                       "here as JSON Lines (the run history keeps them anyway)")
    group.add_argument("--target-timeout", type=float, default=60.0, help="seconds per target call")


def add_ab_parser(sub: Any) -> None:
    """`ragmeter ab`: the sequential A/B test of two targets (evaluator/cli/ab.py runs it)."""
    ab = sub.add_parser("ab", help="sequential A/B test of two pipelines: stops as soon as one wins or they tie",
                        description="Send the dataset's questions in random order to both targets, score both "
                                    "answers, and stop when an anytime-valid confidence sequence for the mean "
                                    "difference excludes 0 (a winner) or lies within ±tie (no practical difference).")
    ab.add_argument("data", help="dataset file with the questions (CSV, JSONL or JSON)")
    ab.add_argument("--target", required=True, help="pipeline A: URL, module:function, file.py:function or openai:MODEL")
    ab.add_argument("--target-b", required=True, help="pipeline B, in the same forms")
    ab.add_argument("--target-header", action="append", default=[], metavar="'NAME: VALUE'",
                    help="HTTP header for both targets; ${VAR} is read from the environment at call time")
    ab.add_argument("--target-timeout", type=float, default=60.0, help="seconds per target call")
    ab.add_argument("--metric", default=DEFAULT_METRIC, help="the metric compared (default %(default)s)")
    ab.add_argument("--alpha", type=float, default=0.05, help="chance of a false winner (default %(default)s)")
    ab.add_argument("--tie", type=float, default=0.02,
                    help="differences within ±this are no practical difference (default %(default)s)")
    ab.add_argument("--max-samples", type=int, default=None, metavar="N", help="ask at most N questions")
    ab.add_argument("--seed", type=int, default=0, help="seed of the random order (default 0)")
    ab.add_argument("--workers", type=int, default=4, metavar="N",
                    help="questions in flight at once, each asked of A and B (default %(default)s); at most N-1 "
                         "are asked past the one the test stops at")
    ab.add_argument("--json", metavar="PATH", help="write the decision as JSON")
    add_judge_options(ab, "the default without --model", "which judge scores (as for evaluate)")
    ab.add_argument("--language", choices=["ar", "en", "auto"], default="auto", help="prompt language (default auto)")
    ab.add_argument("--quiet", "-q", action="store_true", help="no progress line")
    # evaluate's judge options this command keeps at their defaults (run_config reads them)
    ab.set_defaults(metrics=None, rubrics=[], repeats=1, temperature=0.0, align_with=None, judge_mode=AUTO,
                    heuristics="ragmeter", max_workers=2, no_cache=True, cache="", price_in=None, price_out=None,
                    batch=False, batch_poll=10.0, judge_timeout=60.0, resume=None, history=None)


def add_collect_parser(sub: Any) -> None:
    """`ragmeter collect`: the OTLP receiver (evaluator/cli/collect.py runs it)."""
    p = sub.add_parser("collect", help="receive OTLP traces from production and score a sample of them",
                       description="An OTLP/HTTP receiver (POST /v1/traces, protobuf or JSON, gzip): sampled "
                                   "traces become rows of the project's live run of the day, scored as they arrive.")
    p.add_argument("--listen", default="", metavar="HOST:PORT",
                   help="address to listen on, e.g. 127.0.0.1:4318 (default: the [[collect]] entry's listen)")
    p.add_argument("--project", required=True, help="the project the live runs are listed under")
    p.add_argument("--sample", type=float, default=None, metavar="RATE",
                   help="share of traces judged, 0-1, decided on the trace id (default 1, or the [[collect]] entry's)")
    p.add_argument("--rule", action="append", default=None, metavar="EXPR",
                   help="only traces matching KEY = VALUE or KEY != VALUE, e.g. 'metadata.env = \"prod\"' (repeatable)")
    p.add_argument("--max-per-hour", type=int, default=None, metavar="N", help="judge at most N traces per hour")
    p.add_argument("--token-env", default="", metavar="VAR",
                   help="environment variable holding the bearer token senders must send (default: the [[collect]] "
                        "entry's token_env; none: no token)")
    p.add_argument("--max-request-mb", type=float, default=16.0, metavar="N",
                   help="largest request body, before and after decompression (default %(default)s)")
    p.add_argument("--max-traces-per-second", type=float, default=200.0, metavar="N",
                   help="traces taken per second; more are dropped and counted (default %(default)s)")
    p.add_argument("--settle", type=float, default=2.0, metavar="S",
                   help="seconds a finished trace waits for late child spans before it is scored (default %(default)s)")
    add_judge_options(p, "the default", "a [[judges]] entry of the team configuration, or a judge kind")
    p.add_argument("--history", default=None, help=HISTORY_HELP)
    p.add_argument("--alert", action="append", default=[], metavar="EXPR",
                   help="alert rule, e.g. 'faithfulness < 0.75 over 200' (repeatable; default: the [[collect]] "
                        "entry's alerts)")
    hook = p.add_mutually_exclusive_group()
    hook.add_argument("--webhook", default="", metavar="URL", help="post alerts here (Slack-compatible JSON)")
    hook.add_argument("--webhook-env", default="", metavar="VAR",
                      help="environment variable holding the webhook URL (kept out of the process list)")
    p.add_argument("--parent", type=int, default=None, metavar="PID", help=argparse.SUPPRESS)  # beside a dashboard
    p.add_argument("--status-every", type=float, default=10.0, metavar="S",
                   help="seconds between status lines on stderr; 0 for none (default %(default)s)")
    # evaluate's judge options this command keeps at their defaults (run_config reads them)
    p.set_defaults(metrics=None, rubrics=[], repeats=1, temperature=0.0, align_with=None, judge_mode=AUTO,
                   heuristics="ragmeter", max_workers=4, no_cache=False, cache="", price_in=None, price_out=None,
                   batch=False, batch_poll=10.0, judge_timeout=60.0, resume=None, language="auto")


def add_generate_parser(sub: Any) -> None:
    """`ragmeter generate`: a test set from documents (evaluator/cli_generate.py runs it)."""
    gen = sub.add_parser("generate", help="write a test set from your documents, and show what it covers",
                         description="Write questions, reference answers and expected documents from documents; "
                                     "exit 0 ok, 1 fewer than --n items kept (those kept are written), 2 bad input "
                                     "or no model, 3 the judge failed, 130 interrupted (resume with --resume).")
    gen.add_argument("--docs", required=True, help="a folder of .md/.txt/.html/.pdf files, a CSV/JSONL/Parquet "
                                                   "file with title and body columns, or postgresql://… (with --docs-query)")
    gen.add_argument("--docs-query", help='SQL returning a title and a body column, e.g. "SELECT title, body FROM documents"')
    judge = gen.add_mutually_exclusive_group()
    judge.add_argument("--model", help="the model that writes and checks the items (OpenAI-compatible endpoint)")
    judge.add_argument("--offline", action="store_true",
                       help="no model: extractive cloze items (a sentence with a word blanked), for retrieval checks only")
    gen.add_argument("--base-url", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1")
    gen.add_argument("--api-key-env", default="OPENAI_API_KEY", help="environment variable holding the API key")
    gen.add_argument("--output", "-o", help="the test set to write: .jsonl, .csv or .parquet")
    gen.add_argument("--n", type=int, default=None,
                     help="items to keep (default 50; with --fill-gaps, one per untouched section up to 50)")
    gen.add_argument("--kinds", default="", metavar="KIND=WEIGHT,...",
                     help="the mix of single, multi, summary, unanswerable, variant (default "
                          "single=4,multi=2,summary=1,unanswerable=1,variant=2)")
    gen.add_argument("--language", choices=["auto", "en", "ar", "mix"], default="auto",
                     help="language of the items: auto (each document's own, default), en, ar, or mix (half each)")
    gen.add_argument("--max-attempts", type=int, default=0, metavar="N",
                     help="stop after N attempts even when fewer than --n items passed the checks (default 3n+10)")
    gen.add_argument("--chunk-chars", type=int, default=1200, help="largest chunk in characters (default %(default)s)")
    gen.add_argument("--seed", type=int, default=0, help="which chunks are drawn (default %(default)s)")
    gen.add_argument("--max-workers", type=int, default=4, help="items written at once (default %(default)s)")
    gen.add_argument("--fill-gaps", metavar="TESTSET", help="add items only for the sections TESTSET does not touch; "
                                                            "--output gets TESTSET's items plus the new ones")
    gen.add_argument("--resume", action="store_true", help="continue the --output file an interrupted run left")
    gen.add_argument("--coverage-only", metavar="TESTSET",
                     help="write nothing: print which documents and sections TESTSET (any dataset) touches")
    gen.add_argument("--no-cache", action="store_true", help="do not use the on-disk judge cache")
    gen.add_argument("--cache", default=str(judge_cache().value), help="judge cache file (default %(default)s)")
    gen.add_argument("--quiet", "-q", action="store_true", help="no progress line")
    gen.add_argument("--history", default=None, metavar="H",
                     help="also record the generation in this run history (a SQLite file or a postgresql:// URL), "
                          "as a job other processes see and can stop ('ragmeter runs stop GEN_ID')")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ragmeter")
    except PackageNotFoundError:  # run from a source checkout that was never installed
        return "unknown (not installed)"


# -- arguments -> plain data (shared by the local and the Ray engine's command lines) -------------
class UsageError(RagmeterError):
    """Bad arguments: printed as one line, exit code 2."""


def parse_pairs(items: Sequence[str], what: str, form: str = "NAME=VALUE") -> Dict[str, str]:
    pairs = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise UsageError(f"{what} expects {form}, got {item!r}")
        pairs[key.strip()] = value.strip()
    return pairs


def parse_thresholds(items: Sequence[str], chosen: Sequence[str] = ()) -> Dict[str, float]:
    """--fail-under METRIC=VALUE pairs; METRIC is one of the run's `chosen` metrics (any registered
    metric when none are given), or "overall"."""
    known = set(chosen or known_metrics()) | {"overall"}
    thresholds = {}
    for given, value in parse_pairs(items, "--fail-under", "METRIC=VALUE").items():
        name = _reported_name(given)
        if name not in known:
            scope = " (not chosen for this run)" if chosen and name in known_metrics() else ""
            raise UsageError(f"--fail-under: unknown metric {name!r}{scope}; choose from {', '.join(sorted(known))}")
        try:
            thresholds[name] = float(value)
        except ValueError:
            raise UsageError(f"--fail-under: {value!r} is not a number (metric {name})") from None
        if not 0.0 <= thresholds[name] <= 1.0:
            percent = f"; write {name}={thresholds[name] / 100:g} for {value}%" if 2 <= thresholds[name] <= 100 else ""
            raise UsageError(f"--fail-under {name}={value}: thresholds run from 0 to 1{percent}")
    return thresholds


def _reported_name(name: str) -> str:
    """The name a metric is reported under: `mrr` is `mrr@5` (retrieval metrics carry their k)."""
    try:
        return canonical(name)
    except ValueError:  # ndcg@0: not a metric; said as unknown below
        return name


def run_link(dashboard_url: str, run_id: str) -> str:
    """--dashboard-url's share link of a run: its Report page opened straight to it."""
    return f"{dashboard_url.rstrip('/')}/report?run={quote(run_id)}"


def judge_kind(args: argparse.Namespace) -> str:
    """The judge kind the command line names: --judge NAME, --offline, or openai when --model is given."""
    if args.offline and args.judge not in (None, OFFLINE):
        raise UsageError(f"--offline and --judge {args.judge}: choose one")
    if args.offline:
        return OFFLINE
    return args.judge or (OPENAI if args.model else OFFLINE)


def run_config(args: argparse.Namespace) -> RunConfig:
    """The run the command line asks for, as plain data (the key stays in the environment)."""
    scoring = metric_options(args)
    kind = judge_kind(args)
    entry = get_judge(kind)  # an unknown kind: JudgeConfigError naming the registered ones (exit 2)
    if entry.offline:
        if args.model:
            raise UsageError(f"--model needs a judge that calls a model; --judge {kind} calls none")
        if args.base_url:
            raise UsageError("--base-url needs --model (the judge model name)")
        if args.batch and not args.resume:
            raise UsageError("--batch needs --model (the Batch API runs an OpenAI-compatible judge)")
        scoring.pop("temperature")  # no judge, nothing to sample
        return RunConfig(language=args.language, heuristics=args.heuristics, max_workers=args.max_workers, **scoring)
    if entry.needs_model and not args.model:
        raise UsageError(f"--judge {kind} needs --model (the judge model name)")
    if args.batch and not entry.batch_api:
        raise UsageError(f"--batch needs a judge that speaks the Batch API (openai); the {kind} judge does not")
    judge_timeout = float(getattr(args, "judge_timeout", 60.0))
    if not judge_timeout > 0:
        raise UsageError(f"--judge-timeout must be more than 0 seconds, not {judge_timeout:g}")
    return RunConfig(judge=kind, model=args.model or "", base_url=args.base_url or "", api_key_env=args.api_key_env,
                     language=args.language, heuristics=args.heuristics, max_workers=args.max_workers,
                     cache="" if args.no_cache else args.cache, price_in=args.price_in, price_out=args.price_out,
                     batch=args.batch, batch_poll=args.batch_poll, judge_timeout=judge_timeout,
                     judge_max_tokens=resolved_max_tokens(args), **scoring)


def resolved_max_tokens(args: argparse.Namespace) -> int:
    """--judge-max-tokens, else the environment's, else the team file's [judge] max_tokens, else 0 (each
    metric's own cap): team/settings.judge_max_tokens decides."""
    from ..service.options import Flags, judge_max_tokens

    given = getattr(args, "judge_max_tokens", None)
    if given is not None and not 0 <= given <= 32768:
        raise UsageError(f"--judge-max-tokens must be 0 (each metric's own cap) to 32768, not {given}")
    return int(judge_max_tokens(Flags(judge_max_tokens=given)).value or 0)


def metric_options(args: argparse.Namespace) -> Dict[str, Any]:
    """RunConfig's metrics, rubrics and repeats from --metrics, --rubrics and --repeats (checked here)."""
    if args.repeats < 1:
        raise UsageError(f"--repeats {args.repeats}: ask the judge at least once (K >= 1)")
    rubrics: Dict[str, Any] = {}
    for path in args.rubrics:
        for rubric in load_rubrics(path):
            if rubric.name in rubrics:
                raise UsageError(f"--rubrics: rubric {rubric.name!r} is defined twice ({path})")
            rubrics[rubric.name] = rubric.to_dict()
    names = tuple(n.strip() for n in (args.metrics or "").split(",") if n.strip())
    if args.metrics is not None and not names:
        raise UsageError("--metrics is empty; name at least one metric, e.g. --metrics faithfulness")
    if not 0.0 <= args.temperature <= 2.0:
        raise UsageError(f"--temperature {args.temperature:g}: from 0 to 2")
    return {"metrics": names, "rubrics": rubrics, "repeats": args.repeats, "temperature": args.temperature,
            "alignment": alignment_of(args), "judge_mode": args.judge_mode}


def alignment_of(args: argparse.Namespace) -> Dict[str, Any]:
    """The --align-with example set, read from the history (empty without the option)."""
    if not getattr(args, "align_with", None):
        return {}
    from ..service import history, reviews

    store = reviews.review_store(history.open_history(history.history_for(args.history)))
    return reviews.example_set(store, args.align_with)
