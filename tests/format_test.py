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
    # One clang-format for every file: --dry-run -Werror names each line it would change.
    done = subprocess.run([tool, "--style=file", "--dry-run", "-Werror"] + files, cwd=source, capture_output=True,
                          text=True)
    unformatted = sorted({os.path.relpath(line.split(":", 1)[0], source)
                          for line in done.stderr.splitlines() if "code should be clang-formatted" in line})
    if done.returncode != 0 and not unformatted:
        print(done.stderr)
        print("format_test: clang-format failed")
        return 1
    for f in unformatted:
        print(f"{f}: not formatted (clang-format -i {f})")
    if unformatted:
        print(f"format_test: {len(unformatted)} of {len(files)} files differ from .clang-format's style")
        return 1
    print(f"format_test: {len(files)} files follow .clang-format")
    return 0


if __name__ == "__main__":
    sys.exit(main())
