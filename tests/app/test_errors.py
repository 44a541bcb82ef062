"""pages/_errors.py: user text escaped for Markdown renders as the text itself, checked with a real
CommonMark parser (markdown-it-py, which Streamlit's own dependency rich brings)."""
import re

import pytest
from markdown_it import MarkdownIt

from evaluator.errors import DatasetError
from pages._errors import Markdown, code_span, fmt, md

PARSER = MarkdownIt("commonmark").enable(["strikethrough", "table"])
HOSTILE = [
    "![x](http://127.0.0.1:9/x.png)",
    "[click](http://127.0.0.1:9/) and <http://127.0.0.1:9/a>",
    '<img src="http://127.0.0.1:9/y.png"> &lt;b&gt;',
    "**bold** _it_ __init__ *star* ~~gone~~ `code` $x^2$",
    "# heading",
    "- item",
    "1. first",
    "> quote",
    "a | b\n--|--\nc | d",
    "line one\n\n![second](http://127.0.0.1:9/z.png)",
    "trailing backslash \\",
]


def rendered(markdown: str):
    """The inline tokens a Markdown renderer makes of `markdown`, and the text it shows."""
    tokens = PARSER.parse(markdown)
    kinds = {t.type for t in tokens} | {c.type for t in tokens for c in (t.children or [])}
    text = "".join(c.content for t in tokens for c in (t.children or []) if c.type == "text")
    return kinds, text


@pytest.mark.parametrize("text", HOSTILE)
def test_escaped_user_text_renders_as_plain_text(text):
    kinds, shown = rendered(md(text))
    assert kinds <= {"paragraph_open", "paragraph_close", "inline", "text"}, kinds  # no image, link, html, em
    assert shown.replace("\u2060", "") == re.sub(r"\s*\n+\s*", " ", text)  # one line, every character as typed


@pytest.mark.parametrize("text", ["retrieval_context", "sample.jsonl", "TimeoutError: pipeline down",
                                  "mine.csv", "no answer at 'data.answer'", "answer_relevancy"])
def test_ordinary_names_are_left_as_they_are(text):
    assert md(text) == text


def test_emoji_and_icon_shortcodes_are_broken_invisibly():
    # Streamlit turns :name: into an icon after parsing, so a backslash would not stop it.
    assert md(":material/home: :smile:") == ":\u2060material/home: :\u2060smile:"


def test_a_template_keeps_its_markdown_and_number_formats_and_escapes_its_fields():
    out = fmt("Done: {n:,} samples of **{name}**. {problem}", n=12345, name="![x](u)",
              problem=DatasetError("bad *row*"))
    assert out == "Done: 12,345 samples of **\\!\\[x\\](u)**. bad \\*row\\*"
    assert isinstance(out, Markdown)


def test_markdown_made_here_is_not_escaped_twice():
    span = code_span("a`b")
    assert fmt("run {id}", id=span) == "run `` a`b ``"
    kinds, shown = rendered(span)
    assert "code_inline" in kinds
