"""The docs site and the README: the generated references hold everything the code has, every page is in the
nav, every dashboard page has its page and picture, and the site builds offline with warnings as errors."""
from __future__ import annotations

import argparse
import html
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest

from evaluator.cli.args import build_parser
from evaluator.io.filetypes import FILE_TYPES
from evaluator.metrics.registry import METRIC_REGISTRY

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README = ROOT / "README.md"
MKDOCS = Path(sys.executable).with_name("mkdocs")


def _generator():
    spec = importlib.util.spec_from_file_location("gen_reference", DOCS / "gen_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gen = _generator()


def every_command() -> Dict[str, List[str]]:
    """`ragmeter evaluate` -> its option strings, for every command and subcommand."""
    return {sub.prog: gen.option_strings(sub) for sub in gen.commands(build_parser())}


def sections(markdown: str) -> Dict[str, str]:
    """The CLI reference cut at its `## ragmeter ...` headings."""
    parts = re.split(r"^## (ragmeter[^\n]*)$", markdown, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2]))


def test_the_cli_reference_holds_every_flag_of_every_command():
    reference = sections(gen.cli_markdown())
    commands = every_command()
    assert {"ragmeter evaluate", "ragmeter serve", "ragmeter dashboard", "ragmeter review export"} <= set(commands)
    missing = [f"{prog} {flag}" for prog, flags in commands.items() for flag in flags
               if f"`{flag}" not in reference.get(prog, "")]
    assert missing == []
    assert "--judge-timeout" in commands["ragmeter evaluate"]  # the walk does see evaluate's groups


def test_a_new_flag_is_in_the_next_reference(monkeypatch):
    # Generated at every build, from the parser: a flag added to a command needs no edit of the docs.
    real = build_parser

    def with_new_flag() -> argparse.ArgumentParser:
        parser = real()
        evaluate = next(s for s in gen.commands(parser) if s.prog == "ragmeter evaluate")
        evaluate.add_argument("--brand-new-flag", help="a flag the docs never heard of")
        return parser

    monkeypatch.setattr("evaluator.cli.args.build_parser", with_new_flag)
    assert "`--brand-new-flag" in sections(gen.cli_markdown())["ragmeter evaluate"]


def test_the_metrics_table_lists_every_registered_metric_and_what_it_needs():
    table = gen.metrics_markdown()
    for name, metric in METRIC_REGISTRY.items():
        row = next(line for line in table.splitlines() if line.startswith(f"| `{name}` |"))
        assert all(f"`{field}`" in row for field in metric.needs), row
        assert (metric.scale in row) and (("`en`" in row) == metric.judged), row
    assert "ndcg@k" in table and "Offline" in table


def test_the_formats_table_lists_every_file_type():
    table = gen.formats_markdown()
    assert all(f"| `{kind.suffix}` |" in table for kind in FILE_TYPES)
    assert "`ground_truth`" in table and "`expected_output`" in table  # the column names of each field


def test_the_judges_table_lists_every_registered_judge():
    from evaluator.judges.registry import judge_kinds

    table = gen.judges_markdown()
    assert all(f"| `{kind}` |" in table for kind in judge_kinds()) and len(judge_kinds()) >= 2


def nav_files() -> List[str]:
    """Every page of the site's nav: mkdocs.yml's, plus the dashboard pages the build adds (pages/_pages.PAGES)."""
    from pages._pages import PAGES

    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = text[text.index("\nnav:"):]
    return re.findall(r"([\w/-]+\.md)\s*(?:#.*)?$", nav, flags=re.MULTILINE) + [page.docs for page in PAGES]


def test_every_page_is_in_the_nav_and_every_nav_entry_is_a_page():
    pages = sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md"))
    assert sorted(nav_files()) == pages


def test_the_build_puts_every_registered_page_in_the_dashboard_section():
    from pages._pages import PAGES

    nav = gen.dashboard_nav([{"Home": "index.md"}, {"The dashboard": ["dashboard/index.md", {"Report": "dashboard/report.md"}]}])
    assert nav[0] == {"Home": "index.md"}
    assert nav[1]["The dashboard"] == ["dashboard/index.md", *({p.title: p.docs} for p in PAGES)]


def test_every_dashboard_page_has_a_docs_page_with_its_picture():
    # pages/_pages.PAGES is the dashboard's navigation: a page registered there needs its docs page and screenshot.
    from pages._pages import PAGES, missing_parts

    assert len(PAGES) >= 7
    assert [problem for page in PAGES for problem in missing_parts(page)] == []


def test_the_readme_is_a_door():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    first = re.search(r"```bash\n(.*?)\n(.*?)\n```", text, flags=re.DOTALL)
    assert first is not None
    # The first command creates a virtual environment: Debian's and Ubuntu's python3 refuse pip outside one.
    assert first.group(1).startswith("python3 -m venv .venv && .venv/bin/pip install -e \".[dashboard]\"")
    assert first.group(1).endswith(".venv/bin/ragmeter dashboard") and first.group(2) == "bash .ci/run"
    for link in re.findall(r"\]\(((?:docs/)[^)#]+)", text):
        assert (ROOT / link).is_file(), link


@pytest.mark.slow
def test_the_site_builds_offline_with_warnings_as_errors(tmp_path):
    if not MKDOCS.exists():
        if os.environ.get("CI") == "true":
            pytest.fail("mkdocs is not installed: pip install -e '.[docs]'")
        pytest.skip("mkdocs is not installed: pip install -e '.[docs]'")
    site = tmp_path / "site"
    # No network: every proxy points at a closed loopback port, so a fetch would fail the build.
    closed = "http://127.0.0.1:9"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "HTTP_PROXY": closed, "HTTPS_PROXY": closed,
           "http_proxy": closed, "https_proxy": closed, "NO_PROXY": ""}
    done = subprocess.run([str(MKDOCS), "build", "--strict", "--site-dir", str(site)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    built = html.unescape(re.sub(r"<[^>]+>", "", (site / "cli.html").read_text(encoding="utf-8")))
    missing = [f"{prog} {flag}" for prog, flags in every_command().items() for flag in flags if flag not in built]
    assert missing == []
    api = (site / "api.html").read_text(encoding="utf-8")
    assert "evaluate_dataset" in api and "load_dataset" in api  # the docstrings are in
    assert "fonts.googleapis.com" not in (site / "index.html").read_text(encoding="utf-8")
    assert links_opened_from_disk(site) == []
    shutil.rmtree(site)


def links_opened_from_disk(site: Path) -> list:
    """Every relative link of the built site that fails opened as a file (file://, no server): a target that is
    missing, or a folder (a browser shows its listing). 404.html is the server's page: its links are absolute."""
    from urllib.parse import unquote

    bad = []
    for page in site.rglob("*.html"):
        if page.name == "404.html":
            continue
        for href in re.findall(r'(?:href|src)="([^"#?]+)', page.read_text(encoding="utf-8", errors="replace")):
            target = (page.parent / unquote(href)).resolve()
            if not re.match(r"^[a-z][a-z0-9+.-]*:|^//", href) and (target.is_dir() or not target.exists()):
                bad.append(f"{page.relative_to(site)} -> {href}")
    return bad
