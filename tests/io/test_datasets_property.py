"""Bad input never crashes the loaders: every file either loads correctly or raises DatasetError.

Hypothesis drives random bytes, random JSON values and random text through the CSV, JSONL and
JSON readers; big inputs (1 MB cells, 100,000 rows) are built once, by hand.
"""
import csv
import io
import json

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from evaluator.io.datasets import inspect_dataset, load_dataset
from evaluator.errors import DatasetError
from evaluator.model import EvalSample

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
NAMES = ["data.csv", "data.jsonl", "data.json"]
BOMS = [b"", b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff", b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff"]


class Upload(io.BytesIO):
    def __init__(self, data, name):
        super().__init__(data)
        self.name = name


def outcome(data, name, **kwargs):
    """The samples, or the DatasetError; any other exception fails the test on the spot."""
    try:
        samples = load_dataset(Upload(data, name), **kwargs)
    except DatasetError as exc:
        assert exc.file == name and exc.reason, "a DatasetError must name the file and say why"
        return exc
    assert samples and all(isinstance(s, EvalSample) for s in samples)
    for s in samples:
        assert isinstance(s.question, str) and s.question
        assert isinstance(s.answer, str)
        assert all(isinstance(c, str) and c for c in s.contexts)
    assert len({s.sample_id for s in samples}) == len(samples)
    return samples


def preview_outcome(data, name):
    try:
        inspect_dataset(Upload(data, name))
    except DatasetError as exc:
        assert exc.file == name


# --- random bytes ---------------------------------------------------------------------------------

@FUZZ
@given(data=st.binary(max_size=3000), name=st.sampled_from(NAMES), bom=st.sampled_from(BOMS))
def test_random_bytes_never_crash(data, name, bom):
    outcome(bom + data, name)
    preview_outcome(bom + data, name)


HEADERS = {
    "data.csv": b"question,answer,contexts,ground_truth,expected_docs,human_faithfulness\n",
    "data.jsonl": b'{"question": "q", "answer": "a", "contexts": ["c"]}\n',
    "data.json": b'[{"question": "q", "answer": "a"},',
}


@FUZZ
@given(data=st.binary(max_size=2000), name=st.sampled_from(NAMES))
def test_random_bytes_after_a_valid_start_never_crash(data, name):
    outcome(HEADERS[name] + data, name)


@FUZZ
@given(text=st.text(max_size=2000), name=st.sampled_from(NAMES),
       encoding=st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "utf-32"]))
def test_random_text_after_a_valid_start_never_crashes(text, name, encoding):
    start = HEADERS[name].decode()
    outcome((start + text).encode(encoding, "surrogatepass"), name)


# --- random JSON values in every field -------------------------------------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=10,
)
KEYS = ["question", "answer", "contexts", "ground_truth", "sample_id", "expected_answer_keywords",
        "expected_docs", "category", "human_faithfulness", "Question", "extra", "retrieved_contexts"]
ROWS = st.lists(st.dictionaries(st.sampled_from(KEYS), JSON_VALUES, max_size=8), min_size=0, max_size=5)


def as_cell(value):
    return value if isinstance(value, str) else json.dumps(value)


def encode_rows(rows, name):
    if name.endswith(".jsonl"):
        return "".join(json.dumps(r) + "\n" for r in rows).encode()
    if name.endswith(".json"):
        return json.dumps(rows).encode()
    columns = list(dict.fromkeys(k for r in rows for k in r)) or ["question"]
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(columns)
    writer.writerows([as_cell(r.get(c, "")) for c in columns] for r in rows)
    return buf.getvalue().encode()


@pytest.mark.slow
@FUZZ
@given(rows=ROWS, name=st.sampled_from(NAMES))
def test_random_json_values_in_fields_never_crash(rows, name):
    outcome(encode_rows(rows, name), name)


@pytest.mark.slow
@FUZZ
@given(value=JSON_VALUES, name=st.sampled_from(["data.jsonl", "data.json"]))
def test_wrong_context_types_give_a_located_error(value, name):
    """contexts may be null, a string or a list of strings/context objects; anything else is named."""
    row = {"question": "q", "answer": "a", "contexts": value}
    result = outcome(encode_rows([row], name), name)
    if value is None or (isinstance(value, list) and all(isinstance(v, str) for v in value)):
        assert isinstance(result, list)
    elif isinstance(value, (bool, int, float, dict)) or isinstance(result, DatasetError):
        # A string loads as one context unless it holds a number, an object or a broken list.
        assert isinstance(result, DatasetError) and result.column == "contexts"
        assert (result.line, result.item) == ((1, None) if name.endswith("l") else (None, 1))


# --- valid data round-trips through every format and encoding ---------------------------------------

# Text without NUL (NUL marks a binary file) and without lone surrogates (not encodable).
TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=40)
QUESTION = TEXT.filter(lambda t: t.strip())
SAMPLE_ROWS = st.lists(
    st.fixed_dictionaries({
        "question": QUESTION, "answer": TEXT, "contexts": st.lists(TEXT, max_size=3),
        "ground_truth": TEXT, "category": TEXT,
    }),
    min_size=1, max_size=6,
)


def expected_samples(rows):
    return [EvalSample(
        question=r["question"].strip(), answer=r["answer"].strip(),
        contexts=[c.strip() for c in r["contexts"] if c.strip()],
        ground_truth=r["ground_truth"].strip() or None, sample_id=f"row-{i}",
        category=r["category"].strip() or None,
    ) for i, r in enumerate(rows, 1)]


def write_rows(rows, name):
    if name.endswith(".csv"):
        buf = io.StringIO()
        writer = csv.writer(buf)
        writer.writerow(["Question", " answer ", "retrieved_contexts", "reference", "category"])
        for r in rows:
            writer.writerow([r["question"], r["answer"], json.dumps(r["contexts"]), r["ground_truth"], r["category"]])
        return buf.getvalue()
    return "".join(json.dumps(r) + "\n" for r in rows) if name.endswith(".jsonl") else json.dumps(rows)


@pytest.mark.slow
@FUZZ
@given(rows=SAMPLE_ROWS, name=st.sampled_from(NAMES),
       encoding=st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "utf-16-be", "utf-32"]))
def test_valid_rows_load_exactly_in_every_encoding(rows, name, encoding):
    data = write_rows(rows, name).encode(encoding)
    if encoding == "utf-16-be":
        data = b"\xfe\xff" + data  # a big-endian file with its byte-order mark
    result = outcome(data, name)
    assert result == expected_samples(rows)


CP1252_TEXT = st.text(st.characters(codec="cp1252", blacklist_characters="\x00"), max_size=30)


@pytest.mark.slow
@FUZZ
@given(rows=st.lists(st.fixed_dictionaries({
    "question": CP1252_TEXT.filter(lambda t: t.strip()), "answer": CP1252_TEXT,
    "contexts": st.lists(CP1252_TEXT, max_size=2), "ground_truth": CP1252_TEXT, "category": CP1252_TEXT,
}), min_size=1, max_size=4), name=st.sampled_from(NAMES))
def test_windows_1252_and_latin1_files_load_when_not_utf8(rows, name):
    data = write_rows(rows, name).encode("cp1252")
    try:
        data.decode("utf-8")
        assume(False)  # valid UTF-8 bytes are read as UTF-8, by design
    except UnicodeDecodeError:
        pass
    assert outcome(data, name) == expected_samples(rows)


def test_latin1_bytes_cp1252_leaves_undefined_still_load():
    data = "question,answer\ncaf\xe9 \x81,ok\n".encode("latin-1")
    [s] = load_dataset(Upload(data, "l.csv"))
    assert s.question == "caf\xe9 \x81"


# --- structure: empty, header-only, duplicate columns ------------------------------------------------

COLUMN = st.text(st.characters(whitelist_categories=("Ll", "Lu", "Nd")), min_size=1, max_size=10)


@FUZZ
@given(columns=st.lists(COLUMN, min_size=1, max_size=6), blank_lines=st.integers(0, 3))
def test_header_only_csv_is_a_dataset_error(columns, blank_lines):
    text = ",".join(columns) + "\n" + "\n" * blank_lines
    assert isinstance(outcome(text.encode(), "data.csv"), DatasetError)


@FUZZ
@given(columns=st.lists(COLUMN, min_size=1, max_size=5, unique_by=str.casefold), pick=st.integers(0, 4),
       swap=st.booleans())
def test_duplicate_columns_are_named(columns, pick, swap):
    dup = columns[pick % len(columns)]
    variant = dup.swapcase() if swap else dup
    assume(variant.casefold() == dup.casefold())  # "ı".swapcase() is "I", another letter
    header = ["question", "answer"] + [c for c in columns if c.casefold() not in ("question", "answer")]
    header.append(variant)
    text = ",".join(header) + "\n" + ",".join("x" for _ in header) + "\n"
    result = outcome(text.encode(), "data.csv")
    assert isinstance(result, DatasetError) and "appears twice" in result.reason and result.line == 1


@pytest.mark.parametrize("name, data", [
    ("e.csv", b""), ("e.jsonl", b""), ("e.json", b""), ("e.csv", b"\xef\xbb\xbf"), ("e.csv", b"\xff\xfe"),
    ("e.jsonl", b"\n \n"), ("e.json", b"[]"), ("e.json", b"{}"), ("e.json", b"null"),
    ("e.json", b"[" * 100_000), ("e.jsonl", b"[" * 100_000), ("e.json", b'{"samples": ' * 50_000),
])
def test_empty_and_pathological_files_are_dataset_errors(name, data):
    assert isinstance(outcome(data, name), DatasetError)


def test_deeply_nested_cell_is_text_or_an_error():
    cell = "[" * 50_000 + "]" * 50_000
    for contexts in (cell, "['" * 5_000):
        buf = io.StringIO()
        csv.writer(buf).writerows([["question", "answer", "contexts"], ["q", "a", contexts]])
        outcome(buf.getvalue().encode(), "deep.csv")


# --- big inputs ------------------------------------------------------------------------------------

MB = 1 << 20


@pytest.mark.parametrize("name", NAMES)
def test_one_megabyte_cells_load(name):
    context = ("Refund policy: " + "annual plans are refunded within 14 days. " * (MB // 40))[:MB]
    rows = [{"question": "q" * MB, "answer": "a", "contexts": [context, "second"],
             "ground_truth": "", "category": ""}]
    [s] = outcome(write_rows(rows, name).encode(), name)
    assert len(s.question) == MB and s.contexts == [context.strip(), "second"]


def test_one_megabyte_unterminated_quote_is_a_dataset_error_or_loads():
    data = b'question,answer\nq,"' + b"x" * MB + b"\nq2,a\n"
    outcome(data, "open.csv")


N_ROWS = 100_000


@pytest.fixture(scope="module")
def big_files(tmp_path_factory):
    """A 100,000-row dataset written once as CSV and JSONL."""
    folder = tmp_path_factory.mktemp("big")
    rows = ({"sample_id": f"s{i}", "question": f"What does plan {i} cost?", "answer": "It costs $6 a month.",
             "contexts": ["Plans and pricing: Plus costs $6 per month.", "Refund policy: 14 days."],
             "ground_truth": "$6" if i % 3 == 0 else "", "human_faithfulness": i % 2} for i in range(N_ROWS))
    with open(folder / "big.csv", "w", newline="", encoding="utf-8") as fc, \
            open(folder / "big.jsonl", "w", encoding="utf-8") as fj:
        writer = csv.writer(fc)
        writer.writerow(["sample_id", "question", "answer", "contexts", "ground_truth", "human_faithfulness"])
        for r in rows:
            writer.writerow([as_cell(v) for v in r.values()])
            fj.write(json.dumps(r) + "\n")
    return folder


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_hundred_thousand_rows_load_whole(big_files, fmt):
    samples = load_dataset(big_files / f"big.{fmt}")  # the speed is bench/'s to measure, not a test's
    assert len(samples) == N_ROWS
    assert samples[-1] == EvalSample(
        f"What does plan {N_ROWS - 1} cost?", "It costs $6 a month.",
        ["Plans and pricing: Plus costs $6 per month.", "Refund policy: 14 days."],
        "$6", f"s{N_ROWS - 1}", metadata={"human_labels": {"faithfulness": 1.0}})


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_row_limit_stops_early_on_a_big_file(big_files, fmt):
    with pytest.raises(DatasetError, match="more than 1,000 rows"):
        load_dataset(big_files / f"big.{fmt}", max_rows=1_000)


@pytest.mark.slow
def test_inspect_counts_a_big_file(big_files):
    preview = inspect_dataset(big_files / "big.csv")
    assert preview.row_count == N_ROWS and len(preview.rows) == 5
