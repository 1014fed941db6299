// Regular expressions over event names (--filter-name, check budgets' [[kernel]] names, colour
// scheme rules, rank numbers in file names), matched by RE2: in time linear in the name and with
// no recursion per character. libstdc++'s std::regex recurses once per character of the subject,
// so a kernel name of 30,000 characters overflowed the stack under `.*`; names come from traces and
// traces are untrusted.
//
// The syntax is RE2's: what ECMAScript offers except
// backreferences and lookaround, which need backtracking. A pattern that uses them is refused with
// RE2's reason, never matched differently.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"

namespace re2 {
class RE2;
}

namespace tracedoc {

class NamePattern {
 public:
  struct Options {
    bool ignore_case = false;
  };
  // Compiles `pattern`; an invalid one is a UsageError "bad regular expression 'P': why".
  static Result<NamePattern> compile(std::string_view pattern, Options options);
  static Result<NamePattern> compile(std::string_view pattern) { return compile(pattern, Options{}); }

  // Whether the pattern matches somewhere in `name` (std::regex_search semantics).
  bool found_in(std::string_view name) const;
  // Like found_in; on a match, the text of capturing group 1 (empty if the pattern has none).
  bool found_in(std::string_view name, std::string* group1) const;
  const std::string& pattern() const { return pattern_; }

 private:
  NamePattern() = default;
  std::shared_ptr<const re2::RE2> re_;  // immutable once compiled; RE2 matches from many threads
  std::string pattern_;
};

}  // namespace tracedoc
