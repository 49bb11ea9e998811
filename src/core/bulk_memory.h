#pragma once
// Memory for large, long-lived, read-mostly data such as model weights that the CPU backend repacks at load time.
// Decode streams every weight once per token, so with 4 KiB pages it also walks the page tables for every 4 KiB it
// reads; on this project's machine kind a plain streaming read is ~10 % slower that way than from 2 MiB pages.
// Allocations are therefore carved (64-byte aligned) out of 2 MiB-aligned chunks that Linux is asked to back with
// transparent huge pages (madvise MADV_HUGEPAGE; a no-op where THP is disabled). A chunk is freed when the last
// allocation in it is released; small weights share chunks, so rounding costs at most one partial chunk at a time.
#include <cstddef>
#include <memory>

namespace kairo {

// `bytes` of uninitialized memory, 64-byte aligned; throws OutOfMemory (a std::bad_alloc with the size) when the
// system has none.
std::shared_ptr<void> allocate_bulk(size_t bytes);

}  // namespace kairo
