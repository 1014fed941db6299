#!/usr/bin/env python3
"""The closing lines of a test run, from the build's LastTest.log: how many tests ran, passed,
failed and skipped, and why they skipped.

    test_summary.py BUILD_DIR

ctest runs each GoogleTest suite as one process (CMakeLists.txt), so the per-test results are in
that process's output: "[ RUN      ] Suite.Test", then "[       OK ]", "[  FAILED  ]" or
"[  SKIPPED ]", a skip's reason on the line after "...: Skipped". The script tests (schemas, layers,
format, browser) count as one test each; theirs print a skip as "SKIP: reason". The reasons of the
tests on ../shared count as one line, so a missing ../shared shows as that line with its count,
never as a silent pass.
"""
import collections
import pathlib
import re
import sys

SHARED = "../shared (the real traces) not found, or a trace missing from it"


def reason_of(text):
    text = text.strip() or "(no reason given)"
    if "../shared" in text or ("shared/traces" in text and "install-nsys" not in text):
        return SHARED
    return text


def main():
    log = pathlib.Path(sys.argv[1]) / "Testing" / "Temporary" / "LastTest.log"
    if not log.exists():
        return 0
    text = log.read_text(errors="replace")
    counts = collections.Counter()
    reasons = collections.Counter()
    suites = 0
    # One block per ctest test: from "N/M Testing: NAME" to its "Test Passed/Failed" line.
    for block in re.split(r"\n(?=\d+/\d+ Testing: )", text):
        if not re.match(r"\d+/\d+ Testing: ", block):
            continue
        cases = re.split(r"\n(?=\[ RUN      \] )", block)
        if len(cases) > 1 or "[==========]" in block:
            suites += 1
            for case in cases[1:]:
                if "\n[  SKIPPED ] " in case:
                    counts["skipped"] += 1
                    match = re.search(r": Skipped\n(.*)", case)
                    reasons[reason_of(match.group(1) if match else "")] += 1
                elif "\n[       OK ] " in case:
                    counts["passed"] += 1
                else:
                    counts["failed"] += 1
            continue
        # A script test.
        if "\nTest Skipped." in block or "SKIP: " in block:
            counts["skipped"] += 1
            match = re.search(r"SKIP: (.+)", block)
            reasons[reason_of(match.group(1) if match else "")] += 1
        elif "\nTest Passed." in block:
            counts["passed"] += 1
        else:
            counts["failed"] += 1
    total = sum(counts.values())
    print(f"tests: {total} ran (GoogleTest's in {suites} suites, one process each, and the script tests): "
          f"{counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped")
    for reason, count in reasons.most_common():
        print(f"  {count:5d} skipped: {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
