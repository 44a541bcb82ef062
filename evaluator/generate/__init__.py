"""Test sets from documents: `ragmeter generate` and the Generate page.

    documents.py   folders (.md .txt .html .pdf), tables (CSV/JSONL/Parquet), PostgreSQL -> Document
    chunking.py    Document -> Chunk (headings, paragraphs, a size limit; title, section, position)
    retrieval.py   a BM25 index over chunks (the gate's and the coverage map's lexical retriever)
    kinds.py       the kinds of item (single, multi, summary, unanswerable, variant; cloze offline)
    prompts.py     the prompts that write and check items
    plan.py        which chunks and kind the next item is written from (spread over the corpus)
    gate.py        the checks an item passes before it is kept, and the rejection reasons
    extractive.py  offline cloze items (retrieval checks only)
    runner.py      Generation: attempts on threads until n items are kept; stop and resume
    coverage.py    which documents and sections a test set touches
    items.py       TestItem and the test-set files `ragmeter evaluate` reads
    chart.py       the Generate page's coverage chart (altair)
    sources.py     the Generate page's documents: uploads or a folder, chunked; a chunk with its sentences marked

Import from the modules (`from evaluator.generate.runner import Generation`): this file re-exports
nothing, so importing one module never loads the others.
"""
