// The colour schemes of `tracedoc view`: the two presets, the TOML and XML readers (the forms are
// described in color_scheme.h) and the matching of events against the rules.
#include "view/color_scheme.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <map>
#include <pugixml.hpp>
#include <utility>

#include "common/input_file.h"
#include "common/name_pattern.h"
#include "common/text.h"
#include "common/toml_file.h"

namespace tracedoc::view {

// One pattern per rule, at the rule's index; a rule with an empty pattern has none.
struct ColorScheme::Compiled {
  std::vector<std::optional<NamePattern>> regex;
};

namespace {

namespace fs = std::filesystem;

constexpr std::array<const char*, kCategoryCount> kNames = {"kernel", "memcpy", "memset", "sync", "gpu_annotation",
                                                            "api",    "range",  "op",     "os",   "graph"};
constexpr std::array<const char*, kCategoryCount> kLabels = {
    "kernel",   "memory copy",      "memset",   "sync",    "GPU annotation",
    "CUDA API", "annotation range", "operator", "OS call", "CUDA graph"};

// The default scheme's category colours, after Tableau 10: neighbours on a timeline (a kernel
// next to a copy, an API call under an operator) differ in hue. Memory operations are yellow and
// orange and sync purple as in the critical preset, so the meaning of a hue does not change between
// the schemes; no category is red, which the critical preset keeps for the critical path.
constexpr std::array<uint32_t, kCategoryCount> kDefaultColors = {
    0x4e79a7,  // kernel: blue
    0xe6b800,  // memcpy: yellow
    0xf28e2b,  // memset: orange
    0x9467bd,  // sync: purple
    0x7f7f7f,  // gpu_annotation: grey
    0x59a14f,  // api: green
    0x76b7b2,  // range: teal
    0x9c755f,  // op: brown
    0xbab0ac,  // os: warm grey
    0xff9da7,  // graph: pink
};

// A scheme of more rules is a mistake (a generated file gone wrong); the limit also keeps the
// palette indices far inside uint16_t.
constexpr size_t kMaxRules = 1000;
// A colour scheme is a few lines: a bigger file is most likely a trace given by mistake.
constexpr uintmax_t kMaxFileBytes = 16u << 20;

constexpr const char* kColorForms = "#rrggbb, #rgb, 0xRRGGBB, 0xAARRGGBB or an ARGB integer";

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// "kernel, memcpy, ..., os" for messages, ending in "or any" where a rule's mask is read.
std::string category_list(bool with_any = true) {
  std::string out;
  for (size_t i = 0; i < kCategoryCount; ++i) {
    const bool last = i + 1 == kCategoryCount;
    out += (i == 0 ? "" : (last && !with_any) ? " or " : ", ") + std::string(kNames[i]);
  }
  return with_any ? out + " or any" : out;
}

bool parse_hex(std::string_view digits, uint32_t* out) {
  if (digits.empty() || digits.size() > 8) return false;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), *out, 16);
  return ec == std::errc() && end == digits.data() + digits.size();
}

// An ARGB integer as nsys stores NVTX colours: unsigned, or the same bits read as a signed int32.
std::optional<uint32_t> color_from_integer(int64_t v) {
  if (v < INT32_MIN || v > int64_t{UINT32_MAX}) return std::nullopt;
  return static_cast<uint32_t>(v) & 0xffffffu;
}

// "#rrggbb", "#rgb", "0xRRGGBB", "0xAARRGGBB" or a decimal ARGB integer; the alpha byte is dropped
// (the timeline draws opaque boxes).
std::optional<uint32_t> parse_color(std::string_view text) {
  text = trim(text);
  uint32_t v = 0;
  if (!text.empty() && text.front() == '#') {
    const std::string_view digits = text.substr(1);
    if (digits.size() == 6 && parse_hex(digits, &v)) return v;
    if (digits.size() == 3 && parse_hex(digits, &v)) {
      // #rgb: each digit stands for itself twice (#f80 = #ff8800).
      const uint32_t r = (v >> 8) & 0xf, g = (v >> 4) & 0xf, b = v & 0xf;
      return (r * 0x11) << 16 | (g * 0x11) << 8 | (b * 0x11);
    }
    return std::nullopt;
  }
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    const std::string_view digits = text.substr(2);
    if ((digits.size() == 6 || digits.size() == 8) && parse_hex(digits, &v)) return v & 0xffffffu;
    return std::nullopt;
  }
  int64_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n, 10);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return color_from_integer(n);
}

// "true"/"false" (also 1/0) as XML attributes spell them.
bool parse_bool(std::string_view text, bool* out) {
  const std::string t = lower(trim(text));
  if (t == "true" || t == "1") return *out = true, true;
  if (t == "false" || t == "0") return *out = false, true;
  return false;
}

std::string default_label(const ColorRule& rule) {
  std::string label = rule.pattern;
  if (label.empty()) {
    if ((rule.categories & kAnyCategory) == kAnyCategory) {
      label = "any event";
    } else {
      for (size_t c = 0; c < kCategoryCount; ++c) {
        if (rule.categories & (1u << c)) label += (label.empty() ? "" : ", ") + std::string(kLabels[c]);
      }
    }
  }
  if (rule.critical) label += *rule.critical ? " (critical path)" : " (off the critical path)";
  return label;
}

// Fills in the default label and compiles the pattern; a bad one is the message of the error (the
// caller says which rule of which file).
Status finish_rule(ColorRule& rule, std::optional<NamePattern>* out) {
  if (rule.label.empty()) rule.label = default_label(rule);
  if (rule.pattern.empty()) return Status::Ok();
  auto compiled = NamePattern::compile(rule.pattern, {.ignore_case = rule.ignore_case});
  if (!compiled.ok()) return BadInput(compiled.status().message());
  *out = std::move(compiled).value();
  return Status::Ok();
}

// What a file says, before it is put in front of its preset.
struct FileScheme {
  std::string preset = "default";
  std::vector<ColorRule> rules;
  std::vector<std::optional<NamePattern>> regex;               // at the rules' indices
  std::array<std::optional<Swatch>, kCategoryCount> defaults;  // an empty label keeps the preset's
};

// What is wrong with a preset's name; empty when nothing.
std::string preset_problem(const std::string& preset) {
  if (preset == "default" || preset == "critical" || preset == "roofline" || preset == "peak") return "";
  return fmt::format("unknown preset '{}' (expected default, critical, roofline or peak)", preset);
}

// A rule's `bound`: "memory", "compute" or "none".
std::optional<KernelBound> parse_bound(std::string_view text) {
  const std::string t = lower(trim(text));
  if (t == "memory") return KernelBound::kMemory;
  if (t == "compute") return KernelBound::kCompute;
  if (t == "none") return KernelBound::kNone;
  return std::nullopt;
}
constexpr const char* kBoundValues = "memory, compute or none";

// A rule's `peak`: "low", "fair", "good", "high" or "none".
std::optional<PeakBand> parse_peak(std::string_view text) {
  const std::string t = lower(trim(text));
  if (t == "low") return PeakBand::kLow;
  if (t == "fair") return PeakBand::kFair;
  if (t == "good") return PeakBand::kGood;
  if (t == "high") return PeakBand::kHigh;
  if (t == "none") return PeakBand::kNone;
  return std::nullopt;
}
constexpr const char* kPeakValues = "low, fair, good, high or none";

// Reads the TOML form; every message names the file, the line where known, and the key.
class TomlReader {
 public:
  explicit TomlReader(const std::string& path) : path_(path) {}

  Status read(const toml::table& root, FileScheme* out) const {
    for (const auto& [key, node] : root) {
      const std::string k(key.str());
      if (k == "preset") {
        if (!node.is_string()) return error(node, k, "must be a string (default or critical)");
        out->preset = *node.value<std::string>();
        if (const std::string problem = preset_problem(out->preset); !problem.empty()) return error(node, k, problem);
      } else if (k == "rule") {
        const toml::array* rules = node.as_array();
        if (!rules) return error(node, k, "must be an array of tables ([[rule]])");
        if (rules->size() > kMaxRules) return error(node, k, fmt::format("more than {} rules", kMaxRules));
        for (size_t i = 0; i < rules->size(); ++i) TRACEDOC_RETURN_IF_ERROR(read_rule((*rules)[i], i + 1, out));
      } else if (k == "default") {
        TRACEDOC_RETURN_IF_ERROR(read_defaults(node, out));
      } else {
        return error(node, k, "unknown key (expected preset, [[rule]] or [default])");
      }
    }
    return Status::Ok();
  }

 private:
  Status error(const toml::node& at, const std::string& where, const std::string& what) const {
    const auto line = at.source().begin.line;
    if (line == 0) return BadInput(fmt::format("{}: {}: {}", path_, where, what));
    return BadInput(fmt::format("{}:{}: {}: {}", path_, line, where, what));
  }

  Status string(const toml::node& v, const std::string& where, std::string* out) const {
    if (!v.is_string()) return error(v, where, "must be a string");
    *out = *v.value<std::string>();
    return Status::Ok();
  }

  Status boolean(const toml::node& v, const std::string& where, bool* out) const {
    if (!v.is_boolean()) return error(v, where, "must be true or false");
    *out = *v.value<bool>();
    return Status::Ok();
  }

  Status color(const toml::node& v, const std::string& where, uint32_t* out) const {
    std::optional<uint32_t> c;
    if (v.is_string()) {
      c = parse_color(*v.value<std::string>());
      if (!c)
        return error(v, where, fmt::format("bad colour '{}' (expected {})", *v.value<std::string>(), kColorForms));
    } else if (v.is_integer()) {
      c = color_from_integer(*v.value<int64_t>());
      if (!c) return error(v, where, fmt::format("bad colour {} (an ARGB integer is 32 bits)", *v.value<int64_t>()));
    } else {
      return error(v, where, fmt::format("must be a colour ({})", kColorForms));
    }
    *out = *c;
    return Status::Ok();
  }

  Status categories(const toml::node& v, const std::string& where, uint16_t* out) const {
    const auto one = [&](const toml::node& n, uint16_t* mask) -> Status {
      if (!n.is_string()) return error(n, where, "must be a category name, a list of them or \"any\"");
      const std::string text = *n.value<std::string>();
      if (!parse_category_mask(text, mask))
        return error(n, where, fmt::format("unknown category '{}' (expected {})", text, category_list()));
      return Status::Ok();
    };
    const toml::array* list = v.as_array();
    if (!list) return one(v, out);
    if (list->empty()) return error(v, where, "is an empty list (leave it out for any category)");
    uint16_t mask = 0;
    for (const toml::node& n : *list) {
      uint16_t m = 0;
      TRACEDOC_RETURN_IF_ERROR(one(n, &m));
      mask |= m;
    }
    *out = mask;
    return Status::Ok();
  }

  Status read_rule(const toml::node& node, size_t number, FileScheme* out) const {
    const std::string where = fmt::format("rule {}", number);
    const toml::table* t = node.as_table();
    if (!t) return error(node, where, "must be a table ([[rule]])");
    ColorRule rule;
    rule.categories = kAnyCategory;
    bool has_color = false;
    const toml::node* name_node = &node;
    for (const auto& [key, v] : *t) {
      const std::string k(key.str());
      const std::string at = where + ": " + k;
      if (k == "category") {
        TRACEDOC_RETURN_IF_ERROR(categories(v, at, &rule.categories));
      } else if (k == "name") {
        TRACEDOC_RETURN_IF_ERROR(string(v, at, &rule.pattern));
        name_node = &v;
      } else if (k == "ignore_case") {
        TRACEDOC_RETURN_IF_ERROR(boolean(v, at, &rule.ignore_case));
      } else if (k == "critical") {
        bool c = false;
        TRACEDOC_RETURN_IF_ERROR(boolean(v, at, &c));
        rule.critical = c;
      } else if (k == "bound") {
        std::string text;
        TRACEDOC_RETURN_IF_ERROR(string(v, at, &text));
        rule.bound = parse_bound(text);
        if (!rule.bound) return error(v, at, fmt::format("must be {}, not '{}'", kBoundValues, text));
      } else if (k == "peak") {
        std::string text;
        TRACEDOC_RETURN_IF_ERROR(string(v, at, &text));
        rule.peak = parse_peak(text);
        if (!rule.peak) return error(v, at, fmt::format("must be {}, not '{}'", kPeakValues, text));
      } else if (k == "color") {
        TRACEDOC_RETURN_IF_ERROR(color(v, at, &rule.rgb));
        has_color = true;
      } else if (k == "label") {
        TRACEDOC_RETURN_IF_ERROR(string(v, at, &rule.label));
      } else {
        return error(v, at,
                     "unknown key (expected category, name, ignore_case, critical, bound, peak, color or label)");
      }
    }
    if (!has_color) return error(node, where, "has no color");
    std::optional<NamePattern> re;
    const Status st = finish_rule(rule, &re);
    if (!st.ok()) return error(*name_node, where + ": name", st.message());
    out->rules.push_back(std::move(rule));
    out->regex.push_back(std::move(re));
    return Status::Ok();
  }

  Status read_defaults(const toml::node& node, FileScheme* out) const {
    const toml::table* t = node.as_table();
    if (!t) return error(node, "default", "must be a section [default] of category = colour");
    for (const auto& [key, v] : *t) {
      const std::string k(key.str());
      const std::string at = "default." + k;
      Category c;
      if (!parse_category(k, &c))
        return error(v, at, fmt::format("unknown category (expected {})", category_list(false)));
      Swatch s;
      if (const toml::table* inner = v.as_table()) {
        bool has_color = false;
        for (const auto& [ik, iv] : *inner) {
          const std::string name(ik.str());
          if (name == "color") {
            TRACEDOC_RETURN_IF_ERROR(color(iv, at + ".color", &s.rgb));
            has_color = true;
          } else if (name == "label") {
            TRACEDOC_RETURN_IF_ERROR(string(iv, at + ".label", &s.label));
          } else {
            return error(iv, at + "." + name, "unknown key (expected color or label)");
          }
        }
        if (!has_color) return error(v, at, "has no color");
      } else {
        TRACEDOC_RETURN_IF_ERROR(color(v, at, &s.rgb));
      }
      out->defaults[static_cast<size_t>(c)] = std::move(s);
    }
    return Status::Ok();
  }

  std::string path_;
};

// Reads the XML form; every message names the file, the line of the element and the attribute.
class XmlReader {
 public:
  XmlReader(const std::string& path, std::string_view text) : path_(path), text_(text) {}

  Status read(FileScheme* out) {
    const pugi::xml_parse_result parsed =
        doc_.load_buffer(text_.data(), text_.size(), pugi::parse_default, pugi::encoding_auto);
    if (!parsed) {
      return BadInput(fmt::format("{}:{}: malformed XML at byte {}: {}", path_, line_of(parsed.offset), parsed.offset,
                                  parsed.description()));
    }
    pugi::xml_node root;
    for (pugi::xml_node n : doc_.children()) {
      if (n.type() != pugi::node_element) continue;
      if (root)
        return error(n, "", fmt::format("a second root element <{}> (one <ColorPreferences> is expected)", n.name()));
      root = n;
    }
    if (!root) return BadInput(fmt::format("{}: no root element (expected <ColorPreferences>)", path_));
    if (lower(root.name()) != "colorpreferences") {
      return error(root, "", fmt::format("the root element is <{}>, expected <ColorPreferences>", root.name()));
    }
    for (pugi::xml_attribute a : root.attributes()) {
      const std::string where = fmt::format("<{}> {}", root.name(), a.name());
      if (lower(a.name()) != "preset") return error(root, where, "unknown attribute (expected preset)");
      out->preset = lower(trim(a.value()));
      if (const std::string problem = preset_problem(out->preset); !problem.empty()) return error(root, where, problem);
    }
    size_t rules = 0;
    for (pugi::xml_node el : root.children()) {
      if (el.type() == pugi::node_pcdata || el.type() == pugi::node_cdata) {
        return error(el, "", fmt::format("unexpected text '{}' in <{}>", trim(el.value()).substr(0, 40), root.name()));
      }
      if (el.type() != pugi::node_element) continue;  // comments, processing instructions
      const std::string kind = lower(el.name());
      if (kind == "rule" || kind == "color") {
        if (++rules > kMaxRules) return error(el, "", fmt::format("more than {} rules", kMaxRules));
        TRACEDOC_RETURN_IF_ERROR(read_rule(el, rules, out));
      } else if (kind == "default") {
        TRACEDOC_RETURN_IF_ERROR(read_default(el, out));
      } else {
        return error(el, "", fmt::format("unknown element <{}> (expected <Rule>, <Color> or <Default>)", el.name()));
      }
    }
    return Status::Ok();
  }

 private:
  size_t line_of(ptrdiff_t offset) const {
    if (offset < 0) return 0;
    const size_t end = std::min(static_cast<size_t>(offset), text_.size());
    return 1 + static_cast<size_t>(std::count(text_.begin(), text_.begin() + static_cast<ptrdiff_t>(end), '\n'));
  }

  Status error(pugi::xml_node at, const std::string& where, const std::string& what) const {
    const size_t line = line_of(at.offset_debug());
    const std::string place = line ? fmt::format("{}:{}", path_, line) : path_;
    if (where.empty()) return BadInput(fmt::format("{}: {}", place, what));
    return BadInput(fmt::format("{}: {}: {}", place, where, what));
  }

  Status color(pugi::xml_node el, const std::string& where, std::string_view value, uint32_t* out) const {
    const std::optional<uint32_t> c = parse_color(value);
    if (!c) return error(el, where, fmt::format("bad colour '{}' (expected {})", value, kColorForms));
    *out = *c;
    return Status::Ok();
  }

  Status no_children(pugi::xml_node el, const std::string& where) const {
    for (pugi::xml_node child : el.children()) {
      if (child.type() == pugi::node_element || child.type() == pugi::node_pcdata || child.type() == pugi::node_cdata) {
        return error(child, where, "takes attributes only, no content");
      }
    }
    return Status::Ok();
  }

  Status read_rule(pugi::xml_node el, size_t number, FileScheme* out) const {
    const std::string rule_where = fmt::format("rule {}", number);
    TRACEDOC_RETURN_IF_ERROR(no_children(el, rule_where));
    ColorRule rule;
    rule.categories = kAnyCategory;
    bool has_pattern = false, has_color = false;
    for (pugi::xml_attribute a : el.attributes()) {
      const std::string key = lower(a.name());
      const std::string where = fmt::format("{}: {}", rule_where, a.name());
      const std::string_view value = a.value();
      if (key == "category") {
        if (!parse_category_mask(value, &rule.categories)) {
          return error(
              el, where,
              fmt::format("unknown category '{}' (expected {}, several separated by ',')", value, category_list()));
        }
      } else if (key == "pattern" || key == "name" || key == "regex") {
        if (has_pattern)
          return error(el, where, "the pattern is given twice (pattern, name and regex are one attribute)");
        rule.pattern = value;
        has_pattern = true;
      } else if (key == "ignorecase" || key == "ignore_case") {
        if (!parse_bool(value, &rule.ignore_case))
          return error(el, where, fmt::format("must be true or false, not '{}'", value));
      } else if (key == "critical") {
        bool c = false;
        if (!parse_bool(value, &c)) return error(el, where, fmt::format("must be true or false, not '{}'", value));
        rule.critical = c;
      } else if (key == "bound") {
        rule.bound = parse_bound(value);
        if (!rule.bound) return error(el, where, fmt::format("must be {}, not '{}'", kBoundValues, value));
      } else if (key == "peak") {
        rule.peak = parse_peak(value);
        if (!rule.peak) return error(el, where, fmt::format("must be {}, not '{}'", kPeakValues, value));
      } else if (key == "color" || key == "value" || key == "argb") {
        if (has_color) return error(el, where, "the colour is given twice (color, value and argb are one attribute)");
        TRACEDOC_RETURN_IF_ERROR(color(el, where, value, &rule.rgb));
        has_color = true;
      } else if (key == "label") {
        rule.label = value;
      } else {
        return error(
            el, where,
            "unknown attribute (expected category, pattern, ignoreCase, critical, bound, peak, color or label)");
      }
    }
    if (!has_color) return error(el, rule_where, "has no color");
    std::optional<NamePattern> re;
    const Status st = finish_rule(rule, &re);
    if (!st.ok()) return error(el, rule_where + ": pattern", st.message());
    out->rules.push_back(std::move(rule));
    out->regex.push_back(std::move(re));
    return Status::Ok();
  }

  Status read_default(pugi::xml_node el, FileScheme* out) const {
    const std::string where = fmt::format("<{}>", el.name());
    TRACEDOC_RETURN_IF_ERROR(no_children(el, where));
    std::optional<Category> category;
    std::optional<uint32_t> rgb;
    Swatch s;
    for (pugi::xml_attribute a : el.attributes()) {
      const std::string key = lower(a.name());
      const std::string at = fmt::format("{} {}", where, a.name());
      if (key == "category") {
        Category c;
        if (!parse_category(a.value(), &c))
          return error(el, at, fmt::format("unknown category '{}' (expected {})", a.value(), category_list(false)));
        category = c;
      } else if (key == "color" || key == "value" || key == "argb") {
        if (rgb) return error(el, at, "the colour is given twice (color, value and argb are one attribute)");
        uint32_t v = 0;
        TRACEDOC_RETURN_IF_ERROR(color(el, at, a.value(), &v));
        rgb = v;
      } else if (key == "label") {
        s.label = a.value();
      } else {
        return error(el, at, "unknown attribute (expected category, color or label)");
      }
    }
    if (!category) return error(el, where, "has no category");
    if (!rgb) return error(el, where, "has no color");
    s.rgb = *rgb;
    out->defaults[static_cast<size_t>(*category)] = std::move(s);
    return Status::Ok();
  }

  std::string path_;
  std::string_view text_;
  pugi::xml_document doc_;
};

Result<std::string> read_text(const std::string& path) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) {
    return IoError(
        fmt::format("{}: no such file (a colour scheme is \"default\", \"critical\" or a TOML or XML file)", path));
  }
  if (fs::is_directory(st)) return IoError(fmt::format("{}: is a folder, not a colour scheme file", path));
  const uintmax_t size = fs::file_size(path, ec);
  if (!ec && size > kMaxFileBytes) {
    return BadInput(fmt::format("{}: {} bytes is too big for a colour scheme (a trace given by mistake?)", path, size));
  }
  return read_file(path, {.max_bytes = kMaxFileBytes, .what = "colour scheme (a trace given by mistake?)"});
}

// XML when the first character that is neither blank nor a UTF-8 byte order mark is '<'.
bool looks_like_xml(std::string_view text) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  text = trim(text);
  return !text.empty() && text.front() == '<';
}

}  // namespace

struct ColorScheme::Builder {
  static ColorScheme make(std::string name, std::array<Swatch, kCategoryCount> categories, std::vector<ColorRule> rules,
                          std::vector<std::optional<NamePattern>> regex) {
    ColorScheme s;
    s.name_ = std::move(name);
    s.palette_.assign(std::make_move_iterator(categories.begin()), std::make_move_iterator(categories.end()));
    std::map<std::pair<uint32_t, std::string>, uint16_t> shared;  // (colour, label) -> swatch
    for (const ColorRule& r : rules) {
      const auto [it, added] = shared.try_emplace({r.rgb, r.label}, static_cast<uint16_t>(s.palette_.size()));
      if (added) s.palette_.push_back({r.rgb, r.label});
      s.rule_swatch_.push_back(it->second);
    }
    s.rules_ = std::move(rules);
    s.compiled_ = std::make_shared<const Compiled>(Compiled{std::move(regex)});
    return s;
  }

  static std::array<Swatch, kCategoryCount> category_swatches(const ColorScheme& s) {
    std::array<Swatch, kCategoryCount> out;
    std::copy_n(s.palette_.begin(), kCategoryCount, out.begin());
    return out;
  }

  // Muted greys for whatever no rule of a preset picks out, so that its colours stand out.
  static std::array<Swatch, kCategoryCount> muted_categories() {
    return {{
        {0xa0a0a0, "other kernel"},
        {0xb4b4b4, "memory copy"},  // never drawn: rule 2 takes every copy and memset
        {0xb4b4b4, "memset"},
        {0xb8b4c0, "sync"},  // never drawn: rule 3 takes every sync
        {0xd0d0d0, "GPU annotation"},
        {0xc8c8c8, "other CUDA API"},
        {0xb0b7c3, "annotation range"},
        {0xcfcfcf, "other operator"},
        {0xbdbdbd, "other OS call"},
        {0xa8a8a8, "CUDA graph"},
    }};
  }

  static ColorScheme roofline() {
    const uint16_t kernel = category_bit(Category::kKernel);
    std::vector<ColorRule> rules = {
        {kernel, "", false, {}, 0x1f77b4, "memory-bound kernel (ncu)", KernelBound::kMemory},
        {kernel, "", false, {}, 0xd62728, "compute-bound kernel (ncu)", KernelBound::kCompute},
    };
    std::vector<std::optional<NamePattern>> regex(rules.size());
    return make("roofline", muted_categories(), std::move(rules), std::move(regex));
  }

  static ColorScheme peak() {
    const uint16_t ops = category_bit(Category::kOp) | category_bit(Category::kKernel);
    auto band = [&](PeakBand b, uint32_t rgb, std::string label) {
      ColorRule r{ops, "", false, {}, rgb, std::move(label)};
      r.peak = b;
      return r;
    };
    std::vector<ColorRule> rules = {
        band(PeakBand::kHigh, 0x1a9850, "60% of its roof or more"),
        band(PeakBand::kGood, 0x91cf60, "30-60% of its roof"),
        band(PeakBand::kFair, 0xfc8d59, "10-30% of its roof"),
        band(PeakBand::kLow, 0xd73027, "under 10% of its roof"),
    };
    std::vector<std::optional<NamePattern>> regex(rules.size());
    return make("peak", muted_categories(), std::move(rules), std::move(regex));
  }

  static ColorScheme critical() {
    std::array<Swatch, kCategoryCount> categories = muted_categories();
    const auto bit = category_bit;
    const auto rule = [](uint16_t categories, std::string pattern, bool icase, std::optional<bool> critical,
                         uint32_t rgb, std::string label) {
      return ColorRule{categories, std::move(pattern), icase, critical, rgb, std::move(label)};
    };
    const std::string compute = "gemm|conv|attn|attention|flash|cutlass|cublas|cudnn|xmma|matmul|wgmma|mma|sm[0-9]+_";
    std::vector<ColorRule> rules = {
        rule(bit(Category::kKernel), "", false, true, 0xd62728, "kernel on the critical path"),
        rule(bit(Category::kMemcpy) | bit(Category::kMemset), "", false, {}, 0xf1c232, "memory operation"),
        rule(bit(Category::kKernel), "[Mm]emcpy|[Mm]emset", false, {}, 0xf1c232, "memory operation"),
        rule(bit(Category::kSync), "", false, {}, 0x8e44ad, "sync wait"),
        rule(bit(Category::kApi), "Synchronize|StreamWaitEvent|EventQuery|StreamQuery", false, {}, 0x8e44ad,
             "sync wait"),
        rule(bit(Category::kOsCall), "pthread_cond_wait|pthread_mutex_lock|sem_wait|futex|poll|epoll_wait", false, {},
             0x8e44ad, "sync wait"),
        rule(bit(Category::kKernel), compute, true, {}, 0x2ca02c, "compute-heavy kernel"),
        rule(bit(Category::kOp), "aten::(mm|bmm|addmm|matmul|linear|conv.*|.*attention.*|baddbmm)", false, {}, 0x2ca02c,
             "compute-heavy operator"),
        rule(bit(Category::kKernel), "nccl|rccl", true, {}, 0x1f77b4, "communication"),
    };
    std::vector<ColorRule> kept;
    std::vector<std::optional<NamePattern>> regex;
    for (ColorRule& r : rules) {
      std::optional<NamePattern> re;
      // The patterns are fixed and tested; a failure (which cannot happen) only loses the rule.
      if (!finish_rule(r, &re).ok()) continue;
      kept.push_back(std::move(r));
      regex.push_back(std::move(re));
    }
    return make("critical", std::move(categories), std::move(kept), std::move(regex));
  }

  // The file's rules in front of its preset's; its [default] colours over the preset's.
  static ColorScheme from_file(const std::string& name, FileScheme file) {
    const ColorScheme base = file.preset == "critical"   ? critical_preset()
                             : file.preset == "roofline" ? roofline_preset()
                             : file.preset == "peak"     ? peak_preset()
                                                         : defaults();
    std::array<Swatch, kCategoryCount> categories = category_swatches(base);
    for (size_t c = 0; c < kCategoryCount; ++c) {
      if (!file.defaults[c]) continue;
      categories[c].rgb = file.defaults[c]->rgb;
      if (!file.defaults[c]->label.empty()) categories[c].label = file.defaults[c]->label;
    }
    std::vector<ColorRule> rules = std::move(file.rules);
    std::vector<std::optional<NamePattern>> regex = std::move(file.regex);
    rules.insert(rules.end(), base.rules_.begin(), base.rules_.end());
    if (base.compiled_) regex.insert(regex.end(), base.compiled_->regex.begin(), base.compiled_->regex.end());
    return make(name, std::move(categories), std::move(rules), std::move(regex));
  }
};

const char* category_name(Category c) {
  const size_t i = static_cast<size_t>(c);
  return i < kCategoryCount ? kNames[i] : "unknown";
}

const char* category_label(Category c) {
  const size_t i = static_cast<size_t>(c);
  return i < kCategoryCount ? kLabels[i] : "unknown";
}

bool parse_category(std::string_view text, Category* out) {
  const std::string t = lower(trim(text));
  for (size_t i = 0; i < kCategoryCount; ++i) {
    if (t == kNames[i]) return *out = static_cast<Category>(i), true;
  }
  if (t == "os_call") return *out = Category::kOsCall, true;
  return false;
}

bool parse_category_mask(std::string_view text, uint16_t* out) {
  uint16_t mask = 0;
  while (true) {
    const size_t sep = text.find_first_of(",|");
    const std::string_view part = trim(text.substr(0, sep));
    Category c;
    if (lower(part) == "any") {
      mask = kAnyCategory;
    } else if (parse_category(part, &c)) {
      mask |= category_bit(c);
    } else {
      return false;  // also an empty part: "kernel,,memcpy" or ""
    }
    if (sep == std::string_view::npos) break;
    text.remove_prefix(sep + 1);
  }
  *out = mask;
  return true;
}

ColorScheme::ColorScheme() : name_("default") {
  palette_.reserve(kCategoryCount);
  for (size_t i = 0; i < kCategoryCount; ++i) palette_.push_back({kDefaultColors[i], kLabels[i]});
}

ColorScheme ColorScheme::defaults() { return ColorScheme(); }

ColorScheme ColorScheme::critical_preset() {
  // Built once: compiling the patterns costs more than copying the scheme (which shares them).
  static const ColorScheme kPreset = Builder::critical();
  return kPreset;
}

ColorScheme ColorScheme::roofline_preset() {
  static const ColorScheme kPreset = Builder::roofline();
  return kPreset;
}

ColorScheme ColorScheme::peak_preset() {
  static const ColorScheme kPreset = Builder::peak();
  return kPreset;
}

Result<ColorScheme> ColorScheme::load(const std::string& name) {
  if (name == "peak") return peak_preset();
  if (name == "default") return defaults();
  if (name == "critical") return critical_preset();
  if (name == "roofline") return roofline_preset();
  Result<std::string> text = read_text(name);
  if (!text.ok()) return text.status();
  FileScheme file;
  if (looks_like_xml(*text)) {
    XmlReader reader(name, *text);
    TRACEDOC_RETURN_IF_ERROR(reader.read(&file));
  } else {
    Result<toml::table> root = parse_toml(*text, name);
    if (!root.ok()) return root.status();
    TRACEDOC_RETURN_IF_ERROR(TomlReader(name).read(*root, &file));
  }
  return Builder::from_file(name, std::move(file));
}

uint16_t ColorScheme::color_of(Category c, std::string_view name, bool critical, KernelBound bound,
                               PeakBand peak) const {
  const size_t ci = static_cast<size_t>(c);
  if (ci >= kCategoryCount) return 0;
  const uint16_t bit = category_bit(c);
  for (size_t i = 0; i < rules_.size(); ++i) {
    const ColorRule& r = rules_[i];
    if (!(r.categories & bit)) continue;
    if (r.critical && *r.critical != critical) continue;
    if (r.bound && (c != Category::kKernel || *r.bound != bound)) continue;
    if (r.peak && ((c != Category::kKernel && c != Category::kOp) || *r.peak != peak)) continue;
    if (!r.pattern.empty() && !compiled_->regex[i]->found_in(name)) continue;
    return rule_swatch_[i];
  }
  return static_cast<uint16_t>(ci);
}

bool ColorScheme::uses_critical_path() const {
  return std::any_of(rules_.begin(), rules_.end(), [](const ColorRule& r) { return r.critical.has_value(); });
}

bool ColorScheme::uses_kernel_bound() const {
  return std::any_of(rules_.begin(), rules_.end(), [](const ColorRule& r) { return r.bound.has_value(); });
}

bool ColorScheme::uses_peak_band() const {
  return std::any_of(rules_.begin(), rules_.end(), [](const ColorRule& r) { return r.peak.has_value(); });
}

std::string rgb_hex(uint32_t rgb) { return fmt::format("#{:06x}", rgb & 0xffffffu); }

}  // namespace tracedoc::view
