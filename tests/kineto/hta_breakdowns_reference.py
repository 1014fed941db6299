#!/usr/bin/env python3
"""Holistic Trace Analysis (HTA) reference numbers for tracedoc's GPU time breakdowns.

tests/hta_breakdowns_test.cpp reads the same traces with tracedoc, converts its exact int64-ns times
the way HTA does, runs tracedoc's breakdowns (src/analysis/pytorch/gpu_breakdowns.h, launch_stats.h)
and compares with what this script wrote. This script runs HTA itself, so the comparison is against
the real tool, not against our reading of its code. It writes one TSV per analysis into
tests/golden/hta/ (the C++ test needs neither Python nor HTA):

  temporal_breakdown.tsv     TraceAnalysis.get_temporal_breakdown
  idle_time_breakdown.tsv    get_idle_time_breakdown(consecutive_kernel_delay=30 and =5), all ranks
  kernel_type_breakdown.tsv  get_gpu_kernel_breakdown(include_memory_kernels=True)[0] (summed over ranks)
  comm_comp_overlap.tsv      get_comm_comp_overlap
  kernel_launch_stats.tsv    get_cuda_kernel_launch_stats (cutoffs 50/100 and 10/20), summarized per rank
  queue_length.tsv           get_queue_length_summary + get_time_spent_blocked_on_full_queue (4 and 1024)
  hta_quirks.tsv             what HTA's frame holds beyond the trace's GPU operations (quirks())

Usage (needs HTA installed, e.g. in a virtualenv: `pip install HolisticTraceAnalysis`):
    <venv>/bin/python tests/kineto/hta_breakdowns_reference.py [SHARED_DIR]
SHARED_DIR defaults to $TRACEDOC_SHARED, else ../shared next to the checkout (as the C++ tests do).
Output paths are fixed, relative to this script, so committed files never name a machine path.

How HTA is run: stock TraceAnalysis (include_last_profiler_step=False, so HTA's
_filter_irrelevant_gpu_kernels drops the GPU events of the last ProfilerStep when a trace has >= 2
step names; the C++ side mirrors it with tracedoc's drop_last_step option), HTA's ns rounding on
(HTA_DISABLE_NS_ROUNDING removed from the environment). Traces HTA 0.5.0 cannot load under pandas >= 3
(its correlation-column downcast, see tests/kineto/hta_reference.py) are loaded with the same one-line
shim that widens the column; it changes no time.

Rows come in two variants. `stock`: HTA's own output. `stable`: the same HTA code with every
DataFrame/Series sort_values made stable. HTA sorts events by `ts` with pandas' default quicksort,
which does not keep the order of equal timestamps, and three analyses depend on that order: the queue
length samples (a launch and a kernel start at the same µs give samples q+1, q or q-1, q), and the
per-stream idle gaps (which of two kernels starting in the same µs gets the gap). Where the stable run
gives other numbers than the stock run, a `stable` row is written after the stock row; the C++ test
compares with the stable row (tracedoc orders ties deterministically, as the stable sort does: by
trace order, launches before kernel starts) and checks the stock row lies within what tie order can
change.
"""

import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import reference as _reference  # noqa: E402  (this folder's module)
CHECKOUT = os.path.dirname(os.path.dirname(HERE))
OUT_DIR = os.path.join(CHECKOUT, "tests", "golden", "hta")

# One entry per HTA run: the files (relative to SHARED/traces) in rank order.
TRACE_SETS = [
    # E1 (2021, capitalized categories, integer µs), V100, 6 steps (the last one is dropped)
    ["kineto/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"],
    # E2 (2022, integer µs), A100, NCCL, 4 streams
    ["kineto/HolisticTraceAnalysis/tests/data/trace_diff/control/control.json.gz"],
    # E3 (2023, integer µs), A100, 6 streams, NCCL, CUDA graphs, deep launch queues
    ["kineto/HolisticTraceAnalysis/tests/data/negative_queue_length_values_check/rank0.json.gz"],
    # E3, cuda_sync events (Stream Sync, Stream Wait Event, Context Sync), 2 streams, no steps
    ["kineto/HolisticTraceAnalysis/tests/data/critical_path/simple_add/benchmark_result_493459_1694039959_trace.json.gz"],
    # E4 (Apr 2024 nightly): fractional absolute-epoch µs
    ["kineto/HolisticTraceAnalysis/tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"],
    # E5: "us.nnn" relative to baseTimeNanoseconds, A100, NCCL, 2 streams
    ["kineto/HolisticTraceAnalysis/tests/data/nccl_parser_config/nccl_data.json.gz"],
    # E5, H100 (TraceLens)
    ["kineto/TraceLens/tests/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"],
    # E5, B200, NCCL, cuLaunchKernelEx launches (not in HTA's launch lists)
    ["kineto/TraceLens/tests/traces/b200/eager_trace.json.gz"],
    # E5, AMD MI300X, RCCL, 2 streams, hip* launches (TraceLens)
    ["kineto/TraceLens/tests/traces/mi300/resnet_act_checkpoint.json.gz"],
    # E5, AMD MI300X VF (TraceLens)
    ["kineto/TraceLens/tests/traces/mi300/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"],
    # E3, two ranks of a 128-rank job loaded together, 2 steps (the last one is dropped)
    ["kineto/HolisticTraceAnalysis/tests/data/trace_filter/sampled_rank-0.json.gz",
     "kineto/HolisticTraceAnalysis/tests/data/trace_filter/sampled_rank-1.json.gz"],
]

IDLE_DELAYS = [30, 5]              # consecutive_kernel_delay, HTA's µs
LAUNCH_CUTOFFS = [(50, 100), (10, 20)]  # (runtime_cutoff, launch_delay_cutoff), µs
QUEUE_LIMITS = [4, 1024]           # max_queue_length


# The shared folder, as every reference script of this folder finds it.
shared_dir = _reference.shared_dir


def hta_version():
    from importlib.metadata import version
    return version("HolisticTraceAnalysis")


def number(x):
    """A value as text: integers without a fraction, NaN as NaN, floats as repr (round-trips)."""
    x = float(x)
    if math.isnan(x):
        return "NaN"
    if math.isfinite(x) and x == int(x):
        return str(int(x))
    return repr(x)


def load(files, traces):
    """Stock TraceAnalysis over `files`; retried with the correlation shim where HTA 0.5.0 fails."""
    import hta.common.trace as hta_trace
    from hta.trace_analysis import TraceAnalysis

    paths = {r: os.path.join(traces, f) for r, f in enumerate(files)}
    try:
        return TraceAnalysis(trace_files=paths, trace_dir=traces), None
    except Exception as e:  # noqa: BLE001 - recorded, then retried with the shim
        failure = f"{type(e).__name__}: {str(e)[:60]}"
    stock_transform = hta_trace.transform_correlation_to_index

    def transform(df, symbol_table):
        df["correlation"] = df["correlation"].astype("int64")
        return stock_transform(df, symbol_table)

    hta_trace.transform_correlation_to_index = transform
    try:
        return TraceAnalysis(trace_files=paths, trace_dir=traces), failure
    finally:
        hta_trace.transform_correlation_to_index = stock_transform


class StableSorts:
    """Within the block, sort_values defaults to a stable sort (ties keep their row order)."""

    def __enter__(self):
        import pandas as pd
        self.saved = (pd.DataFrame.sort_values, pd.Series.sort_values)
        for cls, orig in zip((pd.DataFrame, pd.Series), self.saved):
            def stable(self_, *args, _orig=orig, **kw):
                kw["kind"] = "stable"
                return _orig(self_, *args, **kw)
            cls.sort_values = stable

    def __exit__(self, *exc):
        import pandas as pd
        pd.DataFrame.sort_values, pd.Series.sort_values = self.saved


def analyses(a, ranks, failures):
    """Every analysis's numbers as {table: {key: [values]}} (key identifies one row). An analysis
    that raises inside HTA gets no rows; its exception goes into `failures` (table -> text)."""
    out = {}
    for name, fn in ANALYSES:
        try:
            out[name] = fn(a, ranks)
        except Exception as e:  # noqa: BLE001 - HTA's own failure is a finding, recorded in the TSV
            failures[name] = f"{type(e).__name__} {str(e)[:60]}".strip()
            out[name] = {}
    return out


def temporal(a, ranks):
    tb = a.get_temporal_breakdown(visualize=False)
    return {
        (int(r["rank"]),): [r["idle_time(us)"], r["compute_time(us)"], r["non_compute_time(us)"],
                            r["kernel_time(us)"], r["idle_time_pctg"], r["compute_time_pctg"],
                            r["non_compute_time_pctg"]]
        for r in tb.to_dict("records")}


def idle_time(a, ranks):
    idle = {}
    for delay in IDLE_DELAYS:
        df, _ = a.get_idle_time_breakdown(ranks=ranks, visualize=False, consecutive_kernel_delay=delay)
        for r in df.to_dict("records"):
            idle[(int(r["rank"]), delay, int(r["stream"]), r["idle_category"])] = [r["idle_time"], r["idle_time_ratio"]]
    return idle


def kernel_types(a, ranks):
    kt, _ = a.get_gpu_kernel_breakdown(visualize=False, include_memory_kernels=True,
                                       num_kernels=10**9, duration_ratio=1.0)
    # HTA's sweep line labels every momentary state, including those between two events at the same
    # time (an end and a start in either order), which last 0 µs; which ones appear depends on the
    # sort's tie order. Labels with time are the breakdown; the 0-µs ones are left out.
    return {(r["kernel_type"],): [r["sum"], r["percentage"]] for r in kt.to_dict("records") if r["sum"] != 0}


def overlap(a, ranks):
    ov = a.get_comm_comp_overlap(visualize=False)
    return {(int(r["rank"]),): [r["comp_comm_overlap_pctg"]] for r in ov.to_dict("records")}


def launch_stats(a, ranks):
    launch = {}
    stats = a.get_cuda_kernel_launch_stats(ranks=ranks, visualize=False)
    for rank, df in stats.items():
        for runtime_cutoff, delay_cutoff in LAUNCH_CUTOFFS:
            short = ((df["cpu_duration"] <= runtime_cutoff) & (df["gpu_duration"] < df["cpu_duration"])).sum()
            launch[(int(rank), runtime_cutoff, delay_cutoff)] = [
                len(df), df["cpu_duration"].sum(), df["gpu_duration"].sum(), df["launch_delay"].sum(),
                df["launch_delay"].max() if len(df) else 0, short,
                (df["cpu_duration"] > runtime_cutoff).sum(), (df["launch_delay"] > delay_cutoff).sum()]
    return launch


def queue_length(a, ranks):
    queue = {}
    series = a.get_queue_length_time_series(ranks=ranks)
    summary = a.get_queue_length_summary(ranks=ranks)
    if summary is not None:
        for (rank, stream), r in summary.iterrows():
            q = r["queue_length"]
            blocked = []
            for limit in QUEUE_LIMITS:
                # HTA keeps one stream per rank in this table (a dict keyed by rank); asking per
                # stream gives every stream's value from HTA's own code.
                one = {rank: series[rank][series[rank]["stream"].eq(stream)].copy()}
                b = a.get_time_spent_blocked_on_full_queue(one, max_queue_length=limit)
                blocked.append(b["duration_at_max_queue_length"].iloc[0] if len(b) else 0)
            queue[(int(rank), int(stream))] = [q["count"], q["mean"], q["std"], q["min"], q["25%"], q["50%"],
                                               q["75%"], q["max"]] + blocked
    return queue


ANALYSES = [("temporal_breakdown", temporal), ("idle_time_breakdown", idle_time),
            ("kernel_type_breakdown", kernel_types), ("comm_comp_overlap", overlap),
            ("kernel_launch_stats", launch_stats), ("queue_length", queue_length)]


COLUMNS = {
    "temporal_breakdown": (["rank"], ["idle_us", "compute_us", "non_compute_us", "kernel_time_us",
                                      "idle_pctg", "compute_pctg", "non_compute_pctg"]),
    "idle_time_breakdown": (["rank", "delay_us", "stream", "category"], ["idle_time_us", "ratio"]),
    "kernel_type_breakdown": (["kernel_type"], ["sum_us", "percentage"]),
    "comm_comp_overlap": (["rank"], ["overlap_pctg"]),
    "kernel_launch_stats": (["rank", "runtime_cutoff_us", "delay_cutoff_us"],
                            ["launches", "cpu_sum_us", "gpu_sum_us", "delay_sum_us", "delay_max_us",
                             "short_kernels", "runtime_outliers", "delay_outliers"]),
    "queue_length": (["rank", "stream"], ["count", "mean", "std", "min", "p25", "p50", "p75", "max"] +
                     [f"blocked{n}_us" for n in QUEUE_LIMITS]),
}


GPU_CATS = {"kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset", "cuda_sync"}


def quirks(a, ranks):
    """What HTA's frame holds that a reading of the trace would not suggest, per rank, for the C++
    test to put into tracedoc's view of the same trace (each is an HTA defect, see the docstring of
    tests/hta_breakdowns_test.cpp):
      row0       the time of the event at index 0 (the trace's first event, when HTA kept it). HTA
                 marks a GPU operation without a launching call by index_correlation 0, then joins
                 on it as an index, so in the idle-time breakdown every such operation is "launched"
                 by the trace's first event.
      gpu_event  every event with an integer args.stream that is no kernel, copy, memset or sync
                 record (e.g. torch.compile's Triton launcher cpu_op, which records its stream): HTA
                 counts it as GPU work in the temporal, kernel-type and overlap breakdowns.
    Times are HTA's rounded µs on the trace's own clock (HTA's aligned ts + min_ts)."""
    from hta.utils.utils import get_kernel_type
    t = a.t
    sym = t.symbol_table.get_sym_table()
    out = []
    for rank in ranks:
        df = t.get_trace(rank)
        if 0 in df.index:
            out.append((rank, "row0", int(df.loc[0, "ts"] + t.min_ts), "", "", "", ""))
        gpu = df[df["stream"].ne(-1)]
        for r in gpu.to_dict("records"):
            cat = sym[r["cat"]]
            if cat in GPU_CATS:
                continue
            ts = int(r["ts"] + t.min_ts)
            out.append((rank, "gpu_event", ts, ts + int(r["dur"]), int(r["stream"]), get_kernel_type(sym[r["name"]]), cat))
    return out


def same(a, b):
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        x, y = float(x), float(y)
        if not (x == y or (math.isnan(x) and math.isnan(y))):
            return False
    return True


def main():
    os.environ.pop("HTA_DISABLE_NS_ROUNDING", None)
    import logging
    logging.getLogger("hta").setLevel(logging.ERROR)
    import warnings
    warnings.filterwarnings("ignore")
    shared = shared_dir()
    traces = os.path.join(shared, "traces")
    if not os.path.isdir(traces):
        raise SystemExit(f"no traces under {shared}")

    rows = {name: [] for name in COLUMNS}
    notes = {}
    fail_notes = {}
    quirk_rows = []
    for files in TRACE_SETS:
        t0 = time.perf_counter()
        a, failure = load(files, traces)
        ranks = list(range(len(files)))
        for q in quirks(a, ranks):
            quirk_rows.append((" + ".join(files),) + q)
        failures, stable_failures = {}, {}
        stock = analyses(a, ranks, failures)
        with StableSorts():
            stable = analyses(a, ranks, stable_failures)
        key = " + ".join(files)
        if failures != stable_failures:
            raise SystemExit(f"{key}: HTA fails differently with stable sorts: {failures} vs {stable_failures}")
        for name, why in failures.items():
            fail_notes.setdefault(name, []).append(f"# {key}: HTA fails: {why}")
        for name, table in stock.items():
            if set(table) != set(stable[name]):
                raise SystemExit(f"{key}: {name}: stable sorting changed the rows themselves")
            differing = 0
            for k, values in table.items():
                rows[name].append((key, "stock", k, values))
                if not same(values, stable[name][k]):
                    rows[name].append((key, "stable", k, stable[name][k]))
                    differing += 1
            note = f"# {key}: {differing} rows depend on HTA's tie order"
            if failure:
                note += f"; stock HTA fails to load it ({failure}), loaded with the correlation shim"
            notes.setdefault(name, []).append(note)
        print(f"{time.perf_counter() - t0:7.2f} s  {key}", file=sys.stderr)

    import pandas
    os.makedirs(OUT_DIR, exist_ok=True)
    for name, (key_cols, value_cols) in COLUMNS.items():
        path = os.path.join(OUT_DIR, name + ".tsv")
        with open(path, "w", encoding="utf-8", newline="\n") as out:
            out.write(f"# generated by tests/kineto/hta_breakdowns_reference.py with HolisticTraceAnalysis "
                      f"{hta_version()} (pandas {pandas.__version__})\n")
            out.write("# regenerate: <venv with HTA>/bin/python tests/kineto/hta_breakdowns_reference.py [SHARED_DIR]\n")
            out.write("# HTA's own numbers (its µs after its rounding). variant: stock = HTA's output; stable = the same\n")
            out.write("# code with stable sorts, written only where it differs. See the script's docstring.\n")
            for note in notes.get(name, []) + fail_notes.get(name, []):
                out.write(note + "\n")
            out.write("\t".join(["set", "variant"] + key_cols + value_cols) + "\n")
            for key, variant, k, values in rows[name]:
                out.write("\t".join([key, variant] + [str(x) for x in k] + [number(v) for v in values]) + "\n")
        print(f"wrote {len(rows[name])} rows to {os.path.relpath(path, CHECKOUT)}", file=sys.stderr)
    path = os.path.join(OUT_DIR, "hta_quirks.tsv")
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        out.write(f"# generated by tests/kineto/hta_breakdowns_reference.py with HolisticTraceAnalysis {hta_version()}\n")
        out.write("# What HTA's frame holds beyond the trace's GPU operations (see quirks() in the script).\n")
        out.write("set\trank\tkind\tts_us\tend_us\tstream\tkernel_type\tcat\n")
        for row in quirk_rows:
            out.write("\t".join(str(x) for x in row) + "\n")
    print(f"wrote {len(quirk_rows)} rows to {os.path.relpath(path, CHECKOUT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
