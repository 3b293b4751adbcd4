#!/usr/bin/env python3
"""Performance figures in the documentation, from one source: Benchmarks/RESULTS.json.

folio-bench writes RESULTS.json (and RESULTS.md, the same run as Markdown). Every figure that
README.md or the DocC catalog quotes is generated from the JSON by this script, in one of two
forms:

  A block, regenerated whole:

      <!-- figures:begin NAME -->
      ...generated Markdown...
      <!-- figures:end -->

  NAME is one of: run (the run the figures come from), readme (the README's short table),
  results (every Folio row), missed (the rows whose target the run missed, in wall-clock or
  CPU time), baselines (every baseline row), notes (how each row was measured).

  A figure inside prose:

      <!-- figure ID FIELD -->73.2 ms<!-- /figure -->

  ID is a result's or a baseline's `id` in the JSON; FIELD is one of median, p99, cpuMedian,
  cpuP99, baselineMedian, baselineCPUMedian (times), ratio, cpuRatio, speedup, cpuSpeedup
  (factors), bytesPerRow, heapBytesPerRow (memory). Times and factors are written as
  folio-bench writes them in its table.

DocC drops HTML comments, so the markers are invisible in the rendered pages and on GitHub.

Usage:
  python3 .ci/figures.py           rewrite the blocks and figures from the JSON
  python3 .ci/figures.py --check   change nothing; fail if a quoted figure disagrees with the
                                   JSON (CI), or if RESULTS.md is not the JSON's run
"""

import difflib
import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
RESULTS_JSON = ROOT / "Benchmarks" / "RESULTS.json"
RESULTS_MD = ROOT / "Benchmarks" / "RESULTS.md"
DOCUMENTS = [ROOT / "README.md"] + sorted((ROOT / "Sources" / "Folio" / "Folio.docc").glob("*.md"))

# The README's short table: one row per kind of work, in this order.
README_ROWS = [
    "performFetch",
    "performFetch.sections",
    "snapshot",
    "firstScreen.unfiltered",
    "filteredList.compoundIndex",
    "randomAccess",
    "scroll",
    "change.updateMoving",
    "transaction1000.updateMoving",
    "liveControllers",
    "externalCommit.woken",
    "reopen",
    "searchAsYouType.text.ipad",
    "relationships.rename",
    "reorder.move",
]

BLOCK = re.compile(
    r"(?P<open><!-- figures:begin (?P<name>[\w.-]+) -->\n)(?P<body>.*?)(?P<close><!-- figures:end -->)", re.S
)
FIGURE = re.compile(r"(?P<open><!-- figure (?P<id>[\w.]+) (?P<field>\w+) -->)(?P<text>.*?)(?P<close><!-- /figure -->)")


# Formatting, as folio-bench's Report.swift writes it.


def ms(value):
    if value is None:
        return ""
    if value >= 1_000:
        return "%.2f s" % (value / 1_000)
    if value >= 100:
        return "%.0f ms" % value
    if value >= 10:
        return "%.1f ms" % value
    if value >= 1:
        return "%.2f ms" % value
    return "%.0f µs" % (value * 1_000)


def factor(value):
    return "%.0f ×" % value if value >= 100 else "%.2f ×" % value


def size(value):
    v = float(value)
    if abs(v) >= 1_048_576:
        return "%.1f MB" % (v / 1_048_576)
    if abs(v) >= 1_024:
        return "%.0f KB" % (v / 1_024)
    return "%d B" % value


def memory_text(m):
    if not m:
        return ""
    parts = []
    if m.get("residentBytesPerRow") is not None:
        part = "%.1f B/row" % m["residentBytesPerRow"]
        if m.get("heapBytesPerRow") is not None:
            part += " (heap %.1f B/row)" % m["heapBytesPerRow"]
        parts.append(part)
    elif m.get("residentDelta") is not None:
        parts.append("retained " + size(m["residentDelta"]))
    if m.get("peakDelta") is not None:
        parts.append("peak +" + size(m["peakDelta"]))
    return ", ".join(parts)


def met_text(met, met_on_cpu):
    def text(value):
        return {True: "yes", False: "**no**", None: "–"}[value]

    if met is None and met_on_cpu is None:
        return ""
    if met_on_cpu is None or met == met_on_cpu:
        return text(met)
    return "%s; %s" % (text(met), text(met_on_cpu))


def comparison(r):
    if r.get("baseline") is None or r.get("baselineMedian") is None:
        return ""
    cpu = "; CPU " + ms(r["baselineCPUMedian"]) if r.get("baselineCPUMedian") is not None else ""
    if r.get("speedup") is not None:
        cpu_factor = "; " + factor(r["cpuSpeedup"]) if r.get("cpuSpeedup") is not None else ""
        return "%s%s faster than `%s` (%s%s)" % (factor(r["speedup"]), cpu_factor, r["baseline"], ms(r["baselineMedian"]), cpu)
    if r.get("ratio") is not None:
        cpu_factor = "; " + factor(r["cpuRatio"]) if r.get("cpuRatio") is not None else ""
        return "%s%s `%s` (%s%s)" % (factor(r["ratio"]), cpu_factor, r["baseline"], ms(r["baselineMedian"]), cpu)
    return ""


def count(n):
    return "{:,}".format(n)


# What the JSON says.


class Results:
    def __init__(self, path):
        self.data = json.loads(path.read_text(encoding="utf-8"))
        self.rows = {}
        for r in self.data["baselines"] + self.data["results"]:
            self.rows[r["id"]] = r

    def row(self, identifier, where):
        if identifier not in self.rows:
            raise SystemExit("%s: no row %r in %s" % (where, identifier, RESULTS_JSON.relative_to(ROOT)))
        return self.rows[identifier]

    # The run, as folio-bench's Markdown states it (RESULTS.md).

    def machine_markdown(self):
        m = self.data["machine"]
        return (
            "- Machine: %s cores (%s), %s of memory; %s\n" % (m["cpus"], m["cpuModel"], m["memory"], m["os"])
            + "- %s; SQLite %s; GRDB %s\n" % (m["swift"], m["sqlite"], m["grdb"])
            + "- Load average at start: %s (the machine is shared; see the note on noise); %s" % (m["loadAverageAtStart"], m["date"])
        )

    def results_markdown(self):
        d = self.data
        text = "## Folio benchmark: %s rows (%s)\n\n" % (count(d["rows"]), d["mode"])
        text += self.machine_markdown() + "\n"
        text += (
            "- Release build; %d repetitions of each large measurement, %d changes of each kind; "
            "medians, with the 99th percentile where there are enough samples. Ratios are against baselines measured in "
            "the same run. Table generated in %.1f s; whole run %.0f s.\n\n"
            % (d["repetitions"], d["changesPerKind"], d["generationSeconds"], d["totalSeconds"])
        )
        text += self.results_table() + "\n" + self.baselines_table()
        details = [r for r in d["results"] if r.get("detail") is not None]
        if details or d["notes"]:
            text += "\nNotes:\n"
            for r in details:
                text += "- %s: %s\n" % (r["what"], r["detail"])
            for note in d["notes"]:
                text += "- %s\n" % note
        return text

    def results_table(self, only=None):
        text = (
            "| Folio | median | p99 | CPU median | memory | vs baseline (wall; CPU) | target | met (wall; CPU) |\n"
            "|---|---:|---:|---:|---|---|---|---|\n"
        )
        rows = [r for r in self.data["results"] if only is None or only(r)]
        for r in rows:
            text += "| %s | %s | %s | %s | %s | %s | %s | %s |\n" % (
                r["what"], ms(r.get("median")), ms(r.get("p99")), ms(r.get("cpuMedian")), memory_text(r.get("memory")),
                comparison(r), r.get("target") or "", met_text(r.get("met"), r.get("metOnCPU")),
            )
        return text

    def baselines_table(self):
        text = "| baseline | median | p99 | CPU median | memory |\n|---|---:|---:|---:|---|\n"
        for r in self.data["baselines"]:
            text += "| `%s`: %s | %s | %s | %s | %s |\n" % (
                r["id"], r["what"], ms(r.get("median")), ms(r.get("p99")), ms(r.get("cpuMedian")), memory_text(r.get("memory")),
            )
        return text

    # The documentation's blocks.

    def run_sentence(self):
        d, m = self.data, self.data["machine"]
        commit = d.get("commit") or m.get("commit")
        of_commit = " of commit `%s`" % commit if commit else ""
        return (
            "From `Benchmarks/RESULTS.json`: folio-bench's %s run%s of %s (%s rows, release build, %d repetitions of "
            "each large measurement, %d changes of each kind, medians) on %s cores (%s), %s of memory, %s; %s, SQLite %s, "
            "GRDB %s; load average %s at its start, on a machine shared with other work.\n"
            % (d["mode"], of_commit, m["date"], count(d["rows"]), d["repetitions"], d["changesPerKind"], m["cpus"],
               m["cpuModel"], m["memory"], m["os"], m["swift"], m["sqlite"], m["grdb"], m["loadAverageAtStart"])
        )

    def readme_table(self):
        text = "| operation, 1,000,000 rows | Folio | compared with | target | met |\n|---|---:|---|---|---|\n"
        for i in README_ROWS:
            r = self.row(i, "README_ROWS")
            p99 = " (p99 %s)" % ms(r["p99"]) if r.get("p99") is not None else ""
            text += "| %s | %s%s | %s | %s | %s |\n" % (
                r["what"], ms(r.get("median")), p99, comparison(r), r.get("target") or "",
                met_text(r.get("met"), r.get("metOnCPU")),
            )
        return text

    def notes_list(self):
        text = ""
        for r in self.data["results"]:
            if r.get("detail") is not None:
                text += "- %s: %s\n" % (r["what"], r["detail"])
        for note in self.data["notes"]:
            text += "- %s\n" % note
        return text

    def block(self, name, where):
        if name == "run":
            return self.run_sentence()
        if name == "readme":
            return self.run_sentence() + "\n" + self.readme_table()
        if name == "results":
            return self.results_table()
        if name == "missed":
            return self.results_table(only=lambda r: r.get("met") is False or r.get("metOnCPU") is False)
        if name == "baselines":
            return self.baselines_table()
        if name == "notes":
            return self.notes_list()
        raise SystemExit("%s: unknown figures block %r" % (where, name))

    def figure(self, identifier, field, where):
        r = self.row(identifier, where)
        if field in ("median", "p99", "cpuMedian", "cpuP99", "baselineMedian", "baselineCPUMedian"):
            value, form = r.get(field), ms
        elif field in ("ratio", "cpuRatio", "speedup", "cpuSpeedup"):
            value, form = r.get(field), factor
        elif field in ("bytesPerRow", "heapBytesPerRow"):
            key = "residentBytesPerRow" if field == "bytesPerRow" else "heapBytesPerRow"
            value, form = (r.get("memory") or {}).get(key), lambda v: "%.1f" % v
        else:
            raise SystemExit("%s: unknown field %r (row %s)" % (where, field, identifier))
        if value is None:
            raise SystemExit("%s: row %s has no %s in the JSON" % (where, identifier, field))
        return form(value)


def markdown_escape(text):
    # Backslashes in the JSON's texts (key paths such as \.title.folded) would otherwise
    # escape the next character in Markdown and vanish.
    return text.replace("\\", "\\\\")


def regenerate(path, results):
    original = path.read_text(encoding="utf-8")
    rel = path.relative_to(ROOT)

    def block(match):
        where = "%s, block %s" % (rel, match["name"])
        if "<!-- figures:begin" in match["body"]:
            raise SystemExit("%s: no <!-- figures:end --> before the next block" % where)
        body = markdown_escape(results.block(match["name"], where))
        return match["open"] + body + match["close"]

    text = BLOCK.sub(block, original)

    def figure(match):
        where = "%s, figure %s %s" % (rel, match["id"], match["field"])
        return match["open"] + results.figure(match["id"], match["field"], where) + match["close"]

    text = FIGURE.sub(figure, text)
    # Every marker must belong to a whole block or figure.
    if original.count("<!-- figures:begin ") != len(BLOCK.findall(original)) or original.count(
        "<!-- figures:end -->"
    ) != len(BLOCK.findall(original)):
        raise SystemExit("%s: a figures:begin without its figures:end, or the reverse" % rel)
    if original.count("<!-- figure ") != len(FIGURE.findall(original)) or original.count(
        "<!-- /figure -->"
    ) != len(FIGURE.findall(original)):
        raise SystemExit("%s: a figure marker without its <!-- /figure -->, or the reverse" % rel)
    return original, text


def main(arguments):
    check = "--check" in arguments
    results = Results(RESULTS_JSON)
    failures = []
    quoted = 0
    for path in DOCUMENTS:
        original, text = regenerate(path, results)
        quoted += len(BLOCK.findall(original)) + len(FIGURE.findall(original))
        if text == original:
            continue
        rel = str(path.relative_to(ROOT))
        if check:
            diff = difflib.unified_diff(
                original.splitlines(), text.splitlines(), rel + " (as written)", rel + " (from RESULTS.json)", n=0, lineterm=""
            )
            failures.append("\n".join(diff))
        else:
            path.write_text(text, encoding="utf-8")
            print("figures: rewrote %s" % rel)
    # RESULTS.md is folio-bench's Markdown of the same run: it must be the JSON's, word for word.
    expected = results.results_markdown()
    if RESULTS_MD.read_text(encoding="utf-8") != expected:
        if check:
            diff = difflib.unified_diff(
                RESULTS_MD.read_text(encoding="utf-8").splitlines(), expected.splitlines(),
                "Benchmarks/RESULTS.md", "Benchmarks/RESULTS.md (from RESULTS.json)", n=0, lineterm="",
            )
            failures.append("\n".join(list(diff)[:40]))
        else:
            RESULTS_MD.write_text(expected, encoding="utf-8")
            print("figures: rewrote Benchmarks/RESULTS.md")
    if failures:
        print("\n\n".join(failures))
        print(
            "\nfigures: the documentation quotes figures that Benchmarks/RESULTS.json does not hold "
            "(or RESULTS.md is another run). Run `python3 .ci/figures.py` to write them from the JSON.",
            file=sys.stderr,
        )
        return 1
    if check:
        print("figures: %d blocks and figures agree with Benchmarks/RESULTS.json (run of %s)" % (quoted, results.data["machine"]["date"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
