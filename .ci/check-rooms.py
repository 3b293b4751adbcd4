#!/usr/bin/env python3
"""Fails when a room of Sources/Folio uses a type declared in a room it may not depend on.

A room is a folder under Sources/Folio. Each room's allowed dependencies are listed in
ARCHITECTURE.md, in the table under "## Rooms", as `Room | may use` rows; this script reads
that table, so the document and the check cannot drift apart. A room may also name single
types of another room it may use (its seam), written `Room.Type`. The table must layer: a
cycle among its rows (a seam `Room.Type` counts as an edge to `Room`) fails the check, naming
the cycle.

`python3 .ci/check-rooms.py` is the CI check; `--edges` also prints which types each room
uses of each other; `--self-test` checks the cycle finder on small tables and exits.

Declarations are found by a scan of the sources (top-level type, protocol and typealias
declarations; a nested type is reached through its outer one), uses by identifier tokens outside comments and string literals.
"""
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ROOT / "Sources" / "Folio"
DOC = Path(os.environ.get("FOLIO_ARCHITECTURE", ROOT / "ARCHITECTURE.md"))

DECL = re.compile(
    r"^(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|internal|package|fileprivate|private|final|nonisolated|indirect)\s+)*"
    r"(?:struct|class|enum|actor|protocol|typealias)\s+([A-Z][A-Za-z0-9_]*)",
    re.MULTILINE,
)
TOKEN = re.compile(r"\b[A-Z][A-Za-z0-9_]*\b")


def strip(text: str) -> str:
    """Removes comments and string literals (a simple lexer; enough for this code base)."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif text.startswith('"""', i):
            j = text.find('"""', i + 3)
            i = n if j < 0 else j + 3
            out.append('""')
        elif text[i] == '"':
            j = i + 1
            while j < n and text[j] != '"' and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            out.append('""')
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def rooms_from_doc():
    allowed = {}
    in_table = False
    for line in DOC.read_text().splitlines():
        if line.startswith("## "):
            in_table = line.strip() == "## Rooms"
            continue
        if not in_table or not line.startswith("|") or "---" in line:
            continue
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        if len(cells) < 2 or cells[0] in ("room", "Room"):
            continue
        room = cells[0].rstrip("/")
        deps = [d.strip().strip("`").rstrip("/") for d in cells[1].split(",")]
        allowed[room] = {d for d in deps if d and d != "—" and d != "nothing"}
    return allowed


def room_edges(allowed):
    """The table as a graph: room -> the rooms its row names (a seam `Room.Type` names `Room`)."""
    graph = {}
    for room, deps in allowed.items():
        graph[room] = sorted({d.split(".", 1)[0] for d in deps} - {room})
    return graph


def find_cycle(allowed):
    """A cycle of the table, as a list of rooms whose last is its first, or None when it layers."""
    graph = room_edges(allowed)
    state = {}  # room -> "open" while on the path, "done" once all its uses are explored
    path = []

    def visit(room):
        state[room] = "open"
        path.append(room)
        for dep in graph.get(room, []):
            if state.get(dep) == "open":
                return path[path.index(dep):] + [dep]
            if dep not in state:
                found = visit(dep)
                if found:
                    return found
        path.pop()
        state[room] = "done"
        return None

    for room in sorted(graph):
        if room not in state:
            found = visit(room)
            if found:
                return found
    return None


def self_test() -> int:
    cases = [
        ({"A": set(), "B": {"A"}, "C": {"A", "B"}}, None),
        ({"A": {"B"}, "B": {"A"}}, ["A", "B", "A"]),
        ({"A": {"C.T"}, "B": {"A"}, "C": {"B"}}, ["A", "C", "B", "A"]),  # through a seam
        ({"A": {"A"}, "B": {"A"}}, None),  # a room may name itself
        ({"A": set(), "B": {"A", "D"}, "C": {"B"}, "D": {"C"}}, ["B", "D", "C", "B"]),
    ]
    failures = 0
    for table, expected in cases:
        found = find_cycle(table)
        if found != expected:
            failures += 1
            print(f"self-test: {table}: found {found}, expected {expected}", file=sys.stderr)
    real = find_cycle(rooms_from_doc())
    if real:
        failures += 1
        print(f"self-test: ARCHITECTURE.md's table has the cycle {' -> '.join(real)}", file=sys.stderr)
    print("self-test: " + ("passed" if failures == 0 else f"{failures} failed"))
    return 1 if failures else 0


def main() -> int:
    if "--self-test" in sys.argv:
        return self_test()
    allowed = rooms_from_doc()
    files = sorted(p for p in SOURCES.rglob("*.swift"))
    room_of = {}
    declared = {}  # type name -> room
    stripped = {}
    for p in files:
        room = p.relative_to(SOURCES).parts[0]
        if room.endswith(".swift"):
            room = "."
        room_of[p] = room
        stripped[p] = strip(p.read_text())
        for name in DECL.findall(stripped[p]):
            if name in declared and declared[name] != room:
                # The same name in two rooms (nested types): not a room's own vocabulary.
                declared[name] = None
            else:
                declared.setdefault(name, room)
    problems = []
    cycle = find_cycle(allowed)
    if cycle:
        problems.append(
            f"ARCHITECTURE.md's Rooms table has a cycle: {' -> '.join(cycle)} "
            "(a seam Room.Type counts as a use of Room); the rooms must layer")
    missing = sorted({r for r in room_of.values()} - set(allowed))
    for r in missing:
        problems.append(f"room {r}/ is not in ARCHITECTURE.md's Rooms table")
    edges = {}
    for p in files:
        room = room_of[p]
        ok = allowed.get(room, set())
        for name in set(TOKEN.findall(stripped[p])):
            other = declared.get(name)
            if other is None or other == room:
                continue
            edges.setdefault((room, other), set()).add(name)
            if other in ok or f"{other}.{name}" in ok:
                continue
            problems.append(f"{p.relative_to(ROOT)}: {room}/ uses {name} from {other}/, "
                            f"which ARCHITECTURE.md does not let {room}/ depend on")
    if "--edges" in sys.argv:
        for (a, b), names in sorted(edges.items()):
            print(f"{a} -> {b}: {', '.join(sorted(names))}")
    for line in problems:
        print(line, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
