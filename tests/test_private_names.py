"""No module of evaluator/ reaches into another module's private (_underscore) names.

A leading underscore says "may change without notice"; a module that imports one from elsewhere
couples itself to a detail its owner is free to change (issue 16.5). What is shared is made public
where it lives. The check walks the source with `ast`: `from X import _name`, and `mod._name` on a
module imported by name.
"""
import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "evaluator"


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def reaches(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    modules = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module != "__future__":
            for alias in node.names:
                if _private(alias.name):
                    yield f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: from {'.' * node.level}{node.module or ''} import {alias.name}"
                elif alias.name[:1].islower():
                    modules.add(alias.asname or alias.name)  # may be a module (from . import cells)
        elif isinstance(node, ast.Import):
            modules.update((a.asname or a.name).split(".")[0] for a in node.names)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and _private(node.attr) and isinstance(node.value, ast.Name)
                and node.value.id in modules):
            yield f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {node.value.id}.{node.attr}"


def test_no_module_imports_another_modules_private_names():
    found = [line for path in sorted(PACKAGE.rglob("*.py")) for line in reaches(path)]
    assert found == [], "\n".join(found)


def test_the_check_sees_a_reach(tmp_path, monkeypatch):
    bad = PACKAGE / "__reach_probe__.py"
    source = "from .evaluation import _Progress\nimport os\nos._exit\n"
    tree_lines = list(reaches_of_text(source, tmp_path))
    assert len(tree_lines) == 2, tree_lines
    assert not bad.exists()


def reaches_of_text(source: str, tmp_path: Path):
    probe = tmp_path / "evaluator" / "probe.py"
    probe.parent.mkdir()
    probe.write_text(source, encoding="utf-8")
    global PACKAGE
    saved, PACKAGE = PACKAGE, probe.parent
    try:
        return list(reaches(probe))
    finally:
        PACKAGE = saved
