"""List cells written as Python literals are read like ast.literal_eval reads them, in bounded memory."""
import ast
import resource
import subprocess
import sys
import textwrap

import pytest

from evaluator.io.literals import parse_literal

SAME_AS_AST = [
    "['a', 'b']",
    "['it\\'s', \"say \\\"hi\\\"\", 'tab\\tnew\\nline', 'caf\\xe9', '\\u0634']",
    "[{'text': 'Refunds take 5 days', 'title': 'Refunds'}, {'page_content': 'x', 'metadata': {'title': 'T'}}]",
    "[1, -2, 3.5, 1e3, True, False, None]",
    "[('a', 1), [], {}, [[['deep']]]]",
    "[ 'spaces' ,  'around' , ]",
    "[]",
]
NOT_LITERALS = ["['a', 'b'", "['a' + 'b']", "[open('x')]", "[a]", "['a'] trailing", "[{'a'}]", "[1, 2]]", "['a',, 'b']"]


@pytest.mark.parametrize("text", SAME_AS_AST)
def test_reads_what_ast_reads(text):
    assert parse_literal(text) == ast.literal_eval(text)


@pytest.mark.parametrize("text", NOT_LITERALS)
def test_refuses_what_is_not_a_plain_literal(text):
    assert parse_literal(text) is None


def test_nesting_deeper_than_the_limit_is_refused_not_a_crash():
    assert parse_literal("[" * 10_000 + "]" * 10_000) is None


@pytest.mark.slow
def test_a_big_list_cell_stays_within_a_small_multiple_of_its_size(tmp_path):
    """The issue's 50 MB cell took 9.1 GB (182x) in ast.literal_eval; 10 MB here (bench/parse_memory.py
    measures 50). Measured in a fresh process."""
    script = textwrap.dedent("""
        import resource, sys
        from evaluator.io.cells import contexts_cell
        from evaluator.io.sources import Where
        cell = "[" + "'ab', " * (10 * 2**20 // 6) + "]"
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        items = contexts_cell(cell, Where("f.csv", 2), "contexts")
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(len(items), (peak - base) * 1024 / len(cell))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600,
                         env={"PYTHONPATH": ":".join(sys.path)})
    assert out.returncode == 0, out.stderr
    count, ratio = out.stdout.split()
    assert int(count) == 10 * 2**20 // 6
    assert float(ratio) < 5, f"peak grew {float(ratio):.1f}x the cell's size"
