#!/usr/bin/env python3
"""The C++ style (.clang-format): every .cpp and .h of src/, tests/, bench/, tools/, fuzz/ and cmake/
is as clang-format writes it. Fails with the files that are not; 77 (skipped) without clang-format.

Usage (ctest runs it): format_test.py SOURCE_DIR
"""
import os
import shutil
import subprocess
import sys

FOLDERS = ("src", "tests", "bench", "tools", "fuzz", "cmake")


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    tool = shutil.which("clang-format")
    if not tool:
        print("format_test: clang-format is not installed (scripts/install-deps.sh installs it): skipped")
        return 77
    source = os.path.abspath(sys.argv[1])
    files = []
    for folder in FOLDERS:
        for root, _, names in os.walk(os.path.join(source, folder)):
            files += [os.path.join(root, n) for n in sorted(names) if n.endswith((".cpp", ".h"))]
    unformatted = []
    for start in range(0, len(files), 64):
        batch = files[start:start + 64]
        for f in batch:
            with open(f, "rb") as fh:
                before = fh.read()
            after = subprocess.run([tool, "--style=file", f], cwd=source, capture_output=True, check=True).stdout
            if after != before:
                unformatted.append(os.path.relpath(f, source))
    for f in unformatted:
        print(f"{f}: not formatted (clang-format -i {f})")
    if unformatted:
        print(f"format_test: {len(unformatted)} of {len(files)} files differ from .clang-format's style")
        return 1
    print(f"format_test: {len(files)} files follow .clang-format")
    return 0


if __name__ == "__main__":
    sys.exit(main())
