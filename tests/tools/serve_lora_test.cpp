// `kairo serve --lora` refusals at startup: more adapters than --max-loras, and a file the loader refuses (its message,
// naming the file). Serving with adapters is tested over HTTP in tests/server/lora_*_test.cpp and end to end with the
// openai client in tests/e2e/openai_e2e.test.mjs.
#include <gtest/gtest.h>

#include "run_command.h"

namespace kairo {
namespace {

using testing::run_kairo;

const std::string kDemo = std::string(KAIRO_SOURCE_DIR) + "/models/aidreams260K.gguf";

TEST(ServeLora, MoreAdaptersThanMaxLorasAreRefused) {
  auto r = run_kairo("serve --port 0 --model " + kDemo + " --lora a=" + kDemo + " --lora b=" + kDemo +
                     " --max-loras 1");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("error: --lora gives 2 adapters but --max-loras is 1; raise --max-loras"), std::string::npos)
      << r.err;
}

TEST(ServeLora, AFileThatIsNoAdapterIsRefusedWithTheLoadersMessage) {
  auto r = run_kairo("serve --port 0 --model " + kDemo + " --lora a=" + kDemo);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(kDemo + ": general.type is missing: this is not a LoRA adapter file"), std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace kairo
