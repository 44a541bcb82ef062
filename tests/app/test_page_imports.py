"""The first page a user opens imports only what it draws (issue 28 item 3): the Evaluate page's modules
pull in neither the OpenAI client (~1 s) nor pandas, pyarrow or altair; those load on the paths that use
them (a judge call, a table, a chart)."""
import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("openai", "pandas", "pyarrow", "altair")


def page_modules(page: str) -> list:
    tree = ast.parse((ROOT / "pages" / page).read_text(encoding="utf-8"))
    return [f"pages.{alias.name}" for node in tree.body if isinstance(node, ast.ImportFrom)
            and node.module == "pages" for alias in node.names]


def test_the_evaluate_page_imports_no_heavy_library():
    modules = page_modules("evaluate.py")
    assert "pages._run_panel" in modules and "pages._judge" in modules  # the page's own building blocks
    code = (f"import sys; sys.path.insert(0, {str(ROOT)!r}); import {', '.join(modules)}; "
            f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", f"the Evaluate page imports {out.stdout.strip()} at start"
