// Device discovery, memory, transfers and steps.
#include <numeric>

#include "vk_test_util.h"

namespace kairo::kernels::vulkan {
namespace {

using testing::from_device;
using testing::test_device;
using testing::to_device;

TEST(VulkanDevices, ListsLavapipeWithItsLimits) {
  auto devices = list_devices();
  ASSERT_TRUE(devices.ok()) << devices.error().message;
  ASSERT_FALSE(devices->empty());
  bool found = false;
  for (const VulkanDeviceInfo& d : *devices) {
    EXPECT_FALSE(d.name.empty());
    EXPECT_FALSE(d.heaps.empty());
    EXPECT_GT(d.subgroup_size, 0u);
    if (d.name.find("llvmpipe") == std::string::npos) continue;
    found = true;
    EXPECT_EQ(d.type, "cpu");
    EXPECT_EQ(d.max_storage_buffer_range, 134217728u);
    EXPECT_EQ(d.subgroup_size, 8u);
    EXPECT_GE(d.max_memory_allocation_size, d.max_storage_buffer_range);
    EXPECT_FALSE(d.cooperative_matrix);
    EXPECT_EQ(d.api_version.rfind("1.", 0), 0u) << d.api_version;
  }
  EXPECT_TRUE(found) << "CI installs mesa-vulkan-drivers (lavapipe)";
}

TEST(VulkanDevices, OpenFailsCleanlyOnAMissingIndex) {
  auto d = open_device(1000);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error().message.find("no device 1000"), std::string::npos) << d.error().message;
}

TEST(VulkanMemory, AllocationOverTheLimitIsAnError) {
  KAIRO_VK_DEVICE(d);
  EXPECT_EQ(d->kind(), DeviceKind::Vulkan);
  EXPECT_FALSE(d->host_memory());
  EXPECT_NE(d->name().find("vulkan:0"), std::string::npos);
  const uint64_t limit = d->max_allocation_bytes();
  auto s = d->allocate(limit + 1, "a huge KV layer");
  ASSERT_FALSE(s.ok());
  const std::string& m = s.error().message;
  EXPECT_NE(m.find("a huge KV layer"), std::string::npos) << m;
  EXPECT_NE(m.find(std::to_string(limit + 1)), std::string::npos) << m;
  EXPECT_NE(m.find(std::to_string(limit)), std::string::npos) << m;
}

TEST(VulkanMemory, AllocateIsZeroedAndRoundTrips) {
  KAIRO_VK_DEVICE(d);
  auto s = d->allocate(4096, "test");
  ASSERT_TRUE(s.ok());
  std::vector<uint32_t> host = from_device<uint32_t>(*d, *s, 1024);
  EXPECT_TRUE(std::all_of(host.begin(), host.end(), [](uint32_t v) { return v == 0; }));
  std::iota(host.begin(), host.end(), 7u);
  d->upload(s->at(64), host.data(), 100 * 4);
  std::vector<uint32_t> back = from_device<uint32_t>(*d, s->at(64), 100);
  EXPECT_TRUE(std::equal(back.begin(), back.end(), host.begin()));
  // copy between buffers and at unaligned (4-byte) offsets, recorded then waited for by download
  auto t = d->allocate(4096, "test");
  ASSERT_TRUE(t.ok());
  d->copy(s->at(64), t->at(12), 100 * 4);
  back = from_device<uint32_t>(*d, t->at(12), 100);
  EXPECT_TRUE(std::equal(back.begin(), back.end(), host.begin()));
  const DeviceMemoryInfo mi = d->memory_info();
  EXPECT_GT(mi.total_bytes, 0u);
  d->free(*s);
  d->free(*t);
}

TEST(VulkanMemory, StagedInputsAndUploadsInsideAStepKeepTheirOrder) {
  KAIRO_VK_DEVICE(d);
  ThreadPool pool(1);
  DeviceSpan y = testing::zeros(*d, 64 * 4);
  std::vector<float> a(64, 1.0f), b(64, 2.0f);
  d->begin_step(pool);
  DeviceSpan sa = d->stage(a.data(), a.size() * 4);
  DeviceSpan sb = d->stage(b.data(), b.size() * 4);
  d->add(y, sa, 64);  // y = 1
  d->add(y, sb, 64);  // y = 3
  std::vector<float> c(64, 10.0f);
  d->upload(y.at(32 * 4), c.data(), 32 * 4);  // after the adds: y[32..] = 10
  d->add(y, sa, 64);                           // y = 4 | 11
  // Many tiny dispatches: the descriptor pool runs dry mid-step and is recycled.
  for (int i = 0; i < 3000; ++i) d->add(y.at(4 * (i % 2)), sa, 1);
  d->end_step();
  std::vector<float> got = from_device<float>(*d, y, 64);
  EXPECT_EQ(got[0], 4.0f + 1500);
  EXPECT_EQ(got[1], 4.0f + 1500);
  EXPECT_EQ(got[2], 4.0f);
  EXPECT_EQ(got[40], 11.0f);
  d->free(y);
}

TEST(VulkanKv, Q8_0IsRefusedWithAMessage) {
  EXPECT_TRUE(check_kv_dtype(DType::F16).ok());
  EXPECT_TRUE(check_kv_dtype(DType::BF16).ok());
  EXPECT_TRUE(check_kv_dtype(DType::F32).ok());
  const Status s = check_kv_dtype(DType::Q8_0);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("Q8_0"), std::string::npos) << s.error().message;
  EXPECT_NE(s.error().message.find("--kv-dtype f16"), std::string::npos) << s.error().message;
}

// Checked at model load, before any weight is copied: a head the shader cannot hold is refused, not truncated.
TEST(VulkanKv, AttentionShapesTheShaderCannotRunAreRefused) {
  KAIRO_VK_DEVICE(d);
  EXPECT_TRUE(d->check_attention_shape(32, 8, 128).ok());
  EXPECT_TRUE(d->check_attention_shape(8, 4, 256).ok());
  const Status wide = d->check_attention_shape(8, 4, 512);
  ASSERT_FALSE(wide.ok());
  EXPECT_NE(wide.error().message.find("head size 512"), std::string::npos) << wide.error().message;
  EXPECT_NE(wide.error().message.find("--device cpu"), std::string::npos) << wide.error().message;
  const Status groups = d->check_attention_shape(12, 5, 64);
  ASSERT_FALSE(groups.ok());
  EXPECT_NE(groups.error().message.find("12 heads and 5 KV heads"), std::string::npos) << groups.error().message;
}

TEST(VulkanBandwidth, MeasuresAPositiveReadRate) {
  KAIRO_VK_DEVICE(d);
  auto gbs = measure_read_bandwidth(*d, 64ull << 20);
  ASSERT_TRUE(gbs.ok()) << gbs.error().message;
  EXPECT_GT(*gbs, 0.1);
  EXPECT_LT(*gbs, 1e5);
  std::printf("vulkan read bandwidth: %.1f GB/s\n", *gbs);
}

}  // namespace
}  // namespace kairo::kernels::vulkan
