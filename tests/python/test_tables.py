"""The model's tables through Arrow: the declared columns, the rows `tracedoc sql` sees, nulls for
absent values, string columns over the string pool, and numeric buffers that are the engine's own
memory (no copy)."""

from __future__ import annotations

import csv
import io

import pyarrow as pa
import pyarrow.compute  # noqa: F401 (pa.compute)
import pyarrow.parquet as pq
import pytest
import tracedoc
from conftest import cli


def sql(path, query: str) -> list[list[str]]:
    run = cli("sql", "-f", "csv", str(path), query)
    assert run.returncode == 0, run.stderr
    return list(csv.reader(io.StringIO(run.stdout)))[1:]


def test_every_declared_table_and_column(nsys_trace, kineto_trace):
    declared = tracedoc.tables()
    assert "kernels" in declared and "ops" in declared
    for trace in (nsys_trace, kineto_trace):
        assert trace.tables == list(declared)
        counts = trace.row_counts()
        for name, columns in declared.items():
            table = trace.table(name)
            assert table.column_names == [c.name for c in columns], name
            assert table.num_rows == counts[name], name
            for column, field in zip(columns, table.schema):
                assert field.metadata[b"description"].decode() == column.description
                if column.unit:
                    assert field.metadata[b"unit"].decode() == column.unit
                if column.type == "dictionary<utf8>":
                    assert pa.types.is_dictionary(field.type)
                else:
                    assert str(field.type) == column.type.replace("double", "double")
    units = {c.name: c.unit for c in declared["kernels"]}
    assert units["start"] == "ns" and units["end"] == "ns"
    assert {c.name: c.unit for c in declared["memcpy"]}["bytes"] == "bytes"


def test_unknown_table_is_a_trace_error(nsys_trace):
    with pytest.raises(tracedoc.TraceError, match="no table 'kernel'"):
        nsys_trace.table("kernel")


def test_kernels_match_sql(nsys_trace, nsys_path):
    kernels = nsys_trace.table("kernels")
    ((count, total, names, streams),) = sql(
        nsys_path, "SELECT count(*), sum(duration_ns), count(DISTINCT name), count(DISTINCT stream) FROM kernels"
    )
    assert kernels.num_rows == int(count) == 4010
    duration = pa.compute.subtract(kernels["end"], kernels["start"])
    assert pa.compute.sum(duration).as_py() == int(total) == 535200650
    assert pa.compute.count_distinct(kernels["name"].combine_chunks().dictionary_decode()).as_py() == int(names) == 27
    assert pa.compute.count_distinct(kernels["stream"]).as_py() == int(streams)
    # Row by row, the first kernels as `tracedoc sql` lists them (its rows are the model's rows).
    first = sql(nsys_path, "SELECT start_ns, end_ns, name, device FROM kernels LIMIT 5")
    frame = kernels.slice(0, 5).to_pandas()
    assert [[str(r.start), str(r.end), r.name, str(r.device)] for r in frame.itertuples()] == first


def test_pytorch_ops_and_nulls(kineto_trace, kineto_path):
    ops = kineto_trace.table("ops")
    ((count, named, no_input),) = sql(
        kineto_path, "SELECT count(*), count(DISTINCT name), sum(external_id IS NULL) FROM ops"
    )
    assert ops.num_rows == int(count) > 0
    assert pa.compute.count_distinct(ops["name"].combine_chunks().dictionary_decode()).as_py() == int(named)
    assert ops["external_id"].null_count == int(no_input)
    # An nsys export has no PyTorch ops: an empty table with the declared columns.
    assert kineto_trace.row_counts()["ops"] == ops.num_rows


def test_numeric_columns_are_not_copied(nsys_trace):
    first = nsys_trace.table("kernels")
    second = nsys_trace.table("kernels")
    address = lambda t: t["start"].chunks[0].buffers()[1].address  # noqa: E731
    assert address(first) == address(second)  # both views of the engine's one column
    # The tables keep the trace alive: the model outlives the Python object that loaded it.
    import gc

    trace = tracedoc.load(nsys_trace.path)
    table = trace.table("kernels")
    del trace
    gc.collect()
    assert pa.compute.sum(pa.compute.subtract(table["end"], table["start"])).as_py() == 535200650


def test_to_parquet(nsys_trace, tmp_path):
    written = nsys_trace.to_parquet(tmp_path / "out")
    counts = {name: n for name, n in nsys_trace.row_counts().items() if n}
    assert sorted(p.rsplit("/", 1)[1] for p in written) == sorted(f"{name}.parquet" for name in counts)
    kernels = pq.read_table(tmp_path / "out" / "kernels.parquet")
    assert kernels.num_rows == 4010
    assert kernels.schema.metadata[b"tracedoc.format"] == b"nsys-sqlite"
    assert kernels.schema.field("start").metadata[b"unit"] == b"ns"
    assert kernels.equals(nsys_trace.table("kernels").replace_schema_metadata(kernels.schema.metadata))
