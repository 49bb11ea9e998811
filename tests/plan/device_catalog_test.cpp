// GPUs as their drivers name them, matched to the catalog's datasheet entries.
#include "plan/device_catalog.h"

#include <gtest/gtest.h>

namespace kairo::plan {
namespace {

constexpr uint64_t kGiB = 1ull << 30;

std::string match(const std::string& name, uint64_t bytes) {
  const Result<DeviceSpec> d = match_gpu(name, bytes);
  return d.ok() ? d->name : "error: " + d.error().message;
}

TEST(MatchGpu, DriverNamesFindTheirDatasheetEntry) {
  EXPECT_EQ(match("NVIDIA H100 80GB HBM3", 80 * kGiB), "h100-sxm");
  EXPECT_EQ(match("NVIDIA H100 PCIe", 80 * kGiB), "h100-pcie");
  EXPECT_EQ(match("NVIDIA H200", 141 * kGiB), "h200");
  EXPECT_EQ(match("NVIDIA A100-SXM4-40GB", 40 * kGiB), "a100-40gb");
  EXPECT_EQ(match("NVIDIA A100 80GB PCIe", 80 * kGiB), "a100-80gb");
  EXPECT_EQ(match("NVIDIA GeForce RTX 4090", 24 * kGiB), "rtx-4090");
  EXPECT_EQ(match("AMD Instinct MI300X", 192 * kGiB), "mi300x");
}

TEST(MatchGpu, UnknownGpuIsAnErrorNamingIt) {
  EXPECT_EQ(match("NVIDIA T4", 16 * kGiB), "error: no catalog entry for \"NVIDIA T4\"");
}

}  // namespace
}  // namespace kairo::plan
