#!/usr/bin/env python3
"""Holistic Trace Analysis (HTA) reference for `tracedoc diff`: what HTA's TraceDiff counts.

tests/diff_test.cpp diffs HTA's own trace_diff pair (control / test, the traces of HTA's TraceDiff
tests) with tracedoc and compares, for every kernel, operator and annotation range, the count and
total time before and after with what HTA's TraceDiff summarizes. HTA's `compare_traces` groups the
first iteration of the first rank by name only; this script asks the same TraceDiff machinery
(LabeledTrace, get_ops_summary) for every event of the trace, grouped by category and name, so that
the comparison covers the whole trace as tracedoc's diff does. It writes
tests/golden/hta/trace_diff.tsv (the C++ test needs neither Python nor HTA):

  cat      kernel | cpu_op | user_annotation
  name     the event name
  control_counts, control_total_us, test_counts, test_total_us

HTA keeps durations in whole µs (its rounding); the traces' timestamps are whole µs already.
Written with HolisticTraceAnalysis 0.5.0.

Usage (needs HTA installed, e.g. in a virtualenv: `pip install HolisticTraceAnalysis`):
    <venv>/bin/python tests/kineto/hta_trace_diff_reference.py [SHARED_DIR]
SHARED_DIR defaults to $TRACEDOC_SHARED, else ../shared next to the checkout.
"""

import logging
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import reference as _reference  # noqa: E402  (this folder's module)
CHECKOUT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(CHECKOUT, "tests", "golden", "hta", "trace_diff.tsv")

PAIR = "kineto/HolisticTraceAnalysis/tests/data/trace_diff"
CATEGORIES = ("kernel", "cpu_op", "user_annotation")


def summary(label, trace_dir):
    """(cat, name) -> (counts, total µs) over every event of the trace's first rank."""
    from hta.trace_diff import LabeledTrace

    lt = LabeledTrace(label=label, trace_dir=trace_dir)
    ops = lt.t.get_trace(lt.ranks()[0])
    df = lt.get_ops_summary(ops)
    out = {}
    for row in df.itertuples():
        if row.cat in CATEGORIES:
            out[(row.cat, row.name)] = (int(row.counts), int(row.total_duration))
    return out


def main():
    logging.disable(logging.WARNING)
    shared = sys.argv[1] if len(sys.argv) > 1 else _reference.shared_dir()
    traces = os.path.join(shared, "traces")
    control = summary("control", os.path.join(traces, PAIR, "control"))
    test = summary("test", os.path.join(traces, PAIR, "test"))
    rows = []
    for key in sorted(set(control) | set(test)):
        c, t = control.get(key, (0, 0)), test.get(key, (0, 0))
        rows.append([key[0], key[1], c[0], c[1], t[0], t[1]])
    _reference.write_reference_tsv(
        OUT, "hta_trace_diff_reference.py",
        [("control", PAIR + "/control"), ("test", PAIR + "/test")],
        ["cat", "name", "control_counts", "control_total_us", "test_counts", "test_total_us"], rows)


if __name__ == "__main__":
    main()
