"""The docs' generated parts, made from the code at every build (an MkDocs hook: mkdocs.yml `hooks:`).

A page holds a marker line and the build puts the generated Markdown in its place:

    <!-- generated: cli -->       every command, every argument group, every flag (evaluator/cli/args.py)
    <!-- generated: formats -->   the file types (io/filetypes.py), what `ragmeter --help` says it reads,
                                  and the column names of each field (io/dialects.py ALIASES)
    <!-- generated: judges -->    every registered judge kind: model, key variable, JSON mode, logprobs, Batch API
    <!-- generated: settings -->  every setting `ragmeter config` resolves: flag, variable, team-file key, default
                                  (team/settings.py SPECS)
    <!-- generated: metrics -->   every registered metric: kind, what it needs, what the judge sees, scale,
                                  prompt languages, offline heuristic sets and what the heuristic does

The nav's "The dashboard" section gets one entry per registered page (pages/_pages.PAGES, `on_config`).

Nothing is copied by hand, so a flag added to a parser is in the next build; tests/test_docs.py checks the
built CLI reference holds every option string of every command. Run `python docs/gen_reference.py cli`
to print one part.
"""
from __future__ import annotations

import argparse
import inspect
import re
import sys
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # the checkout's evaluator/, installed or not
    sys.path.insert(0, str(ROOT))

MARKER = re.compile(r"^<!-- generated: (\w+) -->$", re.MULTILINE)


def cell(text: Any) -> str:
    """Text for one Markdown table cell: one line, pipes escaped, angle brackets as entities."""
    flat = " ".join(str(text).split())
    return flat.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def code(text: str) -> str:
    return f"`{text}`" if text else ""


# -- the CLI reference -------------------------------------------------------------------------------
def commands(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    """`parser`'s subcommand parsers, depth first (`review`, then `review export`, ...)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):  # an alias would list a parser twice
                yield sub
                yield from commands(sub)


def documented(action: argparse.Action) -> bool:
    return action.help is not argparse.SUPPRESS and not isinstance(action, (argparse._HelpAction,
                                                                           argparse._SubParsersAction))


def option_strings(parser: argparse.ArgumentParser) -> List[str]:
    """Every option string a user may type to `parser` (hidden ones and -h left out)."""
    return [s for a in parser._actions if documented(a) for s in a.option_strings]


def _help(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    formatter = parser._get_formatter()
    return formatter._expand_help(action) if action.help else ""


def _default(action: argparse.Action) -> str:
    if action.option_strings and action.nargs == 0 or action.default in (None, "", [], argparse.SUPPRESS):
        return ""
    return code(str(action.default))


def _names(action: argparse.Action) -> str:
    if not action.option_strings:
        return code(action.metavar or action.dest) + (" (optional)" if action.nargs == "?" else "")
    metavar = ""
    if action.nargs != 0:
        metavar = " " + (action.metavar or ("{" + ",".join(map(str, action.choices)) + "}" if action.choices
                                            else action.dest.upper()))
    return ", ".join(code(s + metavar) for s in action.option_strings)


def command_markdown(parser: argparse.ArgumentParser) -> str:
    lines = [f"## {parser.prog}", ""]
    if parser.description:
        lines += [cell(parser.description), ""]
    lines += ["```", parser.format_usage().strip(), "```", ""]
    for group in parser._action_groups:
        actions = [a for a in group._group_actions if documented(a)]
        if not actions:
            continue
        title = group.title if group.title not in ("options", "optional arguments") else "options"
        lines += [f"**{cell(title)}**" + (f": {cell(group.description)}" if group.description else ""), "",
                  "| argument | default | what it does |", "|---|---|---|"]
        lines += [f"| {_names(a)} | {_default(a)} | {cell(_help(parser, a))} |" for a in actions]
        lines.append("")
    return "\n".join(lines)


def cli_markdown() -> str:
    from evaluator.cli.args import build_parser

    top = build_parser()
    parts = [f"```\n{top.format_help().strip()}\n```", ""]
    parts += [command_markdown(sub) for sub in commands(top)]
    return "\n".join(parts)


# -- datasets and formats ---------------------------------------------------------------------------
def reader_cell(reader: str) -> str:
    """A file type's reader as the table shows it: `evaluator.io.csv_rows:read_csv` -> `io/csv_rows.py` read_csv."""
    module, _, function = reader.partition(":")
    return f"{code(module.replace('evaluator.', '').replace('.', '/') + '.py')} {code(function)}" if reader else ""


def formats_markdown() -> str:
    from evaluator.cli.args import readable_formats_help
    from evaluator.io import filetypes
    from evaluator.io.dialects import ALIASES, REQUIRED

    purposes = (filetypes.DATASET, filetypes.DOCUMENTS, filetypes.TESTSET, filetypes.LABELS, filetypes.REPORT)
    lines = ["### File types", "",
             "| extension | format | " + " | ".join(f"{p.verb} {p.noun}" for p in purposes) + " | reader |",
             "|---|---|" + "---|" * (len(purposes) + 1)]
    for kind in filetypes.FILE_TYPES:
        marks = " | ".join("yes" if p.name in kind.purposes else "" for p in purposes)
        sep = " (tab-separated)" if kind.delimiter == "\t" else ""
        lines.append(f"| {code(kind.suffix)} | {cell(kind.format + sep)} | {marks} | {reader_cell(kind.reader)} |")
    lines += ["", "### What each command reads", "", "| input | given to | formats |", "|---|---|---|"]
    lines += [f"| {cell(what)} | {code(where)} | {cell(formats)} |" for what, where, formats in readable_formats_help()]
    lines += ["", "### Column names", "",
              "Matched case-insensitively, spacing and punctuation ignored; the first name found wins. "
              f"Required: {', '.join(code(f) for f in REQUIRED)} (or a `--target` that answers).", "",
              "| field | column names read as it |", "|---|---|"]
    lines += [f"| {code(field)} | {', '.join(code(a) for a in names)} |" for field, names in ALIASES.items()]
    return "\n".join(lines) + "\n"


# -- metrics --------------------------------------------------------------------------------------------
def _offline_words(metric: Any) -> str:
    """What the metric does without a judge: its module docstring's paragraph on it, else the set names."""
    scorer = metric.heuristics.get("ragmeter") if metric.heuristics else (metric.rule or metric.heuristic)
    module = sys.modules.get(getattr(scorer, "__module__", "") or "")
    doc = inspect.getdoc(module) or "" if module is not None else ""
    for paragraph in doc.split("\n\n"):
        if paragraph.lower().lstrip("( ").startswith(("offline", "without a judge")):
            return cell(paragraph)
    return ""


def metrics_markdown() -> str:
    from evaluator.metrics.registry import METRIC_REGISTRY, load_plugins
    from evaluator.metrics.retrieval import NAMES_HELP

    load_plugins()
    lines = ["| metric | what it measures | default | kind | needs | the judge sees | scale | prompt languages | offline |",
             "|---|---|---|---|---|---|---|---|---|"]
    details = []
    for name, m in METRIC_REGISTRY.items():
        needs = ", ".join(code(f) for f in m.needs) or "–"
        shows = ", ".join(code(f) for f in m.shows) or "–"
        if not m.judged:
            offline = "exact rule, no judge"
        elif m.heuristic is None:
            offline = "none: needs a judge (skipped offline)"
        else:
            offline = "heuristic sets " + ", ".join(code(s) for s in sorted(m.heuristics)) if m.heuristics else \
                "a heuristic"
        languages = ", ".join(code(lang) for lang in sorted(m.prompts)) or "–"
        default = "yes" if m.default else "opt-in"
        lines.append(f"| {code(name)} | {cell(m.description)} | {default} | {m.kind} | {needs} | {shows if m.judged else '–'} | "
                     f"{m.scale} | {languages if m.judged else '–'} | {offline} |")
        words = _offline_words(m)
        if words:
            details.append(f"- **{name}**: {words}")
    lines += ["", f"Also, with no judge call: the {cell(NAMES_HELP)}.", ""]
    if details:
        lines += ["### Offline, metric by metric", "", *details, ""]
    return "\n".join(lines)


# -- judges ---------------------------------------------------------------------------------------------
def judges_markdown() -> str:
    """Every registered judge kind (built-ins and installed plug-ins) and what it needs and supports."""
    from evaluator.judges.registry import get_judge, judge_kinds

    def yes(flag: bool) -> str:
        return "yes" if flag else ""

    lines = ["| `--judge` | what it is | model | API key (variable) | JSON mode | logprobs (G-Eval) | Batch API |",
             "|---|---|---|---|---|---|---|"]
    for kind in judge_kinds():
        entry = get_judge(kind)
        key = f"yes ({code(entry.key_env)})" if entry.needs_key and entry.key_env else yes(entry.needs_key)
        lines.append(f"| {code(kind)} | {cell(entry.label)} | {yes(entry.needs_model)} | {key} | {yes(entry.json_mode)} "
                     f"| {yes(entry.logprobs)} | {yes(entry.batch_api)} |")
    return "\n".join(lines) + "\n"


# -- settings -----------------------------------------------------------------------------------------
def settings_markdown() -> str:
    """Every registered setting (team/settings.py SPECS), strongest layer first, as `ragmeter config` resolves it."""
    from evaluator.team.settings import SPECS

    lines = ["| setting | flag | environment | team file | default | what it is |", "|---|---|---|---|---|---|"]
    for spec in SPECS.values():
        lines.append(f"| {code(spec.name)} | {code(spec.flag)} | {code(spec.env)} | {code(spec.file_key)} "
                     f"| {cell(spec.default)} | {cell(spec.help)} |")
    return "\n".join(lines) + "\n"


# -- the library API -----------------------------------------------------------------------------------
def api_markdown() -> str:
    """One mkdocstrings entry per public name (evaluator.__all__), under the module that defines it."""
    import evaluator

    lines = []
    for name in evaluator.__all__:
        obj = getattr(evaluator, name)
        module = getattr(obj, "__module__", None) or evaluator.__name__
        if not inspect.isclass(obj) and not inspect.isfunction(obj):
            module = _defining_module(name)
        lines += [f"::: {module}.{name}", "    options:", "      heading_level: 2", ""]
    return "\n".join(lines)


def _defining_module(name: str) -> str:
    """Where `from evaluator import name` comes from, for a name that is an alias (register = ...register)."""
    import evaluator

    lazy = getattr(evaluator, "_LAZY", {})
    if name in lazy:
        return f"evaluator.{lazy[name]}"
    source = inspect.getsource(evaluator)
    found = re.search(rf"^from \.([\w.]+) import [^\n]*\b{name}\b", source, re.MULTILINE)
    return f"evaluator.{found.group(1)}" if found else "evaluator"


PARTS: Dict[str, Callable[[], str]] = {"cli": cli_markdown, "formats": formats_markdown, "metrics": metrics_markdown,
                                       "judges": judges_markdown, "api": api_markdown,
                                       "settings": settings_markdown}


def expand(markdown: str) -> str:
    """`markdown` with every marker line replaced by its generated part (KeyError: an unknown part)."""
    return MARKER.sub(lambda m: PARTS[m.group(1)]().rstrip() + "\n", markdown)


# -- the MkDocs hooks -----------------------------------------------------------------------------------
DASHBOARD_SECTION = "The dashboard"


def dashboard_nav(nav: List[Any]) -> List[Any]:
    """mkdocs.yml's nav with one entry per registered page (pages/_pages.PAGES) after the dashboard section's
    own entries (its index); a page listed by hand as well is listed once."""
    if str(ROOT) not in sys.path:  # MkDocs takes the first sys.path entry back after loading this hook
        sys.path.insert(0, str(ROOT))
    from pages._pages import PAGES, nav_section

    def filled(item: Any) -> Any:
        if not (isinstance(item, dict) and isinstance(item.get(DASHBOARD_SECTION), list)):
            return item
        registered = {page.docs for page in PAGES}
        own = [e for e in item[DASHBOARD_SECTION] if not (isinstance(e, dict) and set(e.values()) & registered)]
        return {DASHBOARD_SECTION: own + nav_section(PAGES)}
    return [filled(item) for item in nav]


def on_config(config: Any, **_: Any) -> Any:
    config["nav"] = dashboard_nav(config["nav"])
    return config


def on_page_markdown(markdown: str, page: Any = None, config: Any = None, files: Any = None, **_: Any) -> str:
    return expand(markdown) if MARKER.search(markdown) else markdown


def main(argv: List[str]) -> int:
    for name in argv or list(PARTS):
        print(PARTS[name]())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
