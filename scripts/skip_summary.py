#!/usr/bin/env python3
"""Prints how many tests the last ctest run skipped, and why, from the build's LastTest.log.

    skip_summary.py BUILD_DIR

GoogleTest prints a skip's reason on the line after "...: Skipped"; the browser and schema checks
print theirs as "SKIP: reason". The reasons of the tests on ../shared are counted as one line, so a
missing ../shared shows as that line with its count, never as a silent pass.
"""
import collections
import pathlib
import re
import sys


def main():
    log = pathlib.Path(sys.argv[1]) / "Testing" / "Temporary" / "LastTest.log"
    if not log.exists():
        return 0
    text = log.read_text(errors="replace")
    reasons = collections.Counter()
    # One block per test: from "N/M Testing: NAME" to its "Test Passed/Failed/Skipped" line.
    for block in re.split(r"\n(?=\d+/\d+ Testing: )", text):
        if "\nTest Skipped." not in block and "[  SKIPPED ]" not in block:
            continue
        if "[  PASSED  ] 1 test." in block:
            continue
        match = re.search(r": Skipped\n(.+)", block) or re.search(r"SKIP: (.+)", block)
        reason = match.group(1).strip() if match else "(no reason given)"
        # Every test on the real traces says so in its own words; one line counts them all.
        if "../shared" in reason or "shared/traces" in reason:
            reason = "../shared (the real traces) not found, or a trace missing from it"
        reasons[reason] += 1
    total = sum(reasons.values())
    if total == 0:
        print("skipped: none")
        return 0
    print(f"skipped: {total} test(s)")
    for reason, count in reasons.most_common():
        print(f"  {count:5d}  {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
