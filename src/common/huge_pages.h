// Huge pages for the large columns and buffers a read fills: a table of millions of rows faulted in
// 4 KiB at a time spends a tenth of the run in the kernel's page-fault path (zeroing included), a
// 2 MiB huge page takes one fault where 512 small ones did.
#pragma once

#include <cstddef>
#include <vector>

namespace tracedoc {

// Asks the kernel (madvise MADV_HUGEPAGE) to back the whole 2 MiB pages inside [data, data+bytes)
// with huge pages; buffers under 4 MiB are left as they are. A hint: nothing changes where the
// kernel does not support it.
void advise_huge_pages(const void* data, size_t bytes);

// Room for n values in `values`, advised before anything touches the new memory.
template <typename T>
void reserve_on_huge_pages(std::vector<T>& values, size_t n) {
  values.reserve(n);
  advise_huge_pages(values.data(), values.capacity() * sizeof(T));
}

}  // namespace tracedoc
