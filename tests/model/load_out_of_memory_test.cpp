// Model::load returns a Result: when the machine runs out of memory mid-load (forced here by capping a forked
// child's address space) it returns an Error that says what could not be allocated and what to change, and no
// std::bad_alloc escapes.
#include <gtest/gtest.h>

#include "address_space_cap.h"
#include "kernels/backend.h"
#include "model/model.h"
#include "test_paths.h"

namespace kairo::model {
namespace {

using kairo::testing::run_with_address_space_cap;

// Q4_0 matrices are repacked for the CPU kernels at load: fresh memory in 64 MiB chunks (core/bulk_memory.h).
const std::string kModel = kairo::testing::shared_path("models/synth-llama-gqa.Q4_0.gguf");

std::string load_outcome() {
  auto m = Model::load(kModel);
  return m.ok() ? std::string("loaded") : m.error().message;
}

TEST(LoadOutOfMemory, WeightsThatCannotBeRepackedAreAnErrorWithTheSizeAndWhatToChange) {
  if (!kairo::testing::kAddressSpaceCapWorks) GTEST_SKIP() << "sanitizers abort on a failed allocation";
  if (kernels::best_cpu_backend().pack_weights == nullptr) GTEST_SKIP() << "this CPU's kernels repack nothing";
  // Room for the mapped file and the metadata (a few MB), not for a 64 MiB chunk of repacked weights.
  const auto run = run_with_address_space_cap(24ull << 20, load_outcome);
  ASSERT_TRUE(run.ok()) << run.how();
  const std::string& msg = run.output;
  EXPECT_EQ(msg.rfind("out of memory while moving the weights to the device (the weights need ", 0), 0u) << msg;
  EXPECT_NE(msg.find("): cannot allocate 64.00 MiB while repacking the weights for cpu ("), std::string::npos) << msg;
  EXPECT_NE(msg.find("; this process may map at most "), std::string::npos) << msg;
  const std::string fix = "; pick a smaller quantization of the model (kairo quantize, e.g. Q4_K_M) or free memory "
                          "(kairo plan --model FILE predicts what fits)";
  EXPECT_EQ(msg.substr(msg.size() - std::min(msg.size(), fix.size())), fix) << msg;
}

TEST(LoadOutOfMemory, AnyCapEndsInAModelOrAnErrorNeverInACrash) {
  if (!kairo::testing::kAddressSpaceCapWorks) GTEST_SKIP() << "sanitizers abort on a failed allocation";
  // From too little to map the file to enough for everything: wherever the load runs out, it returns.
  bool loaded = false;
  for (uint64_t mib = 0; mib <= 192; mib += 8) {
    const auto run = run_with_address_space_cap(mib << 20, load_outcome);
    ASSERT_TRUE(run.ok()) << "cap +" << mib << " MiB: " << run.how();
    ASSERT_FALSE(run.output.empty());
    loaded |= run.output == "loaded";
  }
  EXPECT_TRUE(loaded) << "no cap was large enough to load the model: the sweep proves nothing";
}

}  // namespace
}  // namespace kairo::model
