#!/usr/bin/env python3
"""Prints a `swift test --filter` pattern for the tests and suites tagged with a tag.

Swift 6.3's `swift test --filter` does not take tags (`--filter tag:name` arrives with a later
Swift Testing), so CI derives the names from the sources: every `@Suite(... .tags(...NAME))`
gives its type's name, every `@Test(... .tags(...NAME))` its function's. A tagged test that is
renamed stays covered; a tag that matches nothing fails.

Usage: python3 .ci/tagged-tests.py threadSanitized [Tests]
       python3 .ci/tagged-tests.py longTier Tests/FolioTests --check 'TestTier\.|workloadSeeds\('

With `--check REGEX`, every file that declares tests and whose text matches REGEX must tag a
suite or test, or extend a tagged suite: a test that reads the tier but is not tagged would
run only its quick form in CI.
"""
import re
import sys
from pathlib import Path

arguments = sys.argv[1:]
check = None
if "--check" in arguments:
    at = arguments.index("--check")
    check = re.compile(arguments[at + 1])
    del arguments[at : at + 2]
tag = arguments[0]
root = Path(arguments[1] if len(arguments) > 1 else "Tests")
names = []
tagged_files = set()
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
        tagged_files.add(path)
if check:
    untagged = []
    for path in sorted(root.rglob("*.swift")):
        text = path.read_text()
        declares_tests = re.search(r"@(Suite|Test)\b", text)
        if not declares_tests or path in tagged_files or not check.search(text):
            continue
        if any(re.search(r"\bextension\s+" + name + r"\b", text) for name in names):
            continue
        untagged.append(str(path))
    if untagged:
        sys.exit(f"files that read the tier but tag no suite or test {tag}: {', '.join(untagged)}")
if not names:
    sys.exit(f"no test or suite is tagged {tag}")
print("|".join(sorted(set(names))))
