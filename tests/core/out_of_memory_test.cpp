// OutOfMemory: a std::bad_alloc that says how much was asked for and what for, and allocate_bulk throwing it when
// the system has no memory (forced by capping a forked child's address space).
#include "core/out_of_memory.h"

#include <gtest/gtest.h>

#include "address_space_cap.h"
#include "core/bulk_memory.h"

namespace kairo {
namespace {

TEST(OutOfMemory, SaysHowMuchAndWhatFor) {
  EXPECT_STREQ(OutOfMemory(96ull << 20, "CPU kernel scratch").what(),
               "cannot allocate 96.00 MiB of CPU kernel scratch");
  EXPECT_STREQ(OutOfMemory(512, nullptr).what(), "cannot allocate 512 B");
  EXPECT_EQ(OutOfMemory(3ull << 30, nullptr).bytes(), 3ull << 30);
  try {
    throw OutOfMemory(1536, "a test");
  } catch (const std::bad_alloc& e) {  // caught where a plain std::bad_alloc is
    EXPECT_EQ(describe_allocation_failure(e), "cannot allocate 1.50 KiB of a test");
  }
  EXPECT_EQ(describe_allocation_failure(std::bad_alloc()), "an allocation failed");
}

TEST(OutOfMemory, AllocateBulkThrowsItWithTheSizeItCouldNotMap) {
  if (!testing::kAddressSpaceCapWorks) GTEST_SKIP() << "sanitizers abort on a failed allocation";
  const auto run = testing::run_with_address_space_cap(8ull << 20, [] {
    std::string out;
    try {
      allocate_bulk(size_t{100} << 20);
      out = "allocated";
    } catch (const OutOfMemory& e) {
      out = e.what();
    }
    return out + " | " + address_space_limit_note();
  });
  ASSERT_TRUE(run.ok()) << run.how();
  EXPECT_EQ(run.output.rfind("cannot allocate 100.00 MiB | ; this process may map at most ", 0), 0u) << run.output;
  EXPECT_EQ(run.output.substr(run.output.size() - 12), " (ulimit -v)") << run.output;
}

}  // namespace
}  // namespace kairo
