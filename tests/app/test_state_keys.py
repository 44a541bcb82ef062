"""The dashboard's code rules, read from its source (AST): session state only through pages/_state.py,
message boxes only through pages/_errors.py."""
import ast
from pathlib import Path

import pytest

from pages import _state as state

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted([ROOT / "app.py", *(ROOT / "pages").glob("*.py")])
STATE, ERRORS = ROOT / "pages" / "_state.py", ROOT / "pages" / "_errors.py"
KEY_VALUES = {v for k, v in vars(state).items() if k.isupper() and isinstance(v, str) and k != "KEEP"}
BOXES = {"error", "warning", "info", "success", "exception", "toast"}
LOGGERS = {"log", "logging", "logger", "errors"}
ACCESSORS = {"get", "has", "put", "drop", "take", "drop_stale"}  # _state's readers and writers (not key builders)


def tree(path: Path) -> ast.AST:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def where(path: Path, node: ast.AST) -> str:
    return f"{path.name}:{node.lineno}"


def literal(node: ast.AST) -> bool:
    return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str))


def session_state_uses(path: Path):
    return [where(path, n) for n in ast.walk(tree(path)) if isinstance(n, ast.Attribute) and n.attr == "session_state"]


def literal_keys_given_to_state(path: Path):
    """`state.get("report")` and the like: a key by literal, past the constants."""
    return [where(path, n) for n in ast.walk(tree(path))
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and isinstance(n.func.value, ast.Name) and n.func.value.id == "state" and n.func.attr in ACCESSORS
            and n.args and literal(n.args[0])]


def widget_keys_spelled_out(path: Path):
    """`key="upload_file"` where _state names that key: the two spellings could drift apart."""
    return [where(path, kw.value) for n in ast.walk(tree(path)) if isinstance(n, ast.Call) for kw in n.keywords
            if kw.arg == "key" and isinstance(kw.value, ast.Constant) and kw.value.value in KEY_VALUES]


def boxes_outside_errors(path: Path):
    return [where(path, n) for n in ast.walk(tree(path))
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in BOXES
            and not (isinstance(n.func.value, ast.Name) and n.func.value.id in LOGGERS)]


@pytest.mark.parametrize("path", [p for p in SOURCES if p != STATE], ids=lambda p: p.name)
def test_only_the_state_module_touches_session_state(path):
    assert session_state_uses(path) == []
    assert literal_keys_given_to_state(path) == []
    assert widget_keys_spelled_out(path) == []


@pytest.mark.parametrize("path", [p for p in SOURCES if p != ERRORS], ids=lambda p: p.name)
def test_message_boxes_come_from_the_errors_module(path):
    assert boxes_outside_errors(path) == []


def test_the_checks_find_what_they_forbid(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text('import streamlit as st\nfrom pages import _state as state\n'
                   'st.session_state["report"] = 1\nstate.get(f"{x}_api_key")\n'
                   'st.file_uploader("f", key="upload_file")\nst.error("boom")\ncol.info("x")\nlog.warning("fine")\n')
    assert session_state_uses(bad) == ["bad.py:3"]
    assert literal_keys_given_to_state(bad) == ["bad.py:4"]
    assert widget_keys_spelled_out(bad) == ["bad.py:5"]
    assert boxes_outside_errors(bad) == ["bad.py:6", "bad.py:7"]
