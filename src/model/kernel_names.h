// Kernel name forms shared by the readers and the trace generator.
#pragma once

#include <string_view>

namespace tracedoc {

// nsys's shortName for a demangled kernel name: the function's own name without namespace, return
// type, template arguments or parameters ("void at::native::foo<4>(int)" -> "foo"); a view into
// `demangled`, empty when nothing is left.
std::string_view short_kernel_name(std::string_view demangled);

}  // namespace tracedoc
