// The model end to end on a non-CPU device against llama.cpp's reference outputs, with the tolerances of the
// CPU path (tests/engine/reference_outputs_test.cpp, ../shared/README.md), and the engine's batch-invariance
// contract on the device: a temperature-0 request's tokens do not depend on the batch or on prompt chunking.
//
// The device is KAIRO_TEST_DEVICE (default: vulkan, Mesa's lavapipe in CI; scripts/gpu-check.sh sets cuda).
#if defined(KAIRO_HAS_VULKAN) || defined(KAIRO_TEST_CUDA_MODEL)
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>

#include "devices/open_device.h"
#include "engine/engine.h"
#include "engine/generator.h"
#include "model/model.h"
#include "test_paths.h"
#include "tokenizer/tokenizer.h"

namespace kairo::devices {
namespace {

using nlohmann::json;

std::shared_ptr<kernels::Device> device_under_test() {
  static std::shared_ptr<kernels::Device> dev = [] {
    const char* spec = std::getenv("KAIRO_TEST_DEVICE");
    auto d = open_device(spec != nullptr && *spec != '\0' ? spec : "vulkan");
    EXPECT_TRUE(d.ok()) << d.error().message;
    return d.ok() ? *d : nullptr;
  }();
  return dev;
}

json load_json(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "missing reference file " << path;
  return json::parse(in);
}

double cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double dot = 0, na = 0, nb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    dot += double(a[i]) * b[i];
    na += double(a[i]) * a[i];
    nb += double(b[i]) * b[i];
  }
  return dot / std::sqrt(na * nb);
}

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(double(a[i]) - b[i]));
  return m;
}

// Index of the largest value and its lead over the runner-up.
std::pair<int, double> top1(const std::vector<float>& v) {
  int best = 0;
  for (size_t i = 1; i < v.size(); ++i) if (v[i] > v[best]) best = static_cast<int>(i);
  double second = -INFINITY;
  for (size_t i = 0; i < v.size(); ++i) if (static_cast<int>(i) != best) second = std::max<double>(second, v[i]);
  return {best, v[best] - second};
}

struct ReferenceRun {
  engine::GenerateResult result;
  json ref;
};

ReferenceRun run_reference(const std::string& model_path, const std::string& ref_path) {
  ReferenceRun out;
  out.ref = load_json(ref_path);
  auto model = model::Model::load(model_path, device_under_test());
  EXPECT_TRUE(model.ok()) << (model.ok() ? "" : model.error().message);
  if (!model.ok()) return out;
  int n_logit_steps = 0;
  for (const auto& s : out.ref["steps"]) n_logit_steps += s.contains("logits") ? 1 : 0;
  engine::GenerateOptions opts;
  opts.max_tokens = static_cast<int>(out.ref["steps"].size());
  opts.sampling.temperature = 0;
  opts.n_logit_steps = n_logit_steps;
  opts.prefill_chunk = 7;  // several prefill steps, so the chunked path and the stored KV are both exercised
  ThreadPool pool(1);
  auto result = engine::generate(**model, out.ref["prompt_tokens"].get<std::vector<int32_t>>(), opts, pool);
  EXPECT_TRUE(result.ok()) << (result.ok() ? "" : result.error().message);
  if (result.ok()) out.result = std::move(result).value();
  return out;
}

class DeviceAidreams : public ::testing::TestWithParam<std::string> {};

// The F32 model: every greedy token, and the logits within 1e-3 (the reference's F16 KV cache rounding).
TEST_P(DeviceAidreams, GreedyTokensAndLogitsMatchLlamaCpp) {
  const ReferenceRun out =
      run_reference(kairo::testing::demo_model_path(),
                    kairo::testing::source_path("tests/data/reference/aidreams260K." + GetParam() + ".json"));
  const json& steps = out.ref["steps"];
  ASSERT_EQ(out.result.tokens.size(), steps.size());
  for (size_t i = 0; i < steps.size(); ++i) EXPECT_EQ(out.result.tokens[i], steps[i]["token"].get<int32_t>()) << i;
  for (size_t i = 0; i < out.result.step_logits.size(); ++i) {
    const double d = max_abs_diff(out.result.step_logits[i], steps[i]["logits"].get<std::vector<float>>());
    std::printf("device aidreams %s step %zu: max |diff| %.6f\n", GetParam().c_str(), i, d);
    EXPECT_LT(d, 1e-3) << "step " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Prompts, DeviceAidreams, ::testing::Values("i-dream", "the-machine"));

struct SynthCase {
  std::string name;
  double min_cosine;
};

class DeviceSynth : public ::testing::TestWithParam<SynthCase> {};

// Quantized and F16 files: the logit vectors' cosine and the argmax where the reference's margin is clear, while
// the greedy path follows the reference's.
TEST_P(DeviceSynth, LogitsMatchLlamaCpp) {
  const SynthCase& sc = GetParam();
  const ReferenceRun out = run_reference(kairo::testing::shared_path("models/" + sc.name + ".gguf"),
                                         kairo::testing::shared_path("reference/" + sc.name + ".i-dream.json"));
  const json& steps = out.ref["steps"];
  ASSERT_FALSE(out.result.step_logits.empty());
  for (size_t i = 0; i < out.result.step_logits.size(); ++i) {
    const auto ref = steps[i]["logits"].get<std::vector<float>>();
    const double c = cosine(out.result.step_logits[i], ref);
    std::printf("device %s step %zu: cosine %.6f\n", sc.name.c_str(), i, c);
    EXPECT_GE(c, sc.min_cosine) << "step " << i;
    const auto [want, margin] = top1(ref);
    if (margin > 0.05) EXPECT_EQ(top1(out.result.step_logits[i]).first, want) << "step " << i;
    if (out.result.tokens[i] != steps[i]["token"].get<int32_t>()) break;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Models, DeviceSynth,
    ::testing::Values(SynthCase{"synth-llama-gqa.f16", 0.999}, SynthCase{"synth-llama-gqa.Q8_0", 0.999},
                      SynthCase{"synth-llama-gqa.Q4_0", 0.995}, SynthCase{"synth-llama-gqa.Q4_K_M", 0.995},
                      SynthCase{"synth-llama-gqa.Q6_K", 0.995}, SynthCase{"synth-qwen2.f16", 0.999},
                      SynthCase{"synth-qwen2.Q8_0", 0.999}, SynthCase{"synth-qwen2.Q4_0", 0.995},
                      SynthCase{"synth-qwen2.Q4_K_M", 0.995}, SynthCase{"synth-qwen2.Q6_K", 0.995}),
    [](const auto& info) {
      std::string n = info.param.name;
      for (char& ch : n) if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return n;
    });

// The newer architectures on the device, centred log-probabilities of the first steps: llama-3 rope scaling
// (rope_freqs) on the 304-token prompt, qwen3's per-head Q/K norm.
class DeviceLogprobs : public ::testing::TestWithParam<std::pair<std::string, std::string>> {};

TEST_P(DeviceLogprobs, MatchLlamaCpp) {
  const auto& [name, prompt] = GetParam();
  const json ref = load_json(kairo::testing::shared_path("reference/" + name + "." + prompt + ".json"));
  auto model = model::Model::load(kairo::testing::shared_path("models/" + name + ".gguf"), device_under_test());
  ASSERT_TRUE(model.ok()) << model.error().message;
  engine::GenerateOptions opts;
  opts.max_tokens = 4;
  opts.sampling.temperature = 0;
  opts.n_logit_steps = 4;
  ThreadPool pool(1);
  auto r = engine::generate(**model, ref["prompt_tokens"].get<std::vector<int32_t>>(), opts, pool);
  ASSERT_TRUE(r.ok()) << r.error().message;
  auto centre = [](std::vector<double> v) {
    double mean = 0;
    for (double x : v) mean += x;
    for (double& x : v) x -= mean / static_cast<double>(v.size());
    return v;
  };
  for (int i = 0; i < 4; ++i) {
    const auto& logits = r->step_logits[static_cast<size_t>(i)];
    double max = -INFINITY, sum = 0;
    for (float v : logits) max = std::max<double>(max, v);
    for (float v : logits) sum += std::exp(v - max);
    std::vector<double> got(logits.size());
    for (size_t k = 0; k < logits.size(); ++k) got[k] = logits[k] - max - std::log(sum);
    const std::vector<double> a = centre(got), b = centre(ref["steps"][i]["logprobs"].get<std::vector<double>>());
    double dot = 0, na = 0, nb = 0;
    for (size_t k = 0; k < a.size(); ++k) {
      dot += a[k] * b[k];
      na += a[k] * a[k];
      nb += b[k] * b[k];
    }
    const double cos = dot / std::sqrt(na * nb);
    std::printf("device %s %s step %d: centred logprob cosine %.6f\n", name.c_str(), prompt.c_str(), i, cos);
    EXPECT_GE(cos, 0.999) << "step " << i;
    if (r->tokens[static_cast<size_t>(i)] != ref["steps"][i]["token"].get<int32_t>()) break;
  }
}

INSTANTIATE_TEST_SUITE_P(Archs, DeviceLogprobs,
                         ::testing::Values(std::make_pair("synth-llama3.f16", "long"),
                                           std::make_pair("synth-qwen3.f16", "lighthouse"),
                                           std::make_pair("synth-qwen3.Q8_0", "garden"),
                                           std::make_pair("synth-qwen3moe.f16", "lighthouse"),
                                           std::make_pair("synth-qwen3moe.Q8_0", "garden"),
                                           std::make_pair("synth-phi3.Q8_0", "lighthouse"),
                                           std::make_pair("synth-gemma2.f16", "lighthouse"),
                                           std::make_pair("synth-gemma3.f16", "garden"),
                                           std::make_pair("synth-gemma3.Q8_0", "lighthouse"),
                                           std::make_pair("synth-gpt-oss.f16", "garden"),
                                           std::make_pair("synth-gpt-oss.Q8_0", "lighthouse"),
                                           std::make_pair("synth-gpt-oss.MXFP4_MOE", "garden")),
                         [](const auto& info) {
                           std::string n = info.param.first + "_" + info.param.second;
                           for (char& ch : n) if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

// ---- the engine on the device ----

struct Collected {
  std::vector<int32_t> tokens;
  bool finished = false;
};

std::vector<Collected> run_engine(model::Model& model, const tokenizer::Tokenizer& tok, engine::EngineConfig cfg,
                                  const std::vector<engine::Request>& reqs, bool one_by_one) {
  auto e = engine::Engine::create(model, tok, cfg);
  EXPECT_TRUE(e.ok()) << e.error().message;
  if (!e.ok()) return {};
  std::vector<Collected> out(reqs.size());
  std::mutex mutex;
  std::condition_variable done;
  size_t n_done = 0;
  auto submit = [&](size_t i) {
    auto r = (*e)->submit(reqs[i], [&, i](const engine::RequestOutput& o) {
      std::lock_guard<std::mutex> lock(mutex);
      for (const auto& t : o.tokens) out[i].tokens.push_back(t.token);
      if (o.finished) {
        out[i].finished = true;
        ++n_done;
        done.notify_all();
      }
    });
    EXPECT_TRUE(std::holds_alternative<engine::RequestId>(r));
  };
  auto wait_for = [&](size_t n) {
    std::unique_lock<std::mutex> lock(mutex);
    done.wait(lock, [&] { return n_done >= n; });
  };
  for (size_t i = 0; i < reqs.size(); ++i) {
    submit(i);
    if (one_by_one) wait_for(i + 1);
  }
  wait_for(reqs.size());
  return out;
}

TEST(DeviceEngine, BatchedAndChunkedOutputsEqualRunningEachAlone) {
  auto model = model::Model::load(kairo::testing::shared_path("models/synth-llama-gqa.Q8_0.gguf"), device_under_test());
  ASSERT_TRUE(model.ok()) << model.error().message;
  auto tok = tokenizer::Tokenizer::from_gguf((*model)->file());
  ASSERT_TRUE(tok.ok()) << tok.error().message;
  std::mt19937 rng(99);
  std::vector<engine::Request> reqs;
  for (int len : {1, 5, 16, 17, 40, 90, 130, 3}) {
    engine::Request r;
    r.prompt_tokens.push_back(1);
    for (int k = 1; k < len; ++k) r.prompt_tokens.push_back(3 + static_cast<int>(rng() % 500));
    r.sampling.temperature = 0;
    r.stop.max_tokens = 5;
    r.stop.ignore_eos = true;
    reqs.push_back(r);
  }
  engine::EngineConfig alone_cfg;
  alone_cfg.enable_prefix_caching = false;
  alone_cfg.n_threads = 1;
  alone_cfg.scheduler.max_num_seqs = 8;
  const auto alone = run_engine(**model, **tok, alone_cfg, reqs, /*one_by_one=*/true);
  engine::EngineConfig batched_cfg = alone_cfg;
  const auto batched = run_engine(**model, **tok, batched_cfg, reqs, false);
  engine::EngineConfig chunked_cfg = alone_cfg;
  chunked_cfg.scheduler.max_num_batched_tokens = 7;
  chunked_cfg.scheduler.long_prefill_threshold = 7;
  const auto chunked = run_engine(**model, **tok, chunked_cfg, reqs, false);
  ASSERT_EQ(alone.size(), reqs.size());
  for (size_t i = 0; i < reqs.size(); ++i) {
    EXPECT_TRUE(alone[i].finished && batched[i].finished && chunked[i].finished);
    EXPECT_EQ(alone[i].tokens.size(), 5u);
    EXPECT_EQ(batched[i].tokens, alone[i].tokens) << "request " << i;
    EXPECT_EQ(chunked[i].tokens, alone[i].tokens) << "request " << i;
  }
}

// gemma3's sliding-window layers on their own block pool (blocks behind the window freed): the same tokens as
// keeping every layer's whole context, batched and in 7-token prefill chunks, on the device.
TEST(DeviceEngine, SlidingWindowGroupKeepsTheOutputsOfKeepingEverything) {
  auto model = model::Model::load(kairo::testing::shared_path("models/synth-gemma3.Q8_0.gguf"), device_under_test());
  ASSERT_TRUE(model.ok()) << model.error().message;
  auto tok = tokenizer::Tokenizer::from_gguf((*model)->file());
  ASSERT_TRUE(tok.ok()) << tok.error().message;
  std::mt19937 rng(5);
  std::vector<engine::Request> reqs;
  for (int len : {3, 30, 70}) {  // window 8: up to 11 windows with the generated tokens
    engine::Request r;
    r.prompt_tokens.push_back(1);
    for (int k = 1; k < len; ++k) r.prompt_tokens.push_back(3 + static_cast<int>(rng() % 250));
    r.sampling.temperature = 0;
    r.stop.max_tokens = 16;
    r.stop.ignore_eos = true;
    reqs.push_back(r);
  }
  engine::EngineConfig kept;
  kept.block_size = 4;
  kept.max_model_len = 128;
  kept.n_threads = 1;
  kept.scheduler.max_num_seqs = 4;
  kept.keep_windowed_kv = true;
  const auto want = run_engine(**model, **tok, kept, reqs, /*one_by_one=*/true);
  engine::EngineConfig windowed = kept;
  windowed.keep_windowed_kv = false;
  windowed.scheduler.max_num_batched_tokens = 7;
  windowed.scheduler.long_prefill_threshold = 7;
  const auto got = run_engine(**model, **tok, windowed, reqs, false);
  ASSERT_EQ(got.size(), reqs.size());
  for (size_t i = 0; i < reqs.size(); ++i) {
    EXPECT_EQ(want[i].tokens.size(), 16u);
    EXPECT_EQ(got[i].tokens, want[i].tokens) << "request " << i;
  }
}

// One step's logits do not depend on the other sequences of the step, bit for bit (a stronger check than tokens).
// qwen3moe: B's tokens activate other experts, so A's rows are gathered out of a larger step.
class DeviceBatchInvariance : public ::testing::TestWithParam<const char*> {};

TEST_P(DeviceBatchInvariance, LogitsOfASequenceAreBitIdenticalAloneAndInABatch) {
  auto model = model::Model::load(kairo::testing::shared_path(GetParam()), device_under_test());
  ASSERT_TRUE(model.ok()) << model.error().message;
  const model::ModelConfig& c = (*model)->config();
  ThreadPool pool(1);
  auto kv = model::KvStorage::create((*model)->shared_device(), c, 12, 16, DType::F16);
  ASSERT_TRUE(kv.ok()) << kv.error().message;
  // Sequence A (blocks 0-2) alone, 20 prompt tokens; then A again together with sequence B (blocks 3-5), 33 tokens.
  auto fill = [](model::Batch& b, int seq, int block0, int n, int32_t first_token) {
    for (int p = 0; p < n; ++p) {
      b.token_ids.push_back(first_token + p);
      b.positions.push_back(p);
      b.seq_idx.push_back(seq);
      b.slot_mapping.push_back(static_cast<int64_t>(block0) * 16 + p);
    }
    b.logits_rows.push_back(static_cast<int32_t>(b.token_ids.size()) - 1);
  };
  model::Batch alone;
  fill(alone, 0, 0, 20, 7);
  alone.block_tables = {0, 1, 2};
  alone.max_blocks_per_seq = 3;
  std::vector<float> alone_logits;
  model::StepBuffers buffers((*model)->shared_device());
  (*model)->forward(alone, *kv, buffers, alone_logits, pool);
  model::Batch both;
  fill(both, 0, 6, 20, 7);
  fill(both, 1, 9, 33, 100);
  both.block_tables = {6, 7, 8, 9, 10, 11};
  both.max_blocks_per_seq = 3;
  std::vector<float> both_logits;
  (*model)->forward(both, *kv, buffers, both_logits, pool);
  ASSERT_EQ(both_logits.size(), 2u * c.n_vocab);
  for (int i = 0; i < c.n_vocab; ++i) ASSERT_EQ(alone_logits[i], both_logits[i]) << "vocab " << i;
}

INSTANTIATE_TEST_SUITE_P(Files, DeviceBatchInvariance,
                         ::testing::Values("models/synth-qwen2.Q4_K_M.gguf", "models/synth-qwen3moe.Q4_0.gguf",
                                           "models/synth-gemma3.Q4_0.gguf"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& ch : n) if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

}  // namespace
}  // namespace kairo::devices
#endif
