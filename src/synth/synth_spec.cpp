#include "synth/synth_spec.h"

#include <fmt/format.h>

#include <cmath>
#include <initializer_list>
#include <sstream>

#include "common/input_file.h"
#include "common/toml_file.h"

namespace tracedoc::synth {

namespace {

constexpr const char* kPlantIds[kPlantCount] = {
    "comb_pattern", "dataloader_bound", "long_tail",           "staircase_memory", "sync_stall",
    "memcpy_heavy", "pageable_memcpy",  "launch_bound",        "kernel_config",    "exposed_comm",
    "straggler",    "layout_overhead",  "tensor_cores_unused", "gpu_idle",
};

// GPUs the spec may name without giving their properties.
struct KnownGpu {
  const char* name;
  int32_t sms;
  int64_t memory_gib;
  int32_t major, minor;
};
constexpr KnownGpu kGpus[] = {
    {"NVIDIA A100-SXM4-80GB", 108, 80, 8, 0},
    {"NVIDIA A100-SXM4-40GB", 108, 40, 8, 0},
    {"NVIDIA A100-PCIE-40GB", 108, 40, 8, 0},
    {"NVIDIA A100 80GB PCIe", 108, 80, 8, 0},
    {"NVIDIA H100 80GB HBM3", 132, 80, 9, 0},
    {"NVIDIA H100 PCIe", 114, 80, 9, 0},
    {"NVIDIA A10G", 80, 24, 8, 6},
    {"NVIDIA L4", 58, 24, 8, 9},
    {"Tesla V100-SXM2-32GB", 80, 32, 7, 0},
};

// Errors name the file and the key: "spec.toml: plant.long_tail.strength: ...".
class Reader {
 public:
  explicit Reader(const std::string& file) : file_(file) {}
  Status error(const std::string& key, const std::string& what) const {
    return UsageError(fmt::format("{}: {}: {}", file_, key, what));
  }
  Status integer(const toml::node& n, const std::string& key, int64_t lo, int64_t hi, int64_t* out) const {
    const auto* v = n.as_integer();
    if (!v) return error(key, fmt::format("must be an integer between {} and {}", lo, hi));
    if (v->get() < lo || v->get() > hi)
      return error(key, fmt::format("must be between {} and {} (got {})", lo, hi, v->get()));
    *out = v->get();
    return Status::Ok();
  }
  Status number(const toml::node& n, const std::string& key, double lo, double hi, double* out) const {
    double x = 0;
    if (const auto* i = n.as_integer())
      x = static_cast<double>(i->get());
    else if (const auto* f = n.as_floating_point())
      x = f->get();
    else
      return error(key, fmt::format("must be a number between {} and {}", lo, hi));
    if (!std::isfinite(x) || x < lo || x > hi)
      return error(key, fmt::format("must be between {} and {} (got {})", lo, hi, x));
    *out = x;
    return Status::Ok();
  }
  Status string(const toml::node& n, const std::string& key, std::string* out) const {
    const auto* s = n.as_string();
    if (!s) return error(key, "must be a string");
    *out = s->get();
    return Status::Ok();
  }
  // One of `names` (an enum's values in order): its index into `out`.
  template <typename Enum>
  Status choice(const toml::node& n, const std::string& key, std::initializer_list<const char*> names,
                Enum* out) const {
    std::string s;
    TRACEDOC_RETURN_IF_ERROR(string(n, key, &s));
    std::string listed;
    size_t i = 0;
    for (const char* name : names) {
      if (s == name) {
        *out = static_cast<Enum>(i);
        return Status::Ok();
      }
      listed += fmt::format("{}\"{}\"", i == 0 ? "" : i + 1 == names.size() ? " or " : ", ", name);
      ++i;
    }
    return error(key, fmt::format("must be {} (got \"{}\")", listed, s));
  }

 private:
  std::string file_;
};

Status read_model(const Reader& r, const toml::table& model, SynthSpec& spec) {
  for (const auto& [k, node] : model) {
    const std::string key = "model." + std::string(k.str());
    int64_t i = 0;
    double x = 0;
    if (k == "layers") {
      TRACEDOC_RETURN_IF_ERROR(r.integer(node, key, 1, 48, &i));
      spec.layers = static_cast<int32_t>(i);
    } else if (k == "batch_mib") {
      TRACEDOC_RETURN_IF_ERROR(r.number(node, key, 0.001, 4096, &x));
      spec.batch_bytes = std::max<int64_t>(512, std::llround(x * 1048576.0 / 512.0) * 512);
    } else if (k == "dataloader_ms") {
      TRACEDOC_RETURN_IF_ERROR(r.number(node, key, 0.01, 10000, &x));
      spec.dataloader_ns = std::llround(x * 1e6);
    } else if (k == "step_sync") {
      TRACEDOC_RETURN_IF_ERROR(r.choice(node, key, {"item", "device", "none"}, &spec.step_sync));
    } else {
      return r.error(key, "unknown key (model keys: layers, batch_mib, dataloader_ms, step_sync)");
    }
  }
  return Status::Ok();
}

Status read_plants(const Reader& r, const toml::table& plants, SynthSpec& spec) {
  for (const auto& [k, node] : plants) {
    const std::string key = "plant." + std::string(k.str());
    size_t p = 0;
    while (p < kPlantCount && k.str() != kPlantIds[p]) ++p;
    if (p == kPlantCount) return r.error(key, "unknown plant (docs/synth.md lists them)");
    const auto* table = node.as_table();
    if (!table) return r.error(key, "must be a table: [" + key + "] with strength = X");
    const auto plant = static_cast<Plant>(p);
    double strength = -1;
    for (const auto& [pk, pnode] : *table) {
      const std::string pkey = key + "." + std::string(pk.str());
      if (pk == "shape" && plant == Plant::kLaunchBound) {
        TRACEDOC_RETURN_IF_ERROR(
            r.choice(pnode, pkey, {"tiny_kernels", "eager_block", "gemm_queue"}, &spec.launch_shape));
        continue;
      }
      if (pk != "strength") {
        return r.error(pkey, plant == Plant::kLaunchBound ? "unknown key (launch_bound takes strength and shape)"
                                                          : "unknown key (a plant takes only strength)");
      }
      TRACEDOC_RETURN_IF_ERROR(r.number(pnode, pkey, 0, max_strength(plant), &strength));
    }
    if (strength < 0) return r.error(key + ".strength", "missing");
    spec.strength[p] = strength;
  }
  if (spec.planted(Plant::kCombPattern) && spec.planted(Plant::kDataLoaderBound)) {
    return r.error("plant.dataloader_bound", "is the same plant as plant.comb_pattern: set one of them");
  }
  for (size_t p = 0; p < kPlantCount; ++p) {
    const auto plant = static_cast<Plant>(p);
    if (spec.planted(plant) && needs_ranks(plant) && spec.ranks < 2) {
      return r.error(std::string("plant.") + kPlantIds[p], "needs ranks >= 2");
    }
  }
  return Status::Ok();
}

}  // namespace

const char* plant_id(Plant p) { return kPlantIds[static_cast<size_t>(p)]; }

double max_strength(Plant p) {
  switch (p) {
    case Plant::kStaircaseMemory: return 16;  // GiB over the run
    case Plant::kStraggler: return 4;         // rank 1 computes (1 + strength) times slower
    case Plant::kLaunchBound: return 0.9;     // share of the step: 1 would be a step of nothing else
    default: return 1;
  }
}

bool needs_ranks(Plant p) { return p == Plant::kExposedComm || p == Plant::kStraggler; }

Result<SynthSpec> parse_synth_spec(std::string_view toml_text, const std::string& name) {
  SynthSpec spec;
  spec.source = name;
  const Reader r(name);
  auto parsed = parse_toml(toml_text, name);
  if (!parsed.ok()) return UsageError(parsed.status().message());
  const toml::table& doc = *parsed;
  // A GPU not in the table needs all three of its properties.
  bool unknown_gpu = false;
  int gpu_properties = 0;
  // Top-level keys first (ranks decides which plants are allowed), tables after. toml::table is
  // ordered by key: "gpu" comes before the gpu_* keys that override its table entry.
  for (const auto& [k, node] : doc) {
    const std::string key(k.str());
    int64_t i = 0;
    double x = 0;
    if (key == "model" || key == "plant") {
      if (!node.is_table()) return r.error(key, "must be a table");
    } else if (key == "gpu") {
      TRACEDOC_RETURN_IF_ERROR(r.string(node, key, &spec.gpu));
      const KnownGpu* known = nullptr;
      for (const auto& g : kGpus)
        if (spec.gpu == g.name) known = &g;
      unknown_gpu = !known;
      if (known) {
        spec.gpu_sms = known->sms;
        spec.gpu_memory = known->memory_gib << 30;
        spec.compute_major = known->major;
        spec.compute_minor = known->minor;
      }
    } else if (key == "gpu_sms") {
      TRACEDOC_RETURN_IF_ERROR(r.integer(node, key, 1, 1024, &i));
      spec.gpu_sms = static_cast<int32_t>(i);
      ++gpu_properties;
    } else if (key == "gpu_memory_gib") {
      TRACEDOC_RETURN_IF_ERROR(r.number(node, key, 1, 4096, &x));
      spec.gpu_memory = std::llround(x * 1073741824.0);
      ++gpu_properties;
    } else if (key == "gpu_compute") {
      std::string cc;
      TRACEDOC_RETURN_IF_ERROR(r.string(node, key, &cc));
      int major = 0, minor = 0;
      char dot = 0, extra = 0;
      std::istringstream in(cc);
      if (!(in >> major >> dot >> minor) || dot != '.' || (in >> extra) || major < 1 || major > 20 || minor < 0 ||
          minor > 9) {
        return r.error(key, fmt::format("must be a compute capability like \"8.0\" (got \"{}\")", cc));
      }
      spec.compute_major = major;
      spec.compute_minor = minor;
      ++gpu_properties;
    } else if (key == "steps") {
      TRACEDOC_RETURN_IF_ERROR(r.integer(node, key, 1, 10000, &i));
      spec.steps = static_cast<int32_t>(i);
    } else if (key == "ranks") {
      TRACEDOC_RETURN_IF_ERROR(r.integer(node, key, 1, 64, &i));
      spec.ranks = static_cast<int32_t>(i);
    } else if (key == "seed") {
      TRACEDOC_RETURN_IF_ERROR(r.integer(node, key, 0, INT64_MAX, &i));
      spec.seed = static_cast<uint64_t>(i);
    } else {
      return r.error(key,
                     "unknown key (top-level keys: gpu, gpu_sms, gpu_memory_gib, gpu_compute, steps, ranks, seed; "
                     "tables: [model], [plant.<rule_id>])");
    }
  }
  if (unknown_gpu && gpu_properties < 3) {
    return r.error(
        "gpu",
        fmt::format("\"{}\" is not in the built-in table: give gpu_sms, gpu_memory_gib and gpu_compute", spec.gpu));
  }
  if (const auto* model = doc["model"].as_table()) TRACEDOC_RETURN_IF_ERROR(read_model(r, *model, spec));
  if (const auto* plants = doc["plant"].as_table()) TRACEDOC_RETURN_IF_ERROR(read_plants(r, *plants, spec));
  return spec;
}

Result<SynthSpec> read_synth_spec(const std::string& path) {
  TRACEDOC_ASSIGN_OR_RETURN(const std::string text,
                            read_file(path, {.max_bytes = kMaxTomlFileBytes, .what = "synth spec"}));
  return parse_synth_spec(text, path);
}

}  // namespace tracedoc::synth
