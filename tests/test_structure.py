"""The package's shape: imports flow one way (no circles, not even through imports inside functions), between
layers, inside the packages where the order matters, and from the dashboard's views through one door."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "evaluator"
APP = ROOT.parent


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str) -> bool:
    path = ROOT.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def imports_of(path: Path) -> set:
    """Every evaluator module `path` imports, anywhere in the file (functions included)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("evaluator"):
                names = {f"{target}.{a.name}" for a in node.names}
                if not all(_is_module(n) for n in names):  # `from . import sub` imports sub, not the package
                    found.add(target)
                found.update(names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("evaluator"))
    return found


def graph() -> dict:
    modules = {module_name(p): p for p in ROOT.rglob("*.py")}
    return {name: {m for m in imports_of(path) if m in modules and m != name}
            for name, path in modules.items()}


def find_cycle(edges: dict):
    state = {}

    def visit(node, stack):
        state[node] = "open"
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                cycle = visit(nxt, stack + [nxt])
                if cycle:
                    return cycle
        state[node] = "done"
        return None

    for start in sorted(edges):
        if start not in state:
            cycle = visit(start, [start])
            if cycle:
                return cycle
    return None


def test_no_import_circles():
    # A package __init__ that names its submodules for lazy loading is not a circle of code.
    edges = {k: {m for m in v if not k == "evaluator"} for k, v in graph().items()}
    assert find_cycle(edges) is None, " -> ".join(find_cycle(edges))


def test_the_cycle_finder_finds_a_circle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


# The layers, low to high: a module may import its own layer and those listed before it, never after.
# Top-level modules are named by module, subpackages by package; `evaluator/__init__.py` (the public
# surface, loading lazily from every layer) stands above them all. A module that lower layers use is
# named as package.module in its own layer (engines.pool: the one thread pool, for metrics and scoring too).
LAYERS = (
    ("core", ("model", "errors", "text", "conversation", "safetext", "bounded", "plugins", "retrying",
              "environment", "engines.pool")),
    ("io", ("io",)),
    ("judges", ("judges",)),
    ("metrics", ("metrics",)),
    ("store", ("store",)),
    ("analysis", ("analysis",)),
    ("scoring", ("scoring",)),
    ("engines and report", ("engines", "report")),
    ("targets and config", ("targets", "config", "team")),
    ("review and generate", ("review", "generate")),
    ("runs", ("runs",)),
    ("demo, testing and collect", ("demo", "testing", "collect")),
    ("service", ("service",)),  # the application: its use cases, under both front doors
    ("cli", ("cli", "__main__")),  # the command line's door: parses and prints, over the service
)
# evaluator/*.py, __init__ and __main__ included: the rest lives in a layer's package. 12: the core holds the
# one plugin loader, the one retry loop and the one environment reader every layer above may use.
MAX_TOP_LEVEL = 12


def layer_of(module: str) -> int:
    """The index in LAYERS of `evaluator.<part>...` (its package.module first); KeyError for a module no layer names."""
    names = module.split(".")
    for part in (".".join(names[1:3]), names[1]):
        for i, (_, parts) in enumerate(LAYERS):
            if part in parts:
                return i
    raise KeyError(module)


def upward_imports(edges: dict) -> list:
    return sorted(f"{m} ({LAYERS[layer_of(m)][0]}) imports {d} ({LAYERS[layer_of(d)][0]})"
                  for m, deps in edges.items() if m != "evaluator"
                  for d in deps if d != "evaluator" and layer_of(d) > layer_of(m))


def test_every_module_belongs_to_a_layer():
    unnamed = []
    for name in graph():
        try:
            name == "evaluator" or layer_of(name)
        except KeyError:
            unnamed.append(name)
    assert not unnamed, f"add these to LAYERS in tests/test_structure.py: {unnamed}"


def test_no_module_imports_a_higher_layer():
    assert upward_imports(graph()) == []


def test_the_layer_check_finds_an_upward_import():
    assert upward_imports({"evaluator.store.history": {"evaluator.scoring.verdict"}}) == [
        "evaluator.store.history (store) imports evaluator.scoring.verdict (scoring)"]
    assert upward_imports({"evaluator.scoring.verdict": {"evaluator.store.history"}}) == []


def reachable(edges: dict, start) -> set:
    seen, todo = set(), list(start)
    while todo:
        node = todo.pop()
        if node not in seen:
            seen.add(node)
            todo.extend(edges.get(node, ()))
    return seen


def test_ray_workers_reach_nothing_of_the_history_runs_or_targets():
    # A Ray worker imports engines/ray.py and partition.py: the history (SQLite/PostgreSQL), the run
    # path and the user's targets must not be dragged onto every worker.
    reached = reachable(graph(), ["evaluator.engines.ray", "evaluator.engines.partition"])
    assert "evaluator.scoring.evaluation" in reached  # the walk does follow the worker's imports
    assert sorted(m for m in reached if m.split(".")[1:2] in (["store"], ["runs"], ["targets"])) == []


def test_the_top_level_holds_only_the_core():
    top = sorted(p.name for p in ROOT.glob("*.py"))
    assert len(top) <= MAX_TOP_LEVEL, f"{len(top)} modules at evaluator/'s top: {top}; move one into its layer"


def test_every_subpackage_says_what_it_holds():
    for init in sorted(ROOT.glob("*/__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        assert doc and len(doc.split()) >= 5, f"{init.relative_to(ROOT.parent)} opens without a docstring"


# Inside a package whose modules build on each other, the same rule by module, low to high: a module imports its
# own row and the rows before it. "__init__" is the package's own module (evaluator/service/__init__.py is the
# door, above its modules). Every module of a package listed here must be placed in a row.
SUBLAYERS = {
    "store": (("db", "naming"), ("history",), ("pages", "jobs", "reviews", "generations", "exams", "notes"), ("__init__",)),
    "team": (("identity",), ("access", "startup", "settings"), ("resuming",), ("__init__",)),
    "review": (("queue", "label_files", "exam_facts"), ("exam_items",), ("probes",), ("correction", "labels", "exam"),
               ("agreement", "alignment", "entries"), ("__init__",)),
    "generate": (("documents", "items"), ("chunking",), ("extractive", "gate", "kinds", "plan", "prompts", "retrieval"),
                 ("coverage", "runner", "sources"), ("chart",), ("__init__",)),
    "report": (("files", "frames", "header"), ("export", "pdf", "xlsx"), ("comparison", "downloads"), ("__init__",)),
    "service": (("ab", "charts", "choices", "collect", "compare", "evaluation", "history", "judging", "monitor", "notes",
                 "options", "reports", "reviews", "runs", "team", "workers"), ("exports", "generation"), ("__init__",)),
}


def sublayer_of(module: str):
    """(package, row index in SUBLAYERS) of a module of a listed package; None for any other; KeyError when unplaced."""
    names = module.split(".")
    if len(names) < 2 or names[1] not in SUBLAYERS:
        return None
    name = names[2] if len(names) > 2 else "__init__"
    for i, row in enumerate(SUBLAYERS[names[1]]):
        if name in row:
            return names[1], i
    raise KeyError(module)


def upward_within(edges: dict) -> list:
    found = []
    for m, deps in edges.items():
        here = sublayer_of(m) if m != "evaluator" else None
        for d in deps:
            there = sublayer_of(d) if here is not None else None
            if there is not None and there[0] == here[0] and there[1] > here[1]:
                found.append(f"{m} imports {d}, a later row of SUBLAYERS[{here[0]!r}]")
    return sorted(found)


def test_every_module_of_an_ordered_package_has_a_row():
    unplaced = []
    for name in graph():
        try:
            sublayer_of(name)
        except KeyError:
            unplaced.append(name)
    assert not unplaced, f"add these to SUBLAYERS in tests/test_structure.py: {unplaced}"


def test_no_module_imports_a_later_module_of_its_package():
    assert upward_within(graph()) == []


def test_the_package_order_check_finds_an_upward_import():
    assert upward_within({"evaluator.store.history": {"evaluator.store.pages"}}) == [
        "evaluator.store.history imports evaluator.store.pages, a later row of SUBLAYERS['store']"]
    assert upward_within({"evaluator.store.pages": {"evaluator.store.history", "evaluator.review.queue"}}) == []


# --- the dashboard's views and their one door ---------------------------------------------------------
# pages/ and app.py draw; what they show comes through evaluator.service (and the row types of evaluator.model).
DOORS = {"evaluator.service", "evaluator.model"}


def view_files() -> list:
    return sorted((APP / "pages").glob("*.py")) + [APP / "app.py"]


def evaluator_imports(path: Path) -> set:
    """Every `evaluator` module a file outside the package imports, anywhere in it (functions included)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == "evaluator":
            for alias in node.names:  # `from evaluator import service` imports the door, not the package
                named = f"{node.module}.{alias.name}"
                found.add(named if named in DOORS else node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "evaluator")
    return found


def test_views_import_only_the_door():
    found = {f"{path.relative_to(APP)} imports {m}" for path in view_files() for m in evaluator_imports(path)
             if m not in DOORS}
    assert not found, "views reach past evaluator.service: " + "; ".join(sorted(found))


def test_the_view_check_sees_a_reach(tmp_path):
    probe = tmp_path / "page.py"
    probe.write_text("from evaluator import service, EvalSample\nfrom evaluator.model import EvalResult\n"
                     "def f():\n    from evaluator.store.pages import Filters\n    import evaluator.runs.run\n")
    assert evaluator_imports(probe) == {"evaluator", "evaluator.service", "evaluator.model", "evaluator.store.pages",
                                        "evaluator.runs.run"}
    probe.write_text("from evaluator import service\nfrom evaluator.service import RunConfig\n")
    assert evaluator_imports(probe) == {"evaluator.service"}


def test_the_views_use_the_door():
    assert all("evaluator.service" in evaluator_imports(p) for p in view_files()
               if evaluator_imports(p) - {"evaluator.model"}), "a view with evaluator imports but not the door"


def test_nothing_in_the_library_imports_the_door():
    # One way: the service calls the library; were a library module to import it, a view's door would become a
    # path back into the library's insides (and, through its views' needs, a circle). The CLI is the other door.
    users = sorted(m for m, deps in graph().items() if not m.startswith(("evaluator.service", "evaluator.cli"))
                   and any(d == "evaluator.service" or d.startswith("evaluator.service.") for d in deps))
    assert users == []


# --- the command line: the other door over the same application ----------------------------------------
# cli/ parses flags and prints; what it does it asks of evaluator.service's use cases (the ones the pages call),
# so the two doors cannot drift. It imported 70 library modules before; a new need goes into a use case.
MAX_CLI_IMPORTS = 25


def library_imports(package: Path) -> set:
    """Every `evaluator.X.Y` module the files of `package` import, anywhere (functions included), but its own;
    a name imported from a package counts as that package unless the name is itself a module."""
    own = "evaluator." + package.name
    found = set()
    for path in package.rglob("*.py"):
        base = ["evaluator", package.name, *path.relative_to(package).parent.parts]  # what `.` names
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                module = ".".join(base[:len(base) - node.level + 1] + [node.module or ""]).strip(".") \
                    if node.level else node.module or ""
                found.update(_named(module, a.name) for a in node.names if module.split(".")[0] == "evaluator")
            elif isinstance(node, ast.Import):
                found.update(a.name for a in node.names if a.name.split(".")[0] == "evaluator")
    return {m for m in found if m != own and not m.startswith(own + ".")}


def _named(module: str, name: str) -> str:
    candidate = ROOT.parent / (module + "." + name).replace(".", "/")
    return f"{module}.{name}" if candidate.is_dir() or candidate.with_suffix(".py").is_file() else module


def test_the_command_line_asks_the_service():
    found = sorted(library_imports(ROOT / "cli"))
    assert len(found) <= MAX_CLI_IMPORTS, f"cli/ imports {len(found)} library modules: {found}"


def test_the_cli_import_count_sees_every_import(tmp_path):
    package = tmp_path / "evaluator" / "cli"
    package.mkdir(parents=True)
    (package / "a.py").write_text("from ..service import runs\nfrom ..errors import RagmeterError\n"
                                  "from .args import x\ndef f():\n    from ..store.history import RunStore\n")
    assert library_imports(package) == {"evaluator.service.runs", "evaluator.errors", "evaluator.store.history"}


def test_the_library_never_imports_streamlit():
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
            found += [f"{path.relative_to(ROOT.parent)}: {n}" for n in names if n.split(".")[0] == "streamlit"]
    assert found == []
