#include "ingest/read_warnings.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/memory_budget.h"
#include "ingest/kineto_reader.h"

namespace tracedoc {

std::vector<std::string> read_warning_lines(const Trace& trace) {
  std::vector<std::string> lines = trace.warnings.skipped_entries;
  const ReadWarnings& w = trace.warnings;
  const std::string& path = trace.source.path;
  if (w.torn_frames > 0) {
    lines.push_back(fmt::format("{}: {} capture frame(s) cut short (a process died while writing); the rest is read",
                                path, w.torn_frames));
  }
  if (w.any()) {
    std::vector<std::string> parts;
    if (w.negative_durations) {
      const std::string& format = trace.source.format;
      parts.push_back(fmt::format("{} ending before they start ({})", w.negative_durations,
                                  format == "kineto-json"        ? "read with duration 0"
                                  : format == "tracedoc-capture" ? "skipped"
                                                                 : "kept as recorded, as nsys does"));
    }
    if (w.absurd_durations) parts.push_back(fmt::format("{} longer than a week (skipped)", w.absurd_durations));
    if (w.missing_times) parts.push_back(fmt::format("{} without a usable timestamp (skipped)", w.missing_times));
    if (w.unusable_durations) {
      parts.push_back(
          fmt::format("{} with a duration that is not a number (NaN, Infinity; skipped)", w.unusable_durations));
    }
    if (w.oversized_events) {
      parts.push_back(fmt::format("{} larger than {} (skipped unread)", w.oversized_events,
                                  format_memory_size(KinetoReadOptions{}.max_unit_bytes)));
    }
    if (w.bad_values) parts.push_back(fmt::format("{} with a value of the wrong type (read as absent)", w.bad_values));
    if (w.unknown_string_ids) {
      parts.push_back(
          fmt::format("{} naming a string id the export does not have (read as unnamed)", w.unknown_string_ids));
    }
    if (w.unnamed_metrics) {
      parts.push_back(fmt::format("{} GPU metric samples of a metric TARGET_INFO_GPU_METRICS does not name (dropped)",
                                  w.unnamed_metrics));
    }
    lines.push_back(fmt::format("{}: events {}", path, fmt::join(parts, "; ")));
  }
  for (const auto& report : trace.ncu_reports) {
    if (std::string line = ncu_warning_line(*report); !line.empty()) lines.push_back(std::move(line));
  }
  return lines;
}

std::string ncu_warning_line(const NcuReport& report) {
  if (report.unusable_values == 0) return "";
  return fmt::format("{}: {} metric value(s) not finite, past 2^63, or negative where they count (read as absent)",
                     report.path, report.unusable_values);
}

}  // namespace tracedoc
