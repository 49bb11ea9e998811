// The newer architectures against llama.cpp's references (../shared/reference/synth-<arch>.<type>.<prompt>.json,
// which carry log-probabilities): the first steps' log-probabilities, centred, by cosine (F16 >= 0.999, Q8_0 / Q4_0
// >= 0.995, ../shared/README.md) and the argmax wherever the reference's margin is clear.
//  - llama3: llama-3 rope scaling (the rope_freqs tensor: each pair's angle divided by its frequency factor);
//    without the factors these runs are off by 0.3 to 4.5 in log-probability (cosine 0.90 on the long prompt).
//  - qwen3: per-head RMS norm of Q and K before rope, head size from attention.key_length (8 heads of 64 on a
//    256-wide model: Q is 512 wide), NEOX rope, tied output.
//  - qwen3moe: qwen3's attention with a mixture-of-experts feed-forward (8 experts, top-2, renormalised).
//  - phi3: fused attn_qkv and gate‖up ffn_up (split at load), NEOX rope.
//  - gemma2: embedding scale, GELU, post-norms, attention and final soft-capping, every other layer windowed (8).
//  - gemma3: Q/K norm, five windowed layers (window 8, rope base 1e4) per global one (rope base 1e6, linear x8).
//    Both prompts are longer than the window, so a wrong window shows.
//  - gpt-oss: attention sinks, Q/K/V/output biases, every other layer windowed (8), YaRN x32, experts with router and
//    expert biases and the clamped SwiGLU; its MXFP4_MOE file holds the experts in MXFP4 (E2M1 codes, E8M0 scales).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/generator.h"
#include "model/model.h"
#include "test_paths.h"

namespace kairo::engine {
namespace {

using nlohmann::json;

// ln softmax(logits), centred (mean 0), so a constant offset between two runs does not count.
std::vector<double> centred_logprobs(const std::vector<float>& logits) {
  double max = -INFINITY;
  for (float v : logits) max = std::max<double>(max, v);
  double sum = 0;
  for (float v : logits) sum += std::exp(v - max);
  std::vector<double> out(logits.size());
  double mean = 0;
  for (size_t i = 0; i < logits.size(); ++i) mean += out[i] = logits[i] - max - std::log(sum);
  mean /= static_cast<double>(out.size());
  for (double& v : out) v -= mean;
  return out;
}

std::vector<double> centred(const std::vector<double>& v) {
  double mean = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  std::vector<double> out(v);
  for (double& x : out) x -= mean;
  return out;
}

double cosine(const std::vector<double>& a, const std::vector<double>& b) {
  double dot = 0, na = 0, nb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return dot / std::sqrt(na * nb);
}

struct Case {
  std::string arch;
  std::string type;
  std::string prompt;
  double min_cosine;
};

class LogprobReference : public ::testing::TestWithParam<Case> {};

TEST_P(LogprobReference, LogprobsMatchLlamaCpp) {
  const Case& c = GetParam();
  const std::string name = "synth-" + c.arch + "." + c.type;
  std::ifstream in(kairo::testing::shared_path("reference/" + name + "." + c.prompt + ".json"));
  ASSERT_TRUE(in.good());
  const json ref = json::parse(in);
  auto model = model::Model::load(kairo::testing::shared_path("models/" + name + ".gguf"));
  ASSERT_TRUE(model.ok()) << model.error().message;
  if (c.arch == "llama3") ASSERT_NE((*model)->weights().rope_freq_factors, nullptr) << "rope_freqs must be bound";
  const json& steps = ref["steps"];
  int n_logprob_steps = 0;
  for (const auto& s : steps) n_logprob_steps += s.contains("logprobs") ? 1 : 0;
  ASSERT_GT(n_logprob_steps, 0);
  GenerateOptions opts;
  opts.max_tokens = n_logprob_steps;
  opts.sampling.temperature = 0;
  opts.n_logit_steps = n_logprob_steps;
  ThreadPool pool(2);
  auto r = generate(**model, ref["prompt_tokens"].get<std::vector<int32_t>>(), opts, pool);
  ASSERT_TRUE(r.ok()) << r.error().message;
  for (int i = 0; i < n_logprob_steps; ++i) {
    const std::vector<double> want = centred(steps[i]["logprobs"].get<std::vector<double>>());
    const std::vector<double> got = centred_logprobs(r->step_logits[static_cast<size_t>(i)]);
    const double cos = cosine(got, want);
    std::printf("%s %s step %d: centred logprob cosine %.6f\n", name.c_str(), c.prompt.c_str(), i, cos);
    EXPECT_GE(cos, c.min_cosine) << "step " << i;
    if (steps[i]["margin"].get<double>() > 0.05) {
      const auto top = std::max_element(got.begin(), got.end()) - got.begin();
      EXPECT_EQ(top, steps[i]["token"].get<int32_t>()) << "step " << i;
    }
    if (r->tokens[static_cast<size_t>(i)] != steps[i]["token"].get<int32_t>()) break;  // paths diverged
  }
}

INSTANTIATE_TEST_SUITE_P(
    Files, LogprobReference,
    ::testing::Values(Case{"llama3", "f16", "lighthouse", 0.999}, Case{"llama3", "f16", "garden", 0.999},
                      Case{"llama3", "f16", "long", 0.999}, Case{"llama3", "Q8_0", "lighthouse", 0.995},
                      Case{"llama3", "Q8_0", "long", 0.995}, Case{"llama3", "Q4_0", "lighthouse", 0.995},
                      Case{"llama3", "Q4_0", "long", 0.995}, Case{"qwen3", "f16", "lighthouse", 0.999},
                      Case{"qwen3", "f16", "garden", 0.999}, Case{"qwen3", "Q8_0", "lighthouse", 0.995},
                      Case{"qwen3", "Q8_0", "garden", 0.995}, Case{"qwen3", "Q4_0", "lighthouse", 0.995},
                      Case{"qwen3", "Q4_0", "garden", 0.995}, Case{"qwen3moe", "f16", "lighthouse", 0.999},
                      Case{"qwen3moe", "f16", "garden", 0.999}, Case{"qwen3moe", "Q8_0", "lighthouse", 0.995},
                      Case{"qwen3moe", "Q8_0", "garden", 0.995}, Case{"qwen3moe", "Q4_0", "lighthouse", 0.995},
                      Case{"qwen3moe", "Q4_0", "garden", 0.995}, Case{"phi3", "f16", "lighthouse", 0.999},
                      Case{"phi3", "f16", "garden", 0.999}, Case{"phi3", "Q8_0", "lighthouse", 0.995},
                      Case{"phi3", "Q8_0", "garden", 0.995}, Case{"phi3", "Q4_0", "lighthouse", 0.995},
                      Case{"phi3", "Q4_0", "garden", 0.995}, Case{"gemma2", "f16", "lighthouse", 0.999},
                      Case{"gemma2", "f16", "garden", 0.999}, Case{"gemma2", "Q8_0", "lighthouse", 0.995},
                      Case{"gemma2", "Q8_0", "garden", 0.995}, Case{"gemma2", "Q4_0", "lighthouse", 0.995},
                      Case{"gemma2", "Q4_0", "garden", 0.995}, Case{"gemma3", "f16", "lighthouse", 0.999},
                      Case{"gemma3", "f16", "garden", 0.999}, Case{"gemma3", "Q8_0", "lighthouse", 0.995},
                      Case{"gemma3", "Q8_0", "garden", 0.995}, Case{"gemma3", "Q4_0", "lighthouse", 0.995},
                      Case{"gemma3", "Q4_0", "garden", 0.995}, Case{"gpt-oss", "f16", "lighthouse", 0.999},
                      Case{"gpt-oss", "f16", "garden", 0.999}, Case{"gpt-oss", "Q8_0", "lighthouse", 0.995},
                      Case{"gpt-oss", "Q8_0", "garden", 0.995}, Case{"gpt-oss", "Q4_0", "lighthouse", 0.995},
                      Case{"gpt-oss", "Q4_0", "garden", 0.995}, Case{"gpt-oss", "MXFP4_MOE", "lighthouse", 0.995},
                      Case{"gpt-oss", "MXFP4_MOE", "garden", 0.995}),
    [](const auto& info) {
      std::string n = info.param.arch + "_" + info.param.type + "_" + info.param.prompt;
      for (char& ch : n) if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return n;
    });

}  // namespace
}  // namespace kairo::engine
