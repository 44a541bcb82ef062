"""Nested mapping: a field read from inside a column, with --target-field's path syntax."""
import json

import pytest

from evaluator import load_dataset
from evaluator.cli.command import main
from evaluator.errors import DatasetError
from evaluator.io.datasets import inspect_dataset

NESTED = [
    {"id": "a", "inputs": {"question": "Is the kettle covered?"},
     "outputs": {"answer": "Yes, for two years.", "documents": [{"page_content": "Kettles: two years."},
                                                                 {"page_content": "Toasters: one year."}]}},
    {"id": "b", "inputs": {"question": "هل يشمل الضمان الغلاية؟"},
     "outputs": {"answer": "نعم، لمدة سنتين.", "documents": [{"page_content": "الغلايات: سنتان."}]}},
]
MAPPING = {"question": "inputs.question", "answer": "outputs.answer", "contexts": "outputs.documents[].page_content"}


def _shape(samples):
    return [(s.sample_id, s.question, s.answer, s.contexts) for s in samples]


EXPECTED = [("a", "Is the kettle covered?", "Yes, for two years.", ["Kettles: two years.", "Toasters: one year."]),
            ("b", "هل يشمل الضمان الغلاية؟", "نعم، لمدة سنتين.", ["الغلايات: سنتان."])]


def test_paths_into_json_lines(tmp_path):
    path = tmp_path / "nested.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in NESTED), encoding="utf-8")
    assert _shape(load_dataset(path, MAPPING)) == EXPECTED


def test_paths_into_flattened_dotted_columns_holding_json(tmp_path):
    import csv

    path = tmp_path / "flat.csv"
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["id", "inputs.question", "outputs.answer", "outputs.documents"])
        for r in NESTED:
            w.writerow([r["id"], r["inputs"]["question"], r["outputs"]["answer"],
                        json.dumps(r["outputs"]["documents"], ensure_ascii=False)])
    assert _shape(load_dataset(path, MAPPING)) == EXPECTED


def test_paths_into_parquet_structs(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    import pyarrow as pa

    path = tmp_path / "nested.parquet"
    pq.write_table(pa.Table.from_pylist(NESTED), path)
    assert _shape(load_dataset(path, MAPPING)) == EXPECTED


def test_cli_mapping_takes_paths(tmp_path):
    path = tmp_path / "nested.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in NESTED), encoding="utf-8")
    out = tmp_path / "r.json"
    args = ["evaluate", str(path), "--offline", "-q", "--no-history", "-o", str(out)]
    for field, where in MAPPING.items():
        args += ["--mapping", f"{field}={where}"]
    assert main(args) == 0
    assert json.loads(out.read_text())["num_samples"] == 2


def test_a_path_that_no_row_has_is_named(tmp_path):
    path = tmp_path / "nested.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in NESTED))
    with pytest.raises(DatasetError, match="inputs.query"):
        load_dataset(path, {**MAPPING, "question": "inputs.query"})


def test_a_malformed_path_is_refused(tmp_path):
    path = tmp_path / "nested.jsonl"
    path.write_text(json.dumps(NESTED[0]) + "\n")
    with pytest.raises(DatasetError, match="not a dotted path"):
        load_dataset(path, {"question": "inputs..question"})


def test_preview_offers_the_nested_paths_of_the_first_rows(tmp_path):
    path = tmp_path / "nested.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in NESTED))
    paths = inspect_dataset(path).paths
    assert {"inputs.question", "outputs.answer", "outputs.documents[].page_content"} <= set(paths)
