"""Document ids read from every format that carries them: columns, --mapping, context metadata, MLflow traces,
a target's Documents; bad cells refused naming the file, line and column; ids kept in the history."""
from __future__ import annotations

import json

import pytest

from evaluator import EvalSample, load_dataset
from evaluator.errors import DatasetError
from evaluator.io.records import sample_from_record, sample_to_record
from evaluator.io.shapes import response_from_value


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_csv_columns_give_ranked_ids_and_graded_relevance(tmp_path):
    path = write(tmp_path, "ir.csv", 'question,answer,retrieval_ids,relevance\n'
                 'q1,a1,"[""d3"", null, ""d1""]","{""d1"": 2, ""d9"": 1}"\n'
                 'q2,a2,d4; d5,\n')
    first, second = load_dataset(path)
    assert first.retrieval_ids == ["d3", "", "d1"]  # the id-less document keeps rank 2
    assert first.relevance == {"d1": 2.0, "d9": 1.0}
    assert second.retrieval_ids == ["d4", "d5"] and second.relevance is None


def test_jsonl_numbers_as_ids_and_a_list_as_relevance(tmp_path):
    path = write(tmp_path, "ir.jsonl", json.dumps({"question": "q", "answer": "a", "doc_ids": [7, 3],
                                                   "relevance": ["3"]}) + "\n")
    (sample,) = load_dataset(path)
    assert sample.retrieval_ids == ["7", "3"] and sample.relevance == {"3": 1.0}


def test_mapping_reads_ids_from_a_nested_path(tmp_path):
    row = {"question": "q", "answer": "a", "out": {"hits": [{"id": "x1"}, {"id": "x2"}]}}
    path = write(tmp_path, "nested.jsonl", json.dumps(row) + "\n")
    (sample,) = load_dataset(path, mapping={"retrieval_ids": "out.hits[].id"})
    assert sample.retrieval_ids == ["x1", "x2"]


def test_ids_come_from_context_metadata_when_there_is_no_ids_column(tmp_path):
    contexts = [{"page_content": "Refunds take 30 days.", "metadata": {"source": "policy.md"}},
                {"text": "  "},  # blank: dropped from contexts, and so from ids
                {"text": "Shipping is free.", "id": "ship-1"},
                "a plain text context"]
    path = write(tmp_path, "ctx.jsonl", json.dumps({"question": "q", "answer": "a", "contexts": contexts}) + "\n")
    (sample,) = load_dataset(path)
    assert len(sample.contexts) == 3
    assert sample.retrieval_ids == ["policy.md", "ship-1", ""]


def test_plain_contexts_give_no_ids(tmp_path):
    path = write(tmp_path, "plain.jsonl", json.dumps({"question": "q", "answer": "a", "contexts": ["x", "y"]}) + "\n")
    (sample,) = load_dataset(path)
    assert sample.retrieval_ids is None


@pytest.mark.parametrize("cell, problem", [
    ('"{""d1"": ""high""}"', "relevance grade of 'd1' must be a number"),
    ('"{""d1"": -1}"', "must be a number >= 0"),
    ("42", "relevance must be a JSON object"),
])
def test_a_bad_relevance_cell_names_file_line_and_column(tmp_path, cell, problem):
    path = write(tmp_path, "bad.csv", f"question,answer,relevance\nq,a,ok\nq2,a2,{cell}\n".replace(",ok", ",d1"))
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    text = str(info.value)
    assert "bad.csv" in text and "line 3" in text and "relevance" in text and problem in text


def test_a_bad_id_names_the_column(tmp_path):
    path = write(tmp_path, "bad.jsonl", json.dumps({"question": "q", "answer": "a", "retrieval_ids": [{"x": 1}]}) + "\n")
    with pytest.raises(DatasetError, match="retrieval_ids.*each retrieval id must be text or a number"):
        load_dataset(path)


def test_a_cell_with_too_many_ids_is_refused(tmp_path):
    from evaluator.io.doc_ids import MAX_IDS

    row = {"question": "q", "answer": "a", "retrieval_ids": [f"d{i}" for i in range(MAX_IDS + 1)],
           "relevance": {f"d{i}": 1 for i in range(MAX_IDS + 1)}}
    path = write(tmp_path, "big.jsonl", json.dumps(row) + "\n")
    with pytest.raises(DatasetError, match="10,001 retrieval ids"):
        load_dataset(path)
    row["retrieval_ids"] = ["d1"]
    write(tmp_path, "big.jsonl", json.dumps(row) + "\n")
    with pytest.raises(DatasetError, match="grades 10,001 documents"):
        load_dataset(path)


def test_mlflow_results_give_ids_from_retriever_documents_and_expected_ids(tmp_path):
    spans = [{"attributes": {"mlflow.spanType": json.dumps("RETRIEVER"), "mlflow.spanOutputs": json.dumps([
        {"page_content": "Warranty: two years.", "metadata": {"doc_uri": "kb/warranty"}},
        {"page_content": "Returns: 30 days.", "id": "kb/returns"}])}}]
    trace = {"info": {"trace_id": "tr-1"}, "data": {"spans": spans}}
    row = {"trace_id": "tr-1", "request": json.dumps({"question": "Warranty?"}), "response": "Two years.",
           "trace": json.dumps(trace), "assessments": "[]",
           "expectations": json.dumps({"expected_retrieved_context": [{"doc_uri": "kb/warranty"}]})}
    path = write(tmp_path, "mlflow.jsonl", json.dumps(row) + "\n")
    (sample,) = load_dataset(path)
    assert sample.retrieval_ids == ["kb/warranty", "kb/returns"]
    assert sample.expected_docs == ["kb/warranty"]


class Document:  # shaped like a LangChain Document
    def __init__(self, text, **metadata):
        self.page_content, self.metadata = text, metadata


def test_a_target_returning_documents_gives_their_ids():
    response = response_from_value(("answer", [Document("one", id="d1"), Document("two", source="d2.md")]))
    assert response.retrieval_ids == ["d1", "d2.md"]
    assert response_from_value({"answer": "a", "contexts": ["x"], "retrieval_ids": ["k", None]}).retrieval_ids == ["k", ""]
    assert response_from_value(("a", ["plain"])).retrieval_ids is None


def test_without_an_id_a_title_is_the_id_as_in_ragmeters_own_test_sets():
    from evaluator.demo import rag_answer

    response = response_from_value(rag_answer("How much does a day pass cost?"))
    assert response.retrieval_ids and response.retrieval_ids[0] == "Day passes"  # demo_questions' expected_docs


def test_an_http_target_gives_ids_found_or_at_a_field_path():
    from target_server import TargetServer

    from evaluator.targets.http import HttpTarget

    reply = {"answer": "ok", "hits": [{"passage": "p1", "key": "k1"}, {"passage": "p2", "key": None}],
             "doc_ids": ["d9", "d8"]}
    with TargetServer(lambda body: (200, reply)) as srv:
        assert HttpTarget(srv.url).call("q").retrieval_ids == ["d9", "d8"]  # found by its name
        mapped = HttpTarget(srv.url, fields={"contexts": "hits[].passage", "retrieval_ids": "hits[].key"})
        response = mapped.call("q")
    assert response.contexts == ["p1", "p2"] and response.retrieval_ids == ["k1", ""]


def test_ids_and_relevance_survive_the_history_record():
    sample = EvalSample("q", "a", ["c"], sample_id="s", retrieval_ids=["d2", "", "d1"], relevance={"d1": 3.0})
    back = sample_from_record(json.loads(json.dumps(sample_to_record(sample, 0))))
    assert back.retrieval_ids == ["d2", "", "d1"] and back.relevance == {"d1": 3.0}
