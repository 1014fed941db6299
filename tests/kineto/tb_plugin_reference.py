#!/usr/bin/env python3
"""TensorBoard profiler plugin (torch-tb-profiler) reference numbers for tracedoc's tb_* reports.

tests/tb_plugin_test.cpp reads the same traces with tracedoc, puts them into the plugin's view and
compares tracedoc's Overview numbers (src/analysis/pytorch/tb_overview.h) with what this script
wrote. The script runs the plugin's own parser (RunProfileData: EventParser, OverallParser,
GPUMetricsParser, TensorCoresParser), so the comparison is against the tool, not against our reading
of its code. It writes two TSVs into tests/golden/tb_plugin/ (the C++ test needs neither Python nor
the plugin):

  step_breakdown.tsv  per trace: one row per step the plugin keeps (its name, its device-stretched
                      [start, end), the eight role times and the step time, µs as the plugin holds
                      them), then the `Average` row (OverallParser.avg_costs)
  gpu_metrics.tsv     per trace and GPU: GPU Utilization, Est. SM Efficiency, Est. Achieved Occupancy
                      and Kernel Time using Tensor Cores as fractions / percent, unrounded (the
                      Overview page prints them rounded to 2 decimals); empty where the plugin has None

Numbers are Python's repr of the plugin's floats (shortest round-trip text, read back exactly).
A trace the plugin fails on gets a `# <trace>: plugin fails: <exception>` line instead of rows; a
trace without CPU events gets `# <trace>: no CPU events` (the plugin's single step is then
(sys.maxsize, -sys.maxsize - 1) and every number it prints is meaningless).

Usage (torch-tb-profiler 0.4.3 in a virtualenv; it needs tensorboard and pandas, not torch):
    python3 -m venv VENV && VENV/bin/pip install torch-tb-profiler==0.4.3
    VENV/bin/python tests/kineto/tb_plugin_reference.py [SHARED_DIR]
SHARED_DIR defaults to $TRACEDOC_SHARED, else ../shared next to the checkout (as the C++ tests do).
Output paths are fixed, relative to this script, so committed files never name a machine path.

Which plugin. 0.4.3 (2023) is the last release on PyPI. Its event table (trace.py EventTypeMap) knows
the runtime category only as "runtime"/"Runtime" (PyTorch <= 1.10), so on every later trace it sees
no runtime call at all: no Runtime time, and steps are never stretched to the GPU work they launched
(kineto#679). kineto's tb_plugin source, until its removal in 2026 (kineto#1368), maps
cuda_runtime / mtia_runtime / glow_runtime / xpu_runtime / privateuse1_runtime to Runtime and keeps
every user_annotation (and gpu_user_annotation) as an operator (0.4.3 drops all but ProfilerStep and
the nccl:/gloo: ones). This script patches exactly those two things into 0.4.3 (EventTypeMap and
create_trace_event as the last source has them) and changes nothing else, so the reference is the
plugin as it last was. The steps, the role algebra, the GPU metrics and the tensor-core parser are
0.4.3's code unchanged (the same in the last source).
"""

import os
import sys
import tempfile
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import reference as _reference  # noqa: E402  (this folder's module)
CHECKOUT = os.path.dirname(os.path.dirname(HERE))
OUT_DIR = os.path.join(CHECKOUT, "tests", "golden", "tb_plugin")

# Relative to SHARED/traces. Kineto eras (docs: E1 2021 capitalized categories, E2/E3 integer µs,
# E4 fractional absolute µs, E5 relative "us.nnn" + baseTimeNanoseconds).
TRACES = [
    # E1 (PyTorch 1.8/1.9): the plugin's own samples (V100, 6 steps, DataLoader) and its test fixture
    "kineto/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
    "kineto/kineto/tb_plugin/samples/resnet50_num_workers_4/worker0.1623212756351.pt.trace.json.gz",
    "kineto/kineto/tb_plugin/test/gpu_metrics_input.json",
    # E2 (2022, integer µs): NCCL all_reduce/all_to_all, 4 streams, 6 steps; small and CPU-only ones
    "kineto/HolisticTraceAnalysis/tests/data/trace_diff/control/control.json.gz",
    "kineto/HolisticTraceAnalysis/tests/data/trace_diff/test/test.json.gz",
    "kineto/HolisticTraceAnalysis/tests/data/df_index_resolver/df_index_resolver.json.gz",
    "kineto/HolisticTraceAnalysis/tests/data/trace_compare/base/base.json.gz",
    "kineto/HolisticTraceAnalysis/tests/data/call_stack/backward_thread.json",
    "kineto/HolisticTraceAnalysis/tests/data/rank_non_gpu/rank_non_gpu.json.gz",
    # E3 (2023-2024, integer µs): 6 streams + NCCL + CUDA graphs, sampled ranks of a 128-rank job,
    # gpu_user_annotation without steps, cuda_sync, multi-stream without steps, no kernels at all
    "kineto/HolisticTraceAnalysis/tests/data/negative_queue_length_values_check/rank0.json.gz",
    "kineto/HolisticTraceAnalysis/tests/data/trace_filter/sampled_rank-0.json.gz",
    "kineto/HolisticTraceAnalysis/tests/data/trace_filter/sampled_rank-1.json.gz",
    "kineto/HolisticTraceAnalysis@history/tests/data/with_gpu_user_annotation/step_based_trace_2543932.json.gz",
    "kineto/HolisticTraceAnalysis/tests/data/critical_path/simple_add/benchmark_result_493459_1694039959_trace.json.gz",
    "kineto/HolisticTraceAnalysis/tests/data/critical_path/cuda_event_sync/event_sync_trace.json.gz",
    "kineto/HolisticTraceAnalysis/tests/data/critical_path/cuda_event_sync_multi_stream/event_sync_trace.json.gz",
    "kineto/HolisticTraceAnalysis/tests/data/execution_trace/benchmark_simple_add_trace.json.gz",
    "kineto/HolisticTraceAnalysis/tests/data/cupti_profiler/benchmark_result_924719_1679055439_trace.json.gz",
    "kineto/HolisticTraceAnalysis/tests/data/trace_file_list/inference_rank_1.json.gz",
    # E4 (Apr 2024): fractional absolute-epoch µs, which a double holds to 0.25 µs only
    "kineto/HolisticTraceAnalysis/tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
    # E5 (PyTorch >= 2.4): H100/B200 HF models (a GPU-side ProfilerStep annotation each), NCCL,
    # Triton via cuLaunchKernel, AMD MI300X/MI250 (HIP), CPU-only steps, inference captures
    "kineto/TraceLens/tests/traces/h100/Falconsai_nsfw_image_detection__1016002.json.gz",
    "kineto/TraceLens/tests/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
    "kineto/TraceLens/tests/traces/h100/facebook_timesformer-base-finetuned-k400__1016002.json.gz",
    "kineto/TraceLens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz",
    "kineto/TraceLens/tests/traces/h100/google_owlv2-large-patch14-ensemble__1016001.json.gz",
    "kineto/TraceLens/tests/traces/b200/eager_trace.json.gz",
    "kineto/HolisticTraceAnalysis/tests/data/nccl_parser_config/nccl_data.json.gz",
    "kineto/HolisticTraceAnalysis/tests/data/triton_example/triton_example.json.gz",
    "kineto/TraceLens/tests/traces/mi300/resnet_act_checkpoint.json.gz",
    "kineto/TraceLens/tests/traces/mi300/gaunernst_bert-small-uncased__1016001.json.gz",
    "kineto/TraceLens/tests/traces/mi210/gpu_only_trace/gpu_only_trace.json.gz",
    "kineto/HolisticTraceAnalysis/tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    "kineto/TraceLens/tests/traces/torch_compile_triton/trace.json.gz",
    "kineto/TraceLens/tests/traces/perf_model/normalization/normalization_layer_test.json.gz",
    "kineto/TraceLens/tests/traces/inference/vllm_decode_full/graph_execution.json.gz",
    "kineto/TraceLens/tests/traces/inference/sglang_decode/sglang_Qwen3-8B_decode.json.gz",
    "kineto/TraceLens/tests/traces/inference/xdit_sd_3.5/profile_trace_rank_0.json.gz",
    "kineto/HolisticTraceAnalysis@history/tests/data/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz",
    "kineto/kineto/docs/traces/after_fix_trace.json",
]

ROLES = ["kernel", "memcpy", "memset", "communication", "runtime", "dataloader", "cpu_exec", "other", "total"]


# The shared folder, as every reference script of this folder finds it.
shared_dir = _reference.shared_dir


def patch_plugin():
    """kineto tb_plugin's last event table, on 0.4.3 (see the module docstring)."""
    from torch_tb_profiler.profiler import trace
    from torch_tb_profiler.profiler.trace import EventTypes, OperatorEvent, ProfilerStepEvent

    for category in ["cuda_runtime", "mtia_runtime", "glow_runtime", "xpu_runtime", "privateuse1_runtime"]:
        trace.EventTypeMap[category] = EventTypes.RUNTIME
    released = trace.create_trace_event

    def create_trace_event(event, is_pytorch_lightning):
        if trace.EventTypeMap.get(event.get("cat").lower()) == EventTypes.USER_ANNOTATION:
            name = event.get("name")
            if name and name.startswith("ProfilerStep#"):
                return ProfilerStepEvent(event)
            return OperatorEvent(EventTypes.USER_ANNOTATION, event)
        return released(event, is_pytorch_lightning)

    trace.create_trace_event = create_trace_event


def capture_steps():
    """OverallParser.aggregate receives the final steps (stretched, trailing ones dropped): keep them."""
    from torch_tb_profiler.profiler import overall_parser

    seen = {}
    aggregate = overall_parser.OverallParser.aggregate

    def recording(self, steps, role_ranges):
        seen["steps"] = list(steps)
        return aggregate(self, steps, role_ranges)

    overall_parser.OverallParser.aggregate = recording
    return seen


def num(x):
    return "" if x is None else repr(x)


def main():
    os.environ.setdefault("TORCH_PROFILER_LOG_LEVEL", "ERROR")
    import torch_tb_profiler
    from torch_tb_profiler.profiler.data import RunProfileData

    patch_plugin()
    seen = capture_steps()
    traces = os.path.join(shared_dir(), "traces")
    version = getattr(torch_tb_profiler, "__version__", "?")
    os.makedirs(OUT_DIR, exist_ok=True)
    steps_out = [f"# torch-tb-profiler {version} with kineto tb_plugin's last event table (tests/kineto/tb_plugin_reference.py)",
                 "\t".join(["trace", "step", "start", "end"] + ROLES)]
    gpus_out = [steps_out[0], "\t".join(["trace", "device", "utilization", "sm_efficiency", "occupancy", "tensor_cores"])]
    for rel in TRACES:
        path = os.path.join(traces, rel)
        if not os.path.exists(path):
            sys.exit(f"missing trace: {path}")
        seen.clear()
        try:
            profile = RunProfileData.parse("worker", None, path, tempfile.gettempdir())
        except Exception as e:  # noqa: BLE001 - the failure itself is the reference
            line = f"# {rel}: plugin fails: {type(e).__name__}: {e}".replace("\n", " ")
            steps_out.append(line)
            gpus_out.append(line)
            print(line, file=sys.stderr)
            traceback.print_exc(limit=2)
            continue
        steps = seen["steps"]
        if steps and steps[0][0] == sys.maxsize:
            steps_out.append(f"# {rel}: no CPU events")
            gpus_out.append(f"# {rel}: no CPU events")
            continue
        for name, (start, end), costs in zip(profile.steps_names, steps, profile.steps_costs):
            steps_out.append("\t".join([rel, name, num(start), num(end)] + [num(c) for c in costs.costs]))
        steps_out.append("\t".join([rel, "Average", "", ""] + [num(c) for c in profile.avg_costs.costs]))
        g = profile.gpu_metrics_parser
        for gpu in sorted(g.gpu_ids):
            tc = profile.tc_ratio[gpu] if profile.tc_ratio is not None else None
            gpus_out.append("\t".join([rel, str(gpu), num(g.gpu_utilization[gpu]),
                                       num(g.avg_approximated_sm_efficiency_per_device[gpu]),
                                       num(g.avg_occupancy_per_device[gpu]), num(tc)]))
        print(f"{rel}: {len(steps)} steps, {len(g.gpu_ids)} GPUs", file=sys.stderr)
    with open(os.path.join(OUT_DIR, "step_breakdown.tsv"), "w") as f:
        f.write("\n".join(steps_out) + "\n")
    with open(os.path.join(OUT_DIR, "gpu_metrics.tsv"), "w") as f:
        f.write("\n".join(gpus_out) + "\n")


if __name__ == "__main__":
    main()
