"""Imports point one way (DESIGN.md, issue 15): commands -> course/batch -> grading ->
shrinking -> labs/report -> checks/sandbox -> observations/counterexample/results/text. Every
module of `grader` is parsed with `ast` (imports inside functions count; those under `if
TYPE_CHECKING:` do not, they never run), and the test fails on a cycle between grader's
sub-packages or on an import against the layer order. The labs are plugins: nothing below them may import `grader.labs`, and the
kit never imports a lab."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

GRADER = Path(__file__).resolve().parent.parent / "grader"

# From the bottom up; the parts of one layer must not import each other.
LAYERS: list[set[str]] = [
    {"__init__", "text", "paths", "distributions", "source_encoding", "cache", "digests"},
    {"version"},
    {"results"},
    {"observations", "registry", "counterexample"},
    {"spec", "exercises", "seeding"},
    {"checks", "sandbox", "probe"},
    {"labs", "report"},
    {"shrinking"},  # drives a lab's smaller cases through the sandbox, for grading
    {"grading", "lab_setup"},
    {"demo", "spec_check"},
    {"course", "batch"},
    {"serve"},  # the warm grader: the CLI's client (cli.py) and the `serve` command use it; it names what it preloads
    {"commands"},
    {"cli", "pytest_plugin"},
    {"__main__"},
]

# Exceptions to the rules above, each with the reason (none today: keep it that way).
KNOWN: set[tuple[str, str]] = set()
KNOWN_MODULE_CYCLES: set[frozenset[str]] = set()


def part_of(module: str) -> str:
    """`grader.labs.tree.judges` -> `labs`; `grader.cli` -> `cli`."""
    return module.split(".")[1] if module.count(".") else "__init__"


def modules() -> Iterator[tuple[str, Path]]:
    for path in sorted(GRADER.rglob("*.py")):
        relative = path.relative_to(GRADER.parent).with_suffix("")
        parts = list(relative.parts)
        if parts[-1] == "__init__" and len(parts) > 1:
            parts.pop()
        yield ".".join(parts), path


def _type_checking_only(tree: ast.AST) -> set[int]:
    """ids of import nodes under `if TYPE_CHECKING:`."""
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped |= {id(child) for statement in node.body for child in ast.walk(statement)}
    return skipped


def imports(module: str, path: Path) -> Iterator[str]:
    """The grader modules `module` imports."""
    tree = ast.parse(path.read_text())
    skipped = _type_checking_only(tree)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names if alias.name.startswith("grader"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("grader"):
                continue
            yield target
            if node.module is None:  # `from .. import registry`: the names are modules
                yield from (f"{target}.{alias.name}" for alias in node.names)


def edges() -> set[tuple[str, str]]:
    """(importing module, imported module) for every import between grader modules."""
    known = {module for module, _ in modules()}
    return {(module, target) for module, path in modules() for target in imports(module, path) if target in known}


def layer(part: str) -> int:
    return next(i for i, parts in enumerate(LAYERS) if part in parts)


def test_every_part_has_a_layer() -> None:
    parts = {part_of(module) for module, _ in modules()}
    assert parts <= set().union(*LAYERS), parts - set().union(*LAYERS)


def test_imports_follow_the_layer_order() -> None:
    wrong = set()
    for source, target in edges():
        a, b = part_of(source), part_of(target)
        if a == b or (a, b) in KNOWN:
            continue
        if layer(b) >= layer(a):
            wrong.add(f"{source} imports {target} ({a} must not depend on {b})")
    assert not wrong, "\n".join(sorted(wrong))


def test_no_cycle_between_parts() -> None:
    graph: dict[str, set[str]] = {}
    for source, target in edges():
        a, b = part_of(source), part_of(target)
        if a != b and (a, b) not in KNOWN:
            graph.setdefault(a, set()).add(b)
    assert _cycles(graph) == []


def test_no_cycle_between_modules_of_a_part() -> None:
    graph: dict[str, set[str]] = {}
    for source, target in edges():
        pair = frozenset({source, target})
        if source != target and not target.startswith(source + ".") and pair not in KNOWN_MODULE_CYCLES:
            graph.setdefault(source, set()).add(target)
    # a package's __init__ re-exporting its modules is no cycle
    for cycle in _cycles(graph):
        assert all(a.startswith(b + ".") or b.startswith(a + ".") for a, b in zip(cycle, cycle[1:])), cycle


def test_only_a_lab_names_itself() -> None:
    """The kit and everything outside grader/labs/<lab>/ reach labs through the registry."""
    offenders = set()
    for source, target in edges():
        lab = target.split(".")[2] if target.startswith("grader.labs.") else None
        if lab and lab != "kit" and not source.startswith(f"grader.labs.{lab}"):
            offenders.add(f"{source} imports {target}")
    assert not offenders, "\n".join(sorted(offenders))


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every elementary cycle found by depth-first search (one per back edge)."""
    found: list[list[str]] = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                found.append(stack[stack.index(nxt) :] + [nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return found


def test_observations_name_nothing_above_them() -> None:
    """observations.py sanitises what the sandbox brings without importing it, not even for
    type checking (the last import circle, observations <-> sandbox.session, issue 26)."""
    path = GRADER / "observations.py"
    tree = ast.parse(path.read_text())
    named = {
        node.module or ""
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.level and (node.module or "").split(".")[0] != "text"
    }
    assert named == set(), named
