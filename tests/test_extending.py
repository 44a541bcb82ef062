"""The contract of docs/extending.md: a metric, an input format and a dashboard page added the documented
way (one registration each) show up everywhere they should, and an entry that lacks a part is reported.

Each toy is registered through the registry's own door and taken out again, so no other test sees it.
"""
import struct
import sys
import textwrap
import zlib
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "docs"))
import gen_reference as gen  # noqa: E402

from evaluator.cli.args import build_parser  # noqa: E402
from evaluator.io import filetypes  # noqa: E402
from evaluator.io.datasets import load_dataset  # noqa: E402
from evaluator.metrics import registry  # noqa: E402
from evaluator.metrics.languages import SCORED  # noqa: E402
from evaluator.metrics.metric import Metric  # noqa: E402
from evaluator.service.choices import metric_choices  # noqa: E402
from pages import _pages  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TOY_PROMPT = "Is the ANSWER polite? {json_only}\n{{\"score\": <0.0-1.0>, \"reasoning\": \"<one sentence>\"}}"
# The toy format: one sample a line, "question | answer".
TOY_READER = '''
from contextlib import contextmanager
from evaluator.io.encodings import choose_encoding, text_stream
from evaluator.io.sources import Rows, Where

@contextmanager
def read_toy(src):
    encoding = choose_encoding(src)
    with text_stream(src, encoding) as text:
        yield Rows(encoding, ["question", "answer"], Where(src.name, 1), _records(text, src))

def _records(text, src):
    for number, line in enumerate(text, 1):
        question, _, answer = line.partition("|")
        yield Where(src.name, number), {"question": question.strip(), "answer": answer.strip()}
'''


@pytest.fixture
def toy_metric():
    metric = registry.register(Metric("toy_politeness", prompts={"en": TOY_PROMPT}, shows=("question", "answer"),
                                      description="Whether the answer is polite (a toy)."))
    try:
        yield metric
    finally:
        del registry.METRIC_REGISTRY[metric.name]


@pytest.fixture
def toy_format(tmp_path, monkeypatch):
    (tmp_path / "toy_reader.py").write_text(textwrap.dedent(TOY_READER), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    fixture = tmp_path / "two.toyrows"
    fixture.write_text("What is 2+2? | 4\nWho wrote Hamlet? | Shakespeare\n", encoding="utf-8")
    kind = filetypes.register_file_type(filetypes.FileType(
        ".toyrows", "toyrows", frozenset({filetypes.DATASET.name}), reader="toy_reader:read_toy",
        fixture=str(fixture)))
    try:
        yield kind
    finally:
        filetypes.unregister_file_type(kind.suffix)
        sys.modules.pop("toy_reader", None)


def test_a_registered_format_is_read_and_listed_by_help_and_the_docs(toy_format):
    samples = load_dataset(toy_format.fixture)
    assert [s.answer for s in samples] == ["4", "Shakespeare"]
    assert ".toyrows" in build_parser().format_help()
    table = gen.formats_markdown()
    assert "| `.toyrows` | toyrows | yes |" in table and "`toy_reader.py` `read_toy`" in table


def test_a_format_read_as_a_dataset_must_name_its_reader():
    with pytest.raises(ValueError, match="names no reader"):
        filetypes.register_file_type(filetypes.FileType(".toy2", "toy2", frozenset({filetypes.DATASET.name})))
    with pytest.raises(ValueError, match="already registered"):
        filetypes.register_file_type(filetypes.FileType(".csv", "csv", frozenset()))
    assert ".toy2" not in [t.suffix for t in filetypes.FILE_TYPES]


@pytest.mark.parametrize("kind", [t for t in filetypes.FILE_TYPES if t.reader], ids=lambda t: t.suffix)
def test_every_registered_format_has_a_fixture_that_loads_through_its_reader(kind):
    assert kind.fixture, f"{kind.suffix}: name a fixture= in io/filetypes.py (a small file in tests/fixtures/)"
    assert len(load_dataset(ROOT / kind.fixture)) >= 1


def test_a_registered_metric_is_offered_but_not_a_default(toy_metric):
    before = registry.DEFAULT_METRICS
    assert "toy_politeness" in metric_choices([])  # what the Evaluate page's picker offers
    assert "| `toy_politeness` | Whether the answer is polite (a toy). | opt-in |" in gen.metrics_markdown()
    assert registry.default_metrics() == before
    assert [m.name for m in registry.resolve_metrics()] == list(before)
    assert registry.contract_problems(toy_metric) == []  # opt-in: it owes no Arabic prompt


def test_the_defaults_are_the_five_judged_metrics_then_the_free_ones():
    judged = [name for name in registry.DEFAULT_METRICS if registry.get_metric(name).judged]
    assert judged[:5] == ["faithfulness", "answer_relevancy", "context_precision", "context_recall",
                          "answer_correctness"]
    assert registry.DEFAULT_METRICS == registry.default_metrics()


@pytest.mark.parametrize("name", list(registry.METRIC_REGISTRY))
def test_every_registered_metric_keeps_its_promises(name):
    assert registry.contract_problems(registry.get_metric(name)) == []


def test_a_default_metric_without_every_language_or_a_heuristic_is_reported():
    metric = Metric("toy_default", prompts={"en": TOY_PROMPT}, shows=("answer",), default=True)
    problems = registry.contract_problems(metric)
    assert [p for p in problems if "'ar' prompt" in p] == [
        f"default metric toy_default has no 'ar' prompt: add prompts['ar'] and languages=({', '.join(map(repr, SCORED))}), "
        "or leave it opt-in (default=False)"]
    assert any("no heuristic" in p for p in problems)


def test_a_metric_claiming_a_language_or_heuristic_set_it_lacks_is_refused():
    with pytest.raises(ValueError, match="no prompt for ar"):
        Metric("toy_ar", prompts={"en": TOY_PROMPT}, languages=("en", "ar"))
    with pytest.raises(ValueError, match="no scorer in jaccard"):
        Metric("toy_sets", prompts={"en": TOY_PROMPT}, heuristic_sets=("jaccard",))
    with pytest.raises(ValueError, match="unknown heuristic set"):
        Metric("toy_sets", prompts={"en": TOY_PROMPT}, heuristic_sets=("bm25",))


def png(path: Path) -> None:
    """A 1x1 PNG: enough for missing_parts, which checks the signature."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    path.write_bytes(_pages.PNG + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0))
                     + chunk(b"IDAT", zlib.compress(b"\x00\x00")) + chunk(b"IEND", b""))


def test_a_page_without_its_docs_page_or_picture_is_reported(tmp_path):
    toy = _pages.Page("pages/toy.py", "Toy", ":material/toys:", "dashboard/toy.md", "images/dashboard-toy.png")
    problems = _pages.missing_parts(toy, tmp_path)
    assert len(problems) == 2 and "write docs/dashboard/toy.md" in problems[0] and "no picture" in problems[1]
    (tmp_path / "dashboard").mkdir()
    (tmp_path / "dashboard" / "toy.md").write_text("# Toy\n", encoding="utf-8")
    (tmp_path / "images").mkdir()
    png(tmp_path / "images" / "dashboard-toy.png")
    assert _pages.missing_parts(toy, tmp_path) == [
        "docs/dashboard/toy.md does not show its picture: add ![Toy](../images/dashboard-toy.png)"]
    (tmp_path / "dashboard" / "toy.md").write_text("# Toy\n\n![Toy](../images/dashboard-toy.png)\n", encoding="utf-8")
    assert _pages.missing_parts(toy, tmp_path) == []


def test_a_registered_page_is_in_the_docs_nav_and_the_screenshot_list(monkeypatch):
    toy = _pages.Page("pages/toy.py", "Toy", ":material/toys:", "dashboard/toy.md", "images/dashboard-toy.png")
    monkeypatch.setattr(_pages, "PAGES", (*_pages.PAGES, toy))
    section = gen.dashboard_nav([{"The dashboard": ["dashboard/index.md"]}])[0]["The dashboard"]
    assert section[-1] == {"Toy": "dashboard/toy.md"} and len(section) == len(_pages.PAGES) + 1
    assert toy.slug == "toy" and toy.url_path == "toy"  # where test_screenshots.py saves and opens it
