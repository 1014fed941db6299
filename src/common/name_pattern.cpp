#include "common/name_pattern.h"

#include <re2/re2.h>

namespace tracedoc {

Result<NamePattern> NamePattern::compile(std::string_view pattern, Options options) {
  re2::RE2::Options o;
  o.set_log_errors(false);  // the error is returned, not printed on stderr
  o.set_case_sensitive(!options.ignore_case);
  // Patterns and names are UTF-8 where valid; invalid bytes in a name simply do not match a
  // multi-byte class, as with std::regex.
  o.set_encoding(re2::RE2::Options::EncodingUTF8);
  auto re = std::make_shared<re2::RE2>(re2::StringPiece(pattern.data(), pattern.size()), o);
  if (!re->ok()) {
    return UsageError("bad regular expression '" + std::string(pattern) + "': " + re->error());
  }
  NamePattern p;
  p.re_ = std::move(re);
  p.pattern_ = std::string(pattern);
  return p;
}

bool NamePattern::found_in(std::string_view name) const {
  return re2::RE2::PartialMatch(re2::StringPiece(name.data(), name.size()), *re_);
}

bool NamePattern::found_in(std::string_view name, std::string* group1) const {
  if (re_->NumberOfCapturingGroups() < 1) {
    group1->clear();
    return found_in(name);
  }
  return re2::RE2::PartialMatch(re2::StringPiece(name.data(), name.size()), *re_, group1);
}

}  // namespace tracedoc
