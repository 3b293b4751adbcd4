#!/usr/bin/env python3
"""Prints a `swift test --filter` pattern for the tests and suites tagged with a tag.

Swift 6.3's `swift test --filter` does not take tags (`--filter tag:name` arrives with a later
Swift Testing), so CI derives the names from the sources: every `@Suite(... .tags(...NAME))`
gives its type's name, every `@Test(... .tags(...NAME))` its function's. A tagged test that is
renamed stays covered; a tag that matches nothing fails.

Usage: python3 .ci/tagged-tests.py threadSanitized [Tests]
"""
import re
import sys
from pathlib import Path

tag = sys.argv[1]
root = Path(sys.argv[2] if len(sys.argv) > 2 else "Tests")
names = []
attribute = re.compile(r"@(Suite|Test)\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)", re.S)
for path in sorted(root.rglob("*.swift")):
    text = path.read_text()
    for match in attribute.finditer(text):
        if not re.search(r"\.tags\([^)]*\b" + re.escape(tag) + r"\b", match.group(0)):
            continue
        rest = text[match.end():]
        if match.group(1) == "Suite":
            declared = re.search(r"\b(?:struct|final class|class|enum|actor)\s+(\w+)", rest)
        else:
            declared = re.search(r"\bfunc\s+(\w+)", rest)
        if not declared:
            sys.exit(f"{path}: a {match.group(1)} tagged {tag} declares nothing after it")
        names.append(declared.group(1))
if not names:
    sys.exit(f"no test or suite is tagged {tag}")
print("|".join(sorted(set(names))))
