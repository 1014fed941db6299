// UTF-8 validity. Names come from traces and may hold any bytes (tracedoc keeps them as they are);
// every output is valid UTF-8: JSON and HTML escape what they must, and all text passes through
// replace_invalid_utf8 on its way out (report/writers.h), so a CSV or terminal table never carries
// a byte sequence a consumer may reject.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace tracedoc {

// Length of the valid UTF-8 sequence starting at s[i] (1 for ASCII, 2-4), or 0 when the bytes there
// are not one (overlong forms, surrogates and code points above U+10FFFF included).
size_t utf8_sequence_length(std::string_view s, size_t i);

bool is_valid_utf8(std::string_view s);

// `s` with each byte that starts no valid sequence replaced by U+FFFD.
std::string replace_invalid_utf8(std::string_view s);

}  // namespace tracedoc
