#!/usr/bin/env python3
"""The JSON contract: every `-f json` output of tracedoc validates against its documented schema.

Runs the tracedoc binary on the bundled example, on the planted training loops of `tracedoc synth`
(both formats, two ranks, a rank directory) and, when ../shared is present, on real traces, and
validates each document against docs/schemas/<command>.schema.json with a JSON Schema (draft
2020-12) validator (Debian's python3-jsonschema). The schemas forbid keys they do not describe, so
an output that changes without its documentation fails here.

Usage (ctest runs it): json_schema_test.py TRACEDOC_BINARY SOURCE_DIR
"""

import json
import os
import subprocess
import sys
import tempfile

try:
    from jsonschema import Draft202012Validator
except ImportError:
    print("json_schema_test: python3-jsonschema is not installed (scripts/install-deps.sh installs it)")
    sys.exit(1)

BINARY, SOURCE = sys.argv[1], sys.argv[2]
SCHEMAS = os.path.join(SOURCE, "docs", "schemas")
EXAMPLE = os.path.join(SOURCE, "examples", "toy_training.sqlite")
SYNTH = os.path.join(SOURCE, "examples", "synth")


def shared_dir():
    env = os.environ.get("TRACEDOC_SHARED")
    path = env if env else os.path.join(os.path.dirname(os.path.abspath(SOURCE)), "shared")
    return path if os.path.isdir(os.path.join(path, "traces")) else None


def validator(name):
    with open(os.path.join(SCHEMAS, name + ".schema.json"), encoding="utf-8") as f:
        schema = json.load(f)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


VALIDATORS = {n: validator(n) for n in ("report", "summary", "diagnose", "check", "diff", "view")}
passed, failed = 0, 0


def documents(text):
    """The JSON documents of an output: `stats` with several reports prints one after another."""
    decoder, docs, at = json.JSONDecoder(), [], 0
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at == len(text):
            return docs
        doc, at = decoder.raw_decode(text, at)
        docs.append(doc)


def schema_problems(schema, doc):
    """Where `doc` breaks its schema, one line per error."""
    return ["/".join(str(p) for p in error.absolute_path) + ": " + error.message[:300]
            for error in sorted(VALIDATORS[schema].iter_errors(doc), key=lambda e: list(e.absolute_path))]


def verdict(schema, label, problems):
    global passed, failed
    if problems:
        failed += 1
        print(f"FAIL {schema}: {label}")
        for p in problems[:10]:
            print(f"     {p}")
    else:
        passed += 1
        print(f"PASS {schema}: {label}")


def check(schema, label, args, expect_rc=(0,)):
    """Runs tracedoc with `args` (-f json added) and validates every document it prints."""
    run = subprocess.run([BINARY] + args + ["-f", "json"], capture_output=True, text=True)
    problems = []
    if run.returncode not in expect_rc:
        problems.append(f"exit {run.returncode}: {run.stderr.strip()}")
    else:
        try:
            docs = documents(run.stdout)
        except json.JSONDecodeError as e:
            docs, problems = [], [f"not JSON: {e}"]
        if not docs and not problems:
            problems.append("no JSON document on stdout")
        for doc in docs:
            problems += schema_problems(schema, doc)
    verdict(schema, label, problems)


# Bytes per value of each base64 column of a view page's tracks and bucket rows.
TRACK_COLUMNS = {"s": 8, "d": 8, "c": 8, "name": 4, "detail": 4, "color": 2, "depth": 1, "cat": 1}
LOD_COLUMNS = {"b": 2, "busy": 2, "color": 2, "count": 4}


def check_view(label, path, tmp, extra=()):
    """`tracedoc view`: the page's data document validates, and every column holds its row count."""
    page = os.path.join(tmp, "view.html")
    run = subprocess.run([BINARY, "view", path, "-o", page] + list(extra), capture_output=True, text=True)
    problems = []
    if run.returncode != 0:
        problems.append(f"exit {run.returncode}: {run.stderr.strip()}")
    else:
        with open(page, encoding="utf-8") as f:
            html = f.read()
        start_tag = '<script type="application/json" id="tracedoc-data">'
        begin = html.index(start_tag) + len(start_tag)
        doc = json.loads(html[begin:html.index("</script>", begin)])
        problems += schema_problems("view", doc)
        if not problems:
            import base64
            for t in doc["tracks"]:
                for key, size in TRACK_COLUMNS.items():
                    if len(base64.b64decode(t[key])) != t["n"] * size:
                        problems.append(f"track {t['label']}: column {key} does not hold {t['n']} values")
            for r in doc["lod"]["rows"]:
                n = len(base64.b64decode(r["b"])) // 2
                for key, size in LOD_COLUMNS.items():
                    if len(base64.b64decode(r[key])) != n * size:
                        problems.append(f"lod row {r['track']}/{r['row']}: column {key} does not hold {n} values")
            for lane in doc["utilization"]:
                if len(base64.b64decode(lane["busy"])) != doc["lod"]["buckets"] * 2:
                    problems.append(f"utilization {lane['label']}: not one value per bucket")
            for lane in doc["metrics"]:
                if len(base64.b64decode(lane["mean"])) != doc["lod"]["buckets"] * 8:
                    problems.append(f"metric {lane['label']}: not one value per bucket")
            samples = doc["samples"]
            n = samples["embedded"]
            for key, size in (("track", 4), ("t", 8), ("stack", 4), ("idle", 1)):
                if len(base64.b64decode(samples[key])) != n * size:
                    problems.append(f"samples: column {key} does not hold {n} values")
            stacks = len(base64.b64decode(samples["stack_class"]))
            if len(base64.b64decode(samples["stack_offsets"])) != (stacks + 1) * 4:
                problems.append("samples: stack_offsets does not hold one more value than there are stacks")
            for lane in samples["lanes"]:
                k = len(base64.b64decode(lane["b"])) // 2
                if len(base64.b64decode(lane["count"])) != k * 4 or len(base64.b64decode(lane["cls"])) != k:
                    problems.append(f"sample lane {lane['track']}: columns of unequal length")
            if sum(t["n"] for t in doc["tracks"]) != doc["raw"]["events"]:
                problems.append("raw.events is not the sum of the tracks' embedded events")
    verdict("view", label, problems)


def main():
    tmp = tempfile.mkdtemp(prefix="tracedoc-json-schema-")
    synth = {}
    for spec in ("clean", "clean_2ranks", "dataloader_bound", "staircase_memory", "exposed_comm", "sync_stall"):
        base = os.path.join(tmp, spec)
        os.makedirs(base)
        subprocess.run([BINARY, "synth", os.path.join(SYNTH, spec + ".toml"), "-o", os.path.join(base, spec)],
                       check=True, capture_output=True)
        synth[spec] = base
    clean_json = os.path.join(synth["clean"], "clean.json")
    clean_sqlite = os.path.join(synth["clean"], "clean.sqlite")
    slow_json = os.path.join(synth["dataloader_bound"], "dataloader_bound.json")
    ranks_dir = os.path.join(tmp, "ranks")
    os.makedirs(ranks_dir)
    for f in os.listdir(synth["clean_2ranks"]):
        if f.endswith(".json"):
            os.rename(os.path.join(synth["clean_2ranks"], f), os.path.join(ranks_dir, f))

    inputs = [EXAMPLE, clean_json, clean_sqlite, ranks_dir,
              os.path.join(synth["staircase_memory"], "staircase_memory.json"),
              os.path.join(synth["exposed_comm"], "exposed_comm_rank0.sqlite"),
              os.path.join(synth["sync_stall"], "sync_stall.json")]
    for path in inputs:
        name = os.path.relpath(path, tmp) if path.startswith(tmp) else os.path.basename(path)
        check("summary", name, ["summary", path])
        check("diagnose", name, ["diagnose", path])
        check("report", name + " stats", ["stats", "-r", "cuda_gpu_kern_sum,cuda_api_sum,nvtx_sum,step_sum,gpu_mem_sum", path])
        check("report", name + " analyze", ["analyze", path])
        check_view(name, path, tmp, ["--colors", "critical"])
    check("summary", "two inputs", ["summary", EXAMPLE, clean_json])
    check("diagnose", "two inputs", ["diagnose", EXAMPLE, clean_json])
    check("report", "op_sum", ["stats", "-r", "op_sum,tb_step_breakdown,gpu_time_breakdown", clean_json])
    check("report", "sql", ["sql", EXAMPLE, "SELECT * FROM kernels LIMIT 3"])

    budget = os.path.join(tmp, "budget.toml")
    with open(budget, "w") as f:
        f.write('[steps]\np50_max_ms = 20\np95_max_ms = 40\n[gpu]\nbusy_min_pct = 20\nidle_max_pct = 90\n'
                '[copies]\nshare_max_pct = 5\n[memory]\npeak_max_gb = 1\n[[kernel]]\nname = "sgemm"\n'
                'total_max_ms = 5\nshare_max_pct = 50\ncount_max = 10\navg_max_us = 100\n'
                '[findings]\nforbid = ["comb_pattern", "straggler"]\n'
                '[baseline]\nstep_p50_regression_max_pct = 5\nstep_p95_regression_max_pct = 5\nbusy_drop_max_pct = 5\n')
    check("check", "every section", ["check", EXAMPLE, "--budget", budget, "--baseline", EXAMPLE], expect_rc=(0, 1))
    check("check", "memory and ranks", ["check", ranks_dir, "--budget", budget, "--baseline", clean_json], expect_rc=(0, 1))

    check("diff", "same trace", ["diff", EXAMPLE, EXAMPLE])
    check("diff", "mixed formats", ["diff", clean_sqlite, clean_json])
    check("diff", "planted slowdown", ["diff", clean_json, slow_json])
    check("diff", "no steps", ["diff", clean_json, slow_json, "--step-marker", "no_such_range"])
    check("diff", "rank directory", ["diff", ranks_dir, clean_json, "--no-findings"])

    # An nsys export whose emit_nvtx ranges carry shapes: operators, FLOPs, steps (tests/data).
    emit_nvtx = os.path.join(SOURCE, "tests", "data", "pytorch-cpu", "cpu_train_emit_nvtx.sqlite")
    check("summary", "emit_nvtx operators", ["summary", emit_nvtx])
    check("diagnose", "emit_nvtx operators", ["diagnose", emit_nvtx])
    check("report", "op_flops_sum of an nsys export", ["stats", "-r", "op_flops_sum,step_mfu_sum", emit_nvtx])

    shared = shared_dir()
    if shared is None:
        print("json_schema_test: ../shared not found: the real traces are skipped")
    else:
        t = os.path.join(shared, "traces")
        hta = os.path.join(t, "kineto/HolisticTraceAnalysis/tests/data/trace_diff")
        mfu = os.path.join(t, "nsys/nsys-ai/mfu_2gpu_before.sqlite")
        resnet = os.path.join(t, "kineto/kineto/tb_plugin/samples/resnet50_num_workers_0")
        cpu_only = os.path.join(t, "torch113-cpu/cnn_fastdata.json")
        sampled = os.path.join(t, "nsys/ai-profiler/baseline_nvtx.sqlite")
        for path in (mfu, resnet, cpu_only, os.path.join(hta, "control"), sampled):
            name = os.path.relpath(path, t)
            check("summary", name, ["summary", path])
            check("diagnose", name, ["diagnose", path])
            check_view(name, path, tmp, ["--colors", "critical", "--max-events", "5000"])
        check("diff", "HTA trace_diff pair", ["diff", os.path.join(hta, "control"), os.path.join(hta, "test")])
        check("diff", "2-process nsys export", ["diff", mfu, mfu])
        check("diff", "CPU-only trace", ["diff", cpu_only, cpu_only])
        for report in ("cs599k/rms_norm_vector_v1.ncu-rep", "extrap/ex-gpu.s10.ncu-rep"):
            check("report", "ncu " + report, ["ncu", os.path.join(t, "ncu", report), "--all"])
        # CPU samples with call stacks: the summary's per-thread classes.
        check("summary", "summary with CPU samples", ["summary", os.path.join(t, "nsys/cs336/jsun012_result.sqlite")])
        # GPU hardware metrics: the summary's section and the diagnosis with the CPU and metric rules.
        metrics = os.path.join(t, "nsys/ai-profiler/secondOptimization_gpu-metrics-3.0-4.5s.sqlite")
        check("summary", "summary with GPU metrics", ["summary", metrics])
        check_view("view with GPU metrics", metrics, tmp)
        check("diagnose", "diagnose with GPU metrics", ["diagnose", metrics])
        check("diagnose", "diagnose with CPU samples", ["diagnose", os.path.join(t, "nsys/cs336/jsun012_result.sqlite")])
        check("report", "gpu_metrics_sum", ["stats", "-r", "gpu_metrics_sum:per=kernel", metrics])
        check("report", "cpu_sample_tree", ["stats", "-r", "cpu_sample_tree", os.path.join(t, "nsys/cs336/jsun012_result.sqlite")])
        # Nsight Compute joined to a timeline (--ncu), and a report read alone as its own timeline.
        extrap = os.path.join(t, "ncu/extrap")
        joined = ["--ncu", os.path.join(extrap, "ex-gpu.s10.ncu-rep"), os.path.join(extrap, "ex-gpu.s10.sqlite")]
        check("summary", "summary --ncu", ["summary"] + joined)
        check("diagnose", "diagnose --ncu", ["diagnose"] + joined)
        for report in ("cs599k/rms_norm_vector_v1.ncu-rep", "armleth/report_v4_8_per_thread.ncu-rep"):
            check("summary", "summary " + report, ["summary", os.path.join(t, "ncu", report)])
            check("diagnose", "diagnose " + report, ["diagnose", os.path.join(t, "ncu", report)])
            check_view(report, os.path.join(t, "ncu", report), tmp, ["--colors", "roofline"])
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
