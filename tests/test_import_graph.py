"""gate/ imports without circles, and gate/gates/ in its layers (docs/development.md, Layout).

Every import counts: at module level, inside a function (a lazy import still ties the two modules together) and
under `if TYPE_CHECKING:` (it never runs, but it still says each module knows the other: a circle all the same).
"""

from __future__ import annotations

import ast
from pathlib import Path

GATE = Path(__file__).resolve().parent.parent / "gate"


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(tree: ast.AST, package: str) -> set[str]:
    """The modules of gate/ a module imports (a `from package import name` names the submodule when it is one)."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def import_graph(root: Path = GATE) -> dict[str, set[str]]:
    """module -> the modules of gate/ it imports."""
    files = {_module_name(path, root): path for path in root.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        graph[name] = {target for target in _imports(tree, package) if target in files and target != name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of two modules or more (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return sorted(groups)


# The layers of gate/gates/: what each part may import of the others (its own modules always).
MAY_IMPORT: dict[str, set[str]] = {
    "gate.gates.events": {"gate.gates.base", "gate.gates.delivery", "gate.gates.recall", "gate.gates.writeback"},
    "gate.gates.recall": {"gate.gates.base", "gate.gates.delivery"},
    "gate.gates.writeback": {"gate.gates.base", "gate.gates.delivery"},
    "gate.gates.delivery": {"gate.gates.base"},
    "gate.gates.base": set(),
    "gate.gates": set(),
}
# Outside gate/gates/, a module may know the gates' context and outcome only (the hook reaches the events
# through its HANDLERS table, by name).
OUTSIDE_MAY_IMPORT = {"gate.gates.base"}


def _part(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:3]) if parts[:2] == ["gate", "gates"] else module


def layer_breaches(graph: dict[str, set[str]]) -> list[str]:
    breaches = []
    for module, targets in sorted(graph.items()):
        for target in sorted(targets):
            if not target.startswith("gate.gates") or _part(target) == _part(module):
                continue
            allowed = MAY_IMPORT.get(_part(module)) if module.startswith("gate.gates") else OUTSIDE_MAY_IMPORT
            if allowed is None or _part(target) not in allowed:
                breaches.append(f"{module} -> {target}")
    return breaches


def circle_through(group: list[str], graph: dict[str, set[str]]) -> list[str]:
    """One circle of the group, as the imports run: its first module, the shortest way back to it, that module."""
    start, members = group[0], set(group)
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following: list[str] = []
        for node in frontier:
            for target in sorted(graph.get(node, set()) & members):
                if target == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [*reversed(path), start]
                if target not in came_from:
                    came_from[target] = node
                    following.append(target)
        frontier = following
    return group  # not reached: a strongly connected group has a way back


def circle_report(graph: dict[str, set[str]]) -> list[str]:
    return [" -> ".join(circle_through(group, graph)) + f"  (all of: {', '.join(group)})" for group in circles(graph)]


def test_gate_has_no_import_circles() -> None:
    found = circle_report(import_graph())
    assert found == [], "import circles in gate/:\n" + "\n".join(found)


def test_the_gates_import_only_the_layers_below() -> None:
    assert layer_breaches(import_graph()) == []


def test_a_layer_breach_is_found() -> None:
    graph = {
        "gate.gates.writeback.reminder": {"gate.gates.recall.fire", "gate.gates.base"},
        "gate.gates.delivery.anchors": {"gate.gates.events.pre_tool_use"},
        "gate.memory.search": {"gate.gates.base", "gate.gates.recall.topic"},
        "gate.gates.events.stop": {"gate.gates.writeback.gate"},
    }
    assert layer_breaches(graph) == [
        "gate.gates.delivery.anchors -> gate.gates.events.pre_tool_use",
        "gate.gates.writeback.reminder -> gate.gates.recall.fire",
        "gate.memory.search -> gate.gates.recall.topic",
    ]


def _package(root: Path, modules: dict[str, str]) -> Path:
    for name, source in {"__init__": "", **modules}.items():
        path = root / "gate" / (name.replace(".", "/") + ".py")
        path.parent.mkdir(parents=True, exist_ok=True)
        (path.parent / "__init__.py").touch()
        path.write_text(source, encoding="utf-8")
    return root / "gate"


def test_a_circle_is_found(tmp_path: Path) -> None:
    """The check itself: a circle made of a lazy import, through a `from package import module`, is reported."""
    package = _package(tmp_path, {
        "sub.one": "from gate.sub import two\n",
        "sub.two": "def later():\n    from gate.sub.one import x\n",
        "three": "from gate.sub import two\n",
    })
    graph = import_graph(package)
    assert circles(graph) == [["gate.sub.one", "gate.sub.two"]]
    assert circle_report(graph) == [
        "gate.sub.one -> gate.sub.two -> gate.sub.one  (all of: gate.sub.one, gate.sub.two)"
    ]


def test_a_circle_closed_by_a_type_checking_import_is_found(tmp_path: Path) -> None:
    """An import only the type checker reads still ties the modules together (issue 44: index <-> index_write
    and store <-> store_import were circles this way)."""
    package = _package(tmp_path, {
        "reader": "def catch_up():\n    from gate.writer import apply\n",
        "writer": "TYPE_CHECKING = False\nif TYPE_CHECKING:\n    from gate.reader import Reader\n",
        "store": "import gate.leaf\n",
        "leaf": "",
    })
    graph = import_graph(package)
    assert circle_report(graph) == ["gate.reader -> gate.writer -> gate.reader  (all of: gate.reader, gate.writer)"]


def test_the_shortest_way_round_is_named() -> None:
    graph = {"a": {"b", "d"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circle_through(circles(graph)[0], graph) == ["a", "d", "a"]


def test_the_memory_parts_packages_import_nothing() -> None:
    """gate/memory/'s parts (index/, store/, cues/) are reached module by module: a package whose __init__ imported
    its modules would load them all on the hook path, wherever one of them is needed."""
    inits = sorted((GATE / "memory").rglob("__init__.py"))
    assert len(inits) >= 4, inits  # gate/memory itself and its three parts
    importing = [
        str(path.relative_to(GATE.parent))
        for path in inits
        if any(isinstance(node, ast.Import | ast.ImportFrom) for node in ast.walk(ast.parse(path.read_text())))
    ]
    assert importing == []
