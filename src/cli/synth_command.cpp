// `tracedoc synth`: writes a synthetic PyTorch training loop, clean or with fingerprints planted in
// it (docs/synth.md), as an Nsight Systems export and a PyTorch profiler trace of the same run.
//
//   tracedoc synth SPEC.toml -o BASE [--format both|sqlite|kineto]
//
// One rank: BASE.sqlite and BASE.json. Several ranks: BASE_rank<N>.sqlite and BASE_rank<N>.json
// per rank (the .json files of a folder read as one merged run). Each file is written whole or not
// at all; the written paths are printed, one per line. A bad spec is a one-line error naming the file
// and the key (exit 2).
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/shared_options.h"
#include "cli/report_output.h"
#include "report/kineto_json_writer.h"
#include "report/nsys_sqlite_writer.h"
#include "synth/synth_spec.h"
#include "synth/training_loop.h"

namespace tracedoc::cli {

namespace {

struct SynthOptions {
  std::string spec;
  std::string output;
  std::string format = "both";
};

// "out/run.json" and "out/run.sqlite" name the base "out/run" too.
std::string base_name(std::string base) {
  for (const std::string ext : {".json", ".sqlite"}) {
    if (base.size() > ext.size() && base.compare(base.size() - ext.size(), ext.size(), ext) == 0) {
      base.resize(base.size() - ext.size());
      break;
    }
  }
  return base;
}

int run_synth(const SynthOptions& opt) {
  if (opt.spec.empty()) return fail(UsageError("synth: a SPEC.toml file is required"));
  if (opt.output.empty() || opt.output == "-")
    return fail(UsageError("synth: -o BASE is required (files BASE.sqlite, BASE.json)"));
  auto spec = synth::read_synth_spec(opt.spec);
  if (!spec.ok()) return fail(spec.status());
  auto built = synth::build_training_loop(*spec);
  if (!built.ok()) return fail(built.status());
  const std::string base = base_name(opt.output);
  const auto& ranks = built->ranks;
  std::vector<std::string> written;
  for (size_t r = 0; r < ranks.size(); ++r) {
    const std::string stem = ranks.size() > 1 ? fmt::format("{}_rank{}", base, r) : base;
    if (opt.format != "kineto") {
      Status st = write_nsys_sqlite(ranks[r], stem + ".sqlite");
      if (!st.ok()) return fail(st);
      written.push_back(stem + ".sqlite");
    }
    if (opt.format != "sqlite") {
      Status st = write_kineto_json(ranks[r], stem + ".json");
      if (!st.ok()) return fail(st);
      written.push_back(stem + ".json");
    }
  }
  for (const auto& w : written) std::printf("%s\n", w.c_str());
  return kExitOk;
}

}  // namespace

std::function<int()> add_synth_command(CLI::App& app) {
  auto opt = std::make_shared<SynthOptions>();
  CLI::App* cmd = app.add_subcommand(
      "synth",
      "Write a synthetic training loop (clean or with planted problems) as an nsys export and a PyTorch trace");
  cmd->add_option("spec", opt->spec, "The description (TOML, docs/synth.md)");
  cmd->add_option("-o,--output", opt->output,
                  "Base name: BASE.sqlite and BASE.json (BASE_rank<N>.* with several ranks)");
  add_format_option(cmd, opt->format, {{"both", ""}, {"sqlite", ""}, {"kineto", ""}}, {}, "", "--format");
  return [opt] { return run_synth(*opt); };
}

}  // namespace tracedoc::cli
