#!/usr/bin/env python3
"""The pipeline's layers (docs/architecture.md): every #include "folder/..." in src/ must name a
folder the including folder may use. Fails with the offending lines.

Usage (ctest runs it): layers_test.py SOURCE_DIR LAYERS_TXT (the build's layers.txt)
"""
import os
import re
import sys
import tempfile

# Which folders each folder of src/ may include (besides itself) comes from the build: CMakeLists.txt
# declares every layer once (tracedoc_layer: the library and the layers it links) and writes the list
# to layers.txt, one "folder: folder folder ..." line each. Data flows one way: readers (ingest) and
# analyses both sit on the model; the diagnosis on the analyses; budgets, comparisons and the
# viewer's model on the diagnosis; writers (report) on all of those; the CLI on everything. synth
# builds model traces; inject (the recorder loaded into the profiled program) uses only the capture
# format it writes, from ingest/capture_format.h.
BELOW = {}


def read_layers(path):
    layers = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if ":" not in line:
                continue
            name, uses = line.split(":", 1)
            layers[name.strip()] = set(uses.split())
    return layers


INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/[^"]*"', re.M)


def violations(src):
    found = []
    for folder in sorted(os.listdir(src)):
        path = os.path.join(src, folder)
        if not os.path.isdir(path):
            continue
        if folder not in BELOW:
            found.append(f"src/{folder}/: a folder docs/architecture.md and CMakeLists.txt (tracedoc_layer) do not place in the layers")
            continue
        for root, _, files in os.walk(path):
            for name in sorted(files):
                if not name.endswith((".h", ".cpp")):
                    continue
                file = os.path.join(root, name)
                with open(file, encoding="utf-8") as f:
                    text = f.read()
                for m in INCLUDE.finditer(text):
                    dep = m.group(1)
                    if dep == folder or dep in BELOW[folder] or not os.path.isdir(os.path.join(src, dep)):
                        continue
                    line = text.count("\n", 0, m.start()) + 1
                    rel = os.path.relpath(file, os.path.dirname(src))
                    found.append(f"{rel}:{line}: {folder}/ includes {dep}/ against the flow ({m.group(0).strip()})")
    return found


def self_test():
    # The checker itself: an analysis file including a reader is reported, a model include is not.
    assert BELOW["analysis"] == {"common", "model"} and "ingest" not in BELOW["analysis"], BELOW
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "src")
        for folder in ("analysis", "ingest", "model"):
            os.makedirs(os.path.join(src, folder))
        with open(os.path.join(src, "analysis", "x.cpp"), "w") as f:
            f.write('#include "model/trace.h"\n#include "ingest/nsys_sqlite_reader.h"\n')
        found = violations(src)
        assert len(found) == 1 and "analysis/ includes ingest/" in found[0] and "x.cpp:2:" in found[0], found


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    BELOW.update(read_layers(sys.argv[2]))
    self_test()
    found = violations(os.path.join(os.path.abspath(sys.argv[1]), "src"))
    for v in found:
        print(v)
    if found:
        print(f"layers_test: {len(found)} include(s) against the flow (docs/architecture.md)")
        return 1
    print("layers_test: every include in src/ follows the layers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
