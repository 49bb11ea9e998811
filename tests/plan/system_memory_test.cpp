#include "plan/system_memory.h"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <string>

#include "address_space_cap.h"

namespace kairo::plan {
namespace {

TEST(SystemMemory, ParsesMemAvailable) {
  const std::string text = "MemTotal:       24000000 kB\nMemFree:        1000 kB\nMemAvailable:   23000000 kB\n";
  EXPECT_EQ(parse_mem_available(text).value(), 23000000ull * 1024);
  EXPECT_FALSE(parse_mem_available("MemTotal: 5 kB\n").ok());
  EXPECT_FALSE(parse_mem_available("MemAvailable: lots\n").ok());
  auto live = read_mem_available();
  ASSERT_TRUE(live.ok()) << live.error().message;
  EXPECT_GT(*live, 0u);
}

TEST(SystemMemory, ReadsCgroupLimitsAndTheirNoLimitSpellings) {
  EXPECT_EQ(parse_cgroup_limit("4294967296\n"), 4294967296ull);
  EXPECT_EQ(parse_cgroup_limit("max\n"), std::nullopt);                  // cgroup v2
  EXPECT_EQ(parse_cgroup_limit("9223372036854771712\n"), std::nullopt);  // cgroup v1's unlimited
  EXPECT_EQ(parse_cgroup_limit(""), std::nullopt);
  const std::string stat = "anon 100\nfile 900\ninactive_file 700\nactive_file 200\ntotal_inactive_file 650\n";
  EXPECT_EQ(parse_memory_stat(stat, "inactive_file"), 700u);
  EXPECT_EQ(parse_memory_stat(stat, "total_inactive_file"), 650u);
  EXPECT_EQ(parse_memory_stat(stat, "absent"), 0u);
}

TEST(SystemMemory, CgroupHeadroomCountsInactiveFileCacheAsFree) {
  const uint64_t gib = 1ull << 30;
  EXPECT_EQ(cgroup_headroom(4 * gib, 3 * gib, 2 * gib), 3 * gib);  // working set 1 GiB of a 4 GiB limit
  EXPECT_EQ(cgroup_headroom(4 * gib, 3 * gib, 0), 1 * gib);
  EXPECT_EQ(cgroup_headroom(4 * gib, 5 * gib, 0), 0u);             // over the limit: nothing, not a wrap-around
  EXPECT_EQ(cgroup_headroom(4 * gib, 1 * gib, 2 * gib), 4 * gib);  // more reclaimable than usage
}

TEST(SystemMemory, ParsesVmSize) {
  EXPECT_EQ(parse_vm_size("Name:\tkairo\nVmPeak:\t  9000 kB\nVmSize:\t  8000 kB\n"), 8000ull * 1024);
  EXPECT_EQ(parse_vm_size("Name:\tkairo\n"), std::nullopt);
}

// Under `ulimit -v` the plan must see the address space left, not the machine's free memory: a 24 GiB machine
// with a 512 MiB cap has 512 MiB. A mapping the caller says its plan counts again (the model's weights) comes back.
TEST(SystemMemory, UlimitVBoundsTheHeadroom) {
  if (!testing::kAddressSpaceCapWorks) GTEST_SKIP() << "RLIMIT_AS says nothing under sanitizers or qemu-user";
  const uint64_t cap = 512ull << 20, weights = 256ull << 20;
  const testing::CappedRun run = testing::run_with_address_space_cap(
      cap,
      [&] {
        auto h = read_memory_headroom();
        auto back = read_memory_headroom(weights);
        if (!h.ok() || !back.ok()) return std::string("error");
        return std::to_string(h->bytes) + " " + h->limited_by + "|" + std::to_string(back->bytes);
      },
      // Mapped before the cap, like a model loaded before the plan is made.
      [&] { ::mmap(nullptr, weights, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0); });
  ASSERT_TRUE(run.ok()) << run.how();
  const size_t bar = run.output.find('|');
  ASSERT_NE(bar, std::string::npos) << run.output;
  const uint64_t bytes = std::stoull(run.output);
  EXPECT_NE(run.output.find("ulimit -v"), std::string::npos) << run.output;
  EXPECT_LE(bytes, cap);
  EXPECT_GT(bytes, cap - (16ull << 20));  // the child's own few mappings since the cap, not more
  EXPECT_EQ(std::stoull(run.output.substr(bar + 1)), bytes + weights);
}

}  // namespace
}  // namespace kairo::plan
