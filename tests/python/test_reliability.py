"""What the package promises when things go wrong, on inputs built here: engine errors are TraceError
whatever bytes a damaged file holds, Ctrl-C stops a long engine call, what a read counted comes as
TraceWarning, and View.save / to_parquet write as the CLI's -o (whole or not at all, devices and
FIFOs in place)."""

from __future__ import annotations

import os
import resource
import signal
import sqlite3
import stat
import threading
import time
import warnings
from pathlib import Path

import pytest

import tracedoc

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "toy_training.sqlite"


def test_damaged_names_are_trace_errors_not_unicode_errors(tmp_path):
    # A table whose name is invalid UTF-8 and whose schema is malformed: SQLite's message quotes the
    # name's bytes.
    path = tmp_path / "damaged.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE zzqq (x INTEGER)")
    con.execute("PRAGMA writable_schema = ON")
    con.execute("UPDATE sqlite_master SET sql = 'CREATE TABLE zzqq (' WHERE name = 'zzqq'")
    con.commit()
    con.close()
    path.write_bytes(path.read_bytes().replace(b"zzqq", b"z\xff\xfeq"))
    with pytest.raises(tracedoc.TraceError) as error:
        tracedoc.load(path)
    message = str(error.value)
    assert message.startswith(str(path) + ": ")
    assert "z\ufffd\ufffdq" in message


def test_gap_out_of_range_is_a_trace_error():
    trace = tracedoc.load(EXAMPLE)
    for gap in (float("nan"), float("inf"), 1e300):
        with pytest.raises(tracedoc.TraceError, match="summary: gap_ms: the gap must be from 0 to 1e"):
            trace.summary(gap_ms=gap)


def test_ctrl_c_stops_a_query_that_runs_for_ever():
    trace = tracedoc.load(EXAMPLE)
    forever = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n"
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    started = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            trace.sql(forever)
    finally:
        timer.cancel()
    assert time.monotonic() - started < 10
    # The engine is usable again, and Python's own handler is back.
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert trace.sql("SELECT count(*) AS n FROM kernels")["n"][0] > 0


def test_what_a_read_counted_is_a_trace_warning(tmp_path):
    folder = tmp_path / "job"
    folder.mkdir()
    (folder / "rank0.json").write_text(
        '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 10, "dur": 5,'
        ' "args": {"stream": 7, "device": 0}}]}'
    )
    os.mkfifo(folder / "rank1.json")
    with pytest.warns(tracedoc.TraceWarning) as caught:
        trace = tracedoc.load(folder)
    assert [str(w.message) for w in caught] == [
        f"{folder}/rank1.json: not read: named as a PyTorch profiler trace, but a FIFO, not a file"
    ]
    assert trace.row_counts()["kernels"] == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", tracedoc.TraceWarning)
        with pytest.raises(tracedoc.TraceWarning):
            tracedoc.load(folder)


def test_view_save_writes_devices_and_fifos_in_place(tmp_path):
    view = tracedoc.load(EXAMPLE).view()
    view.save("/dev/null")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    fifo = tmp_path / "page.pipe"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    view.save(fifo)
    reader.join(10)
    assert received == [view.html.encode()]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    with pytest.raises(tracedoc.TraceError, match="is a directory"):
        view.save(tmp_path)


def test_saves_past_a_file_size_limit_leave_nothing(tmp_path):
    trace = tracedoc.load(EXAMPLE)
    view = trace.view()
    (tmp_path / "tables").mkdir()
    saved = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (1024, saved[1]))  # Python ignores SIGXFSZ: EFBIG
    try:
        with pytest.raises(tracedoc.TraceError, match="write failed: File too large"):
            view.save(tmp_path / "page.html")
        with pytest.raises(tracedoc.TraceError, match="write failed: File too large"):
            trace.to_parquet(tmp_path / "tables")
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, saved)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tables"]
    assert list((tmp_path / "tables").iterdir()) == []  # no partial table, no temporary file
