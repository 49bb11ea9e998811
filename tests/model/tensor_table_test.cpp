// The tensor table (model/tensor_table.h) is the one list binding and the planner read: for every family's synth
// file it must name exactly the file's tensors with their shapes (the optional rope factor tensors aside), and its
// entries must be well-formed: layer tensors under their layer's prefix, fused parts that add up to the rows, expert
// stacks with one matrix per expert, and no output matrix when the embedding is tied.
#include "model/tensor_table.h"

#include <gtest/gtest.h>

#include <map>

#include "gguf/gguf_file.h"
#include "test_paths.h"

namespace kairo::model {
namespace {

class TensorTableTest : public ::testing::TestWithParam<const char*> {};

TEST_P(TensorTableTest, NamesExactlyTheFilesTensorsWithWellFormedEntries) {
  auto f = gguf::File::open(kairo::testing::shared_path(std::string("models/") + GetParam()));
  ASSERT_TRUE(f.ok()) << f.error().message;
  auto c = read_config(*f);
  ASSERT_TRUE(c.ok()) << c.error().message;
  std::map<std::string, std::vector<int64_t>> in_file, in_table;
  for (const auto& t : f->tensors())
    if (t.name.rfind("rope_", 0) != 0) in_file[t.name] = t.dims;
  bool has_output = false;
  for (const TensorEntry& e : model_tensors(*c)) {
    EXPECT_TRUE(in_table.emplace(e.name, e.dims).second) << "listed twice: " << e.name;
    if (e.layer >= 0) EXPECT_EQ(e.name.rfind("blk." + std::to_string(e.layer) + ".", 0), 0u) << e.name;
    if (e.form == TensorForm::Fused) {
      int64_t rows = 0;
      for (int64_t r : e.parts) rows += r;
      EXPECT_EQ(rows, e.dims[1]) << e.name;
    }
    if (e.form == TensorForm::Stack) EXPECT_EQ(e.dims.size() == 3 ? e.dims[2] : -1, c->n_experts) << e.name;
    if (e.form == TensorForm::F32) EXPECT_FALSE(e.written_f32) << e.name;
    has_output = has_output || e.slot == TensorSlot::Output;
  }
  EXPECT_EQ(in_table, in_file);
  EXPECT_EQ(has_output, !c->tied_embeddings);
}

INSTANTIATE_TEST_SUITE_P(Families, TensorTableTest,
                         ::testing::Values("synth-llama-gqa.Q8_0.gguf", "synth-qwen2.Q8_0.gguf",
                                           "synth-qwen3.Q8_0.gguf", "synth-qwen3moe.Q8_0.gguf",
                                           "synth-phi3.Q8_0.gguf", "synth-gemma2.Q8_0.gguf",
                                           "synth-gemma3.Q8_0.gguf", "synth-gpt-oss.Q8_0.gguf",
                                           "synth-llama3.Q8_0.gguf"));

}  // namespace
}  // namespace kairo::model
