"""Documents in: a folder of files, a table file, or a PostgreSQL query, as `Document`s.

    load_documents("docs/")                                   .md .markdown .txt .html .htm .pdf files
    load_documents("documents.jsonl")                         also .csv/.tsv, .json, .parquet: one row a document
    load_documents("postgresql://u@host/db", query="SELECT title, body FROM documents")

A row's title is read from the first column named title | name | doc_title | document | source |
id | doc_id, and its text from body | text | content | page_content | document_text | chunk | passage
(case-insensitive). A file's title is its first Markdown/HTML heading (a text file's short first line standing alone,
a PDF's /Title), else its file name. HTML is
turned into text with the standard library's parser, keeping headings as `#` lines so the chunker
can cut at them; PDF text comes from pypdf (`pip install 'ragmeter[generate]'`). Every problem is a
DatasetError naming the file (and row) and what to do.
"""
from __future__ import annotations

import html.parser
import io
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from ..errors import DatasetError, MissingExtra
from ..io.filetypes import DOCUMENTS, file_type, formats_for
from ..io.rows import source_rows
from ..io.sources import Records, open_source

TITLE_COLUMNS = ("title", "name", "doc_title", "document", "source", "id", "doc_id")
BODY_COLUMNS = ("body", "text", "content", "page_content", "document_text", "chunk", "passage")
DOCUMENT_FILES = formats_for(DOCUMENTS)  # text files (.md, .txt, .html, .pdf) and tables, one row a document
POSTGRES_PREFIXES = ("postgresql://", "postgres://")
MAX_DOCUMENTS = 100_000
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Document:
    """One document: the title test items name in `expected_docs`, its text, and where it came from."""

    title: str
    body: str
    source: str = ""


def load_documents(spec: Any, *, query: Optional[str] = None, name: Optional[str] = None) -> List[Document]:
    """The documents `spec` names (a folder, a file, an upload, or a PostgreSQL URL with `query`)."""
    if isinstance(spec, str) and spec.startswith(POSTGRES_PREFIXES):
        return _unique(postgres_documents(spec, query or ""), "the query")
    if query:
        raise DatasetError("--docs-query needs --docs postgresql://... (a query reads a PostgreSQL table)")
    if isinstance(spec, (str, Path)):
        path = Path(spec).expanduser()
        if path.is_dir():
            return _unique(folder_documents(path), str(spec))
        if not path.exists():
            raise DatasetError("does not exist; give a folder of documents, a CSV/JSONL/Parquet file of them, "
                               "or a postgresql:// URL", file=str(spec))
        return _unique(file_documents(path.name, path.read_bytes(), source=str(spec)), str(spec))
    label = name or getattr(spec, "name", "") or "upload"
    return _unique(file_documents(label, spec.getvalue() if hasattr(spec, "getvalue") else spec.read()), label)


def load_uploads(files: Iterable[Any]) -> List[Document]:
    """Documents from several uploaded files (Streamlit UploadedFile or anything with name/getvalue)."""
    docs: List[Document] = []
    for f in files:
        docs.extend(file_documents(f.name, f.getvalue()))
    return _unique(docs, "the uploads")


def folder_documents(folder: Path) -> List[Document]:
    """Every document file under `folder` (recursively, in name order); tables are read row by row."""
    docs: List[Document] = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.startswith(".")):
        if path.suffix.lower() in DOCUMENT_FILES:
            docs.extend(file_documents(path.name, path.read_bytes(), source=str(path)))
    if not docs:
        raise DatasetError(f"holds no documents; put {', '.join(DOCUMENT_FILES)} files in it", file=str(folder))
    return docs


def file_documents(name: str, data: bytes, source: str = "") -> List[Document]:
    """The documents in one file's bytes: one for a text file, one per row for a table."""
    source = source or name
    kind = file_type(source, DOCUMENTS)
    if kind.table:
        return table_documents(name, data)
    if kind.format == "pdf":
        title, text = pdf_text(data, name)
        if text.strip():
            return [Document(title or Path(name).stem.replace("_", " ").strip(), text, source)]
    else:
        text = _decode(data, name)
        if kind.format == "html":
            text = html_text(text)
    if not text.strip():
        raise DatasetError("holds no text (a scanned PDF needs OCR first; an empty file has nothing to ask about)",
                           file=name)
    return [Document(_title_of(text, name), text, source)]


def _decode(data: bytes, name: str) -> str:
    for encoding in ("utf-8-sig", "cp1252"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    raise DatasetError("is not UTF-8 text; save it as UTF-8", file=name)


def _title_of(text: str, name: str) -> str:
    """The first heading; in a text file, a short first line standing alone; else the file's name."""
    heading = _HEADING.search(text[:4000])
    if heading:
        return heading.group(1).strip()
    first, _, rest = text.strip().partition("\n")
    if Path(name).suffix.lower() == ".txt" and first.strip() and len(first) <= 80 and rest.startswith("\n") \
            and first.strip()[-1] not in ".!?:;,":
        return first.strip()
    return Path(name).stem.replace("_", " ").strip()


def pdf_text(data: bytes, name: str) -> Tuple[str, str]:
    """(the PDF's /Title or "", its text page by page with a blank line between pages)."""
    try:
        import io

        import pypdf
    except ImportError:
        raise MissingExtra(f"{name}: reading PDF needs pypdf: pip install 'ragmeter[generate]'") from None
    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        pages = [page.extract_text() or "" for page in reader.pages]
        meta: Any = reader.metadata
        title = str((meta.get("/Title") if meta else "") or "").strip()
    except Exception as exc:  # pypdf raises many types for damaged or encrypted files
        raise DatasetError(f"is not a readable PDF ({type(exc).__name__}: {exc}); export it again",
                           file=name) from None
    return title, "\n\n".join(p.strip() for p in pages if p.strip())


class _HTMLText(html.parser.HTMLParser):
    """Visible text of an HTML page; headings become `#` lines and block elements paragraphs."""

    BLOCKS = {"p", "div", "li", "tr", "br", "section", "article", "table", "ul", "ol", "blockquote", "pre"}
    SKIP = {"script", "style", "head", "noscript", "template"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: List[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag in self.SKIP:
            self._skip += 1
        elif re.fullmatch(r"h[1-6]", tag):
            self.parts.append("\n\n" + "#" * int(tag[1]) + " ")
        elif tag in self.BLOCKS:
            self.parts.append("\n\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIP:
            self._skip = max(0, self._skip - 1)
        elif re.fullmatch(r"h[1-6]", tag) or tag in self.BLOCKS:
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(re.sub(r"\s+", " ", data))


def html_text(markup: str) -> str:
    parser = _HTMLText()
    parser.feed(markup)
    parser.close()
    text = "".join(parser.parts)
    text = re.sub(r"[ \t]*\n[ \t]*", "\n", text)
    text = re.sub(r"#+ \n", "", text)  # an empty heading
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def table_documents(name: str, data: bytes) -> List[Document]:
    """One document per row of a CSV/JSONL/JSON/Parquet table, with its title and body columns."""
    with source_rows(open_source(io.BytesIO(data), name, None)) as rows:  # the dataset readers, row by row
        return _rows_to_documents(name, rows.columns, rows.records)


def pick_columns(columns: Sequence[str], where: str) -> Tuple[str, str]:
    """(title column, body column) among `columns`, by the accepted spellings."""
    lower = {c.strip().lower(): c for c in columns}
    title = next((lower[c] for c in TITLE_COLUMNS if c in lower), None)
    body = next((lower[c] for c in BODY_COLUMNS if c in lower), None)
    if body is None:
        raise DatasetError(f"has no document text column; name one {' | '.join(BODY_COLUMNS)} "
                           f"(columns found: {', '.join(map(str, columns)) or 'none'})", file=where)
    if title is None:
        raise DatasetError(f"has no title column; name one {' | '.join(TITLE_COLUMNS)} (the title is what "
                           f"expected_docs lists; columns found: {', '.join(map(str, columns))})", file=where)
    return title, body


def _rows_to_documents(name: str, columns: List[str], records: Records) -> List[Document]:
    docs: List[Document] = []
    picked: Optional[Tuple[str, str]] = (pick_columns(columns, name) if columns else None)
    for where, row in records:
        title_col, body_col = picked or pick_columns([str(k) for k in row], name)
        picked = (title_col, body_col)
        title, body = _cell(row.get(title_col)), _cell(row.get(body_col))
        if not body.strip():
            continue  # an empty document has nothing to ask about; coverage lists only real text
        if not title.strip():
            raise where.error("has a document with no title; every document needs one (expected_docs names it)",
                              column=title_col)
        docs.append(Document(title.strip(), body, f"{name} {where.label()}"))
        if len(docs) > MAX_DOCUMENTS:
            raise DatasetError(f"has more than {MAX_DOCUMENTS:,} documents; sample them first", file=name)
    return docs


def _cell(value: Any) -> str:
    return "" if value is None else str(value)


def postgres_documents(url: str, query: str) -> List[Document]:
    """Documents from a PostgreSQL query returning a title column and a body column (read-only)."""
    if not query.strip():
        raise DatasetError("--docs postgresql://... needs --docs-query, e.g. "
                           "\"SELECT title, body FROM documents\"")
    try:
        import psycopg
    except ImportError:
        raise MissingExtra("reading documents from PostgreSQL needs psycopg: pip install 'ragmeter[postgres]'") from None
    where = "the PostgreSQL query"
    try:
        with psycopg.connect(url, connect_timeout=10) as conn:
            conn.read_only = True  # a query typed by the user can only read
            with conn.cursor() as cur:
                cur.execute(query)
                if cur.description is None:
                    raise DatasetError("returns no rows (it is not a SELECT); write SELECT title, body FROM ...",
                                       file=where)
                columns = [d.name for d in cur.description]
                title_col, body_col = pick_columns(columns, where)
                ti, bi = columns.index(title_col), columns.index(body_col)
                rows = cur.fetchmany(MAX_DOCUMENTS + 1)
    except psycopg.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DatasetError(f"failed: {first}; check the URL, the table and the query", file=where) from None
    docs = [Document(str(r[ti]).strip(), str(r[bi]), f"postgresql row {n}")
            for n, r in enumerate(rows, 1) if r[bi] is not None and str(r[bi]).strip() and r[ti] is not None]
    if not docs:
        raise DatasetError("returned no documents with text", file=where)
    return docs


def _unique(docs: List[Document], where: str) -> List[Document]:
    """One document per title: rows sharing a title (a table of a document's parts) are joined in
    order, since the title is all expected_docs and the retriever's contexts can tell apart."""
    if not docs:
        raise DatasetError("holds no documents", file=where)
    merged: Dict[str, Document] = {}
    for doc in docs:
        old = merged.get(doc.title)
        merged[doc.title] = doc if old is None else Document(doc.title, old.body + "\n\n" + doc.body, old.source)
    return list(merged.values())
