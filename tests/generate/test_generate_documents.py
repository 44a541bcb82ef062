"""Documents in: folders of four formats, tables, errors; chunking by headings and paragraphs."""
import json

import pytest

from docfiles import make_pdf, write_corpus
from evaluator.errors import DatasetError
from evaluator.generate.chunking import chunk_document, chunk_documents
from evaluator.generate.documents import Document, load_documents


def test_a_folder_of_markdown_text_html_and_pdf(tmp_path):
    docs = {d.title: d for d in load_documents(write_corpus(tmp_path / "docs"))}
    assert set(docs) == {"Electric bikes", "Day passes", "Lost property", "helmets"}
    assert "Children under 14 must wear a helmet" in docs["helmets"].body
    assert "12 central stations" in docs["helmets"].body  # the second page
    lost = docs["Lost property"].body
    assert "## Claiming" in lost and "alert(1)" not in lost and "color: red" not in lost


def test_chunks_keep_title_section_and_position(tmp_path):
    chunks = chunk_documents(load_documents(write_corpus(tmp_path / "docs")))
    bikes = [c for c in chunks if c.title == "Electric bikes"]
    assert [(c.section, c.position) for c in bikes] == [("Electric bikes > Pricing", 0), ("Electric bikes > Charging", 1)]
    assert bikes[1].chunk_id == "electric-bikes#1" and bikes[1].text.startswith("Riders never charge")
    assert len({c.chunk_id for c in chunks}) == len(chunks)


def test_a_long_section_is_cut_between_paragraphs_then_sentences_within_the_limit():
    para = " ".join(f"Sentence {i} tells one fact about the depot." for i in range(40))
    doc = Document("Depot", f"# Depot\n\nShort first paragraph.\n\n{para}\n\nLast paragraph.")
    chunks = chunk_document(doc, max_chars=300)
    assert all(len(c.text) <= 300 for c in chunks)
    assert len(chunks) > 5 and chunks[0].text.startswith("Short first paragraph.")
    assert "Sentence 0 tells" in " ".join(c.text for c in chunks) and chunks[-1].text.endswith("Last paragraph.")
    assert [c.position for c in chunks] == list(range(len(chunks)))


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_a_table_of_documents_with_common_column_spellings(tmp_path, suffix):
    rows = [{"Name": "Refunds", "page_content": "Refunds take 14 days."},
            {"Name": "Deliveries", "page_content": "Deliveries arrive in 3 days."}]
    path = tmp_path / f"docs{suffix}"
    if suffix == ".csv":
        path.write_text("Name,page_content\n" + "".join(f'{r["Name"]},"{r["page_content"]}"\n' for r in rows))
    elif suffix == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq
        pq.write_table(pa.Table.from_pylist(rows), path)
    docs = load_documents(path)
    assert [(d.title, d.body) for d in docs] == [("Refunds", "Refunds take 14 days."),
                                                 ("Deliveries", "Deliveries arrive in 3 days.")]


def test_rows_sharing_a_title_are_one_document(tmp_path):
    path = tmp_path / "parts.jsonl"
    path.write_text('{"title": "FAQ", "body": "Part one."}\n{"title": "FAQ", "body": "Part two."}\n')
    assert [(d.title, d.body) for d in load_documents(path)] == [("FAQ", "Part one.\n\nPart two.")]


def test_bad_inputs_say_what_to_do(tmp_path):
    table = tmp_path / "t.csv"
    table.write_text("title,summary\nA,b\n")
    with pytest.raises(DatasetError, match=r"t.csv.*no document text column; name one body \| text"):
        load_documents(table)
    with pytest.raises(DatasetError, match="does not exist"):
        load_documents(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(DatasetError, match="holds no documents"):
        load_documents(tmp_path / "empty")
    bad = tmp_path / "broken" / "scan.pdf"
    bad.parent.mkdir()
    bad.write_bytes(b"%PDF-1.4 not really")
    with pytest.raises(DatasetError, match="scan.pdf.*not a readable PDF"):
        load_documents(bad.parent)
    with pytest.raises(DatasetError, match="--docs-query needs --docs postgresql"):
        load_documents(table, query="SELECT 1")


def test_a_pdf_without_text_is_refused_with_the_reason(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "blank.pdf").write_bytes(make_pdf([[]]))
    with pytest.raises(DatasetError, match="blank.pdf.*holds no text"):
        load_documents(tmp_path / "d")


def test_documents_from_a_real_postgresql_table(postgres_url):
    import psycopg
    with psycopg.connect(postgres_url) as conn:
        conn.execute("CREATE TABLE documents (id serial, title text, body text, embedding text)")
        conn.execute("INSERT INTO documents (title, body) VALUES ('Refunds', '# Refunds\n\nRefunds take 14 days.'),"
                     " ('Deliveries', 'Deliveries arrive in 3 days.'), ('Empty', NULL)")
    docs = load_documents(postgres_url, query="SELECT title, body FROM documents ORDER BY id")
    assert [d.title for d in docs] == ["Refunds", "Deliveries"]
    with pytest.raises(DatasetError, match="PostgreSQL query: failed: .*nosuch"):
        load_documents(postgres_url, query="SELECT title, body FROM nosuch")
    with pytest.raises(DatasetError, match="needs --docs-query"):
        load_documents(postgres_url)
    with pytest.raises(DatasetError, match="failed: .*read-only"):
        load_documents(postgres_url, query="DELETE FROM documents RETURNING title, body")


def test_an_uploaded_parquet_table_that_decodes_past_the_limit_is_refused():
    """A few kB of Parquet whose body is one 1 MB string on every row: refused before it is unpacked."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    from evaluator.generate.documents import load_uploads

    body = pa.array(["Bikes need lights. " * 50_000]).dictionary_encode()
    bodies = pa.DictionaryArray.from_arrays(pa.array([0] * 200, pa.int32()), body.dictionary)
    buf = io.BytesIO()
    pq.write_table(pa.table({"title": [f"Doc {i}" for i in range(200)], "body": bodies}), buf, compression="zstd")

    class Upload:
        name, data = "docs.parquet", buf.getvalue()

        def getvalue(self):
            return self.data

    with pytest.raises(DatasetError, match=r"docs.parquet: decodes to more than 20.0 MB"):
        load_uploads([Upload()], max_decoded=20_000_000)
