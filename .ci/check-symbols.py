#!/usr/bin/env python3
"""Checks Folio's public API from its symbol graph (see .ci/run for how it is made):

1. every public symbol Folio declares has a documentation comment with a summary;
2. every public method, property, initializer and subscript of the types listed in
   COMPLEXITY_TYPES carries a `- Complexity:` line;
3. no public top-level type name of Folio is also a public type name of SwiftUI,
   SwiftData, Foundation, Observation, RealityKit or GRDB (.ci/reserved-type-names.txt).

Usage: check-symbols.py <symbol-graph-dir> <reserved-names-file>
Exits 1 and lists every problem when one is found.
"""
import json, os, sys

COMPLEXITY_TYPES = {"Store", "FetchedResultsController", "FetchedRecords", "RecordRequest",
                    "FetchedResultsModel", "FetchedSection", "FetchedItems", "FetchedItem"}
MEMBER_KINDS = {"swift.method", "swift.property", "swift.init", "swift.subscript",
                "swift.type.method", "swift.type.property", "swift.func.op"}
TYPE_KINDS = {"swift.struct", "swift.class", "swift.enum", "swift.protocol", "swift.typealias", "swift.actor",
              "swift.macro"}  # macros share the namespace of attributes

graph_dir, reserved_file = sys.argv[1], sys.argv[2]
symbols = {}
relationships = []
for name in sorted(os.listdir(graph_dir)):
    if not (name == "Folio.symbols.json" or name.startswith("Folio@")):
        continue
    with open(os.path.join(graph_dir, name)) as f:
        graph = json.load(f)
    for s in graph["symbols"]:
        symbols[s["identifier"]["precise"]] = s
    relationships += graph.get("relationships", [])

parent = {}
for r in relationships:
    if r["kind"] in ("memberOf", "optionalRequirementOf", "requirementOf"):
        parent.setdefault(r["source"], r["target"])

def path(s):
    return ".".join(s["pathComponents"])

def doc_lines(s):
    return [l["text"] for l in s.get("docComment", {}).get("lines", [])]

problems = []
checked = complexity = 0
for usr, s in sorted(symbols.items(), key=lambda kv: path(kv[1])):
    if s.get("accessLevel") not in ("public", "open"):
        continue
    if "::SYNTHESIZED::" in usr or "location" not in s:
        continue  # a protocol's default implementation, or made by the compiler (Codable, RawRepresentable)
    # Members of extensions on other modules' types (e.g. IndexPath) are Folio's own API too.
    checked += 1
    lines = doc_lines(s)
    summary = next((l.strip() for l in lines if l.strip()), "")
    if not summary:
        problems.append(f"undocumented: {path(s)} ({s['kind']['identifier']})")
        continue
    owner = path(s).split(".")[0]
    if (s["kind"]["identifier"] in MEMBER_KINDS and len(s["pathComponents"]) == 2
            and owner in COMPLEXITY_TYPES):
        if any("- Complexity:" in l for l in lines):
            complexity += 1
        else:
            problems.append(f"no '- Complexity:' line: {path(s)}")

with open(reserved_file) as f:
    reserved = {}
    current = "?"
    for line in f:
        line = line.strip()
        if line.startswith("## "):
            current = line[3:]
        elif line and not line.startswith("#"):
            reserved.setdefault(line, current)

# A macro's path component is its signature (`Stored(_:column:)`): its name is what `@` spells.
top_level = sorted({s["pathComponents"][0].split("(")[0] for s in symbols.values()
                    if s.get("accessLevel") in ("public", "open") and len(s["pathComponents"]) == 1
                    and s["kind"]["identifier"] in TYPE_KINDS})
for name in top_level:
    if name in reserved:
        problems.append(f"public type name '{name}' clashes with {reserved[name]}")

print(f"check-symbols: {checked} public symbols documented and checked, {complexity} with '- Complexity:', "
      f"{len(top_level)} public type names checked against {len(reserved)} reserved names")
print("  Folio's public types: " + ", ".join(top_level))
if problems:
    print(f"check-symbols: {len(problems)} problem(s):")
    for p in problems:
        print("  - " + p)
    sys.exit(1)
