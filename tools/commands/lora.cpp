// `kairo lora synth|merge`: LoRA adapter files in llama.cpp's GGUF format (docs/lora.md). Serving with adapters
// comes next; these make adapters for tests and benchmarks and bake one into a model.
#include <cstdio>
#include <map>
#include <optional>

#include "command_registry.h"
#include "convert/lora/merge_adapter.h"
#include "convert/lora/synth_adapter.h"
#include "core/format.h"
#include "terminal/notes.h"
#include "terminal/progress_bar.h"

namespace kairo::tools {
namespace {

struct LoraSynthArgs {
  std::string base, out;
  int rank = 16;
  std::optional<float> alpha;
  std::string targets;
  std::string type = "f16";
  uint64_t seed = 0;
  float strength = 0.1f;
  int max_rank = model::lora::kDefaultMaxRank;
};

std::string params_text(uint64_t n) {
  const double p = static_cast<double>(n);
  return p >= 1e6 ? strprintf("%.2f M", p * 1e-6) : strprintf("%.1f K", p * 1e-3);
}

int fail(const std::string& message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return 1;
}

int run_lora_synth(const LoraSynthArgs& a) {
  convert::AdapterSynthOptions o;
  o.rank = a.rank;
  o.alpha = a.alpha;
  o.seed = a.seed;
  o.strength = a.strength;
  o.max_rank = a.max_rank;
  const std::optional<DType> type = dtype_from_name(a.type);
  if (!type) return fail(strprintf("--type %s: use f32, f16, bf16 or q8_0", quote_for_error(a.type).c_str()));
  o.type = *type;
  if (!a.targets.empty()) {
    auto targets = convert::parse_lora_targets(a.targets);
    if (!targets.ok()) return fail(targets.error().message);
    o.targets = *targets;
  }
  auto report = convert::write_synth_adapter(a.base, a.out, o);
  if (!report.ok()) return fail(report.error().message);
  std::printf("wrote %s: rank %d, alpha %g, %zu tensors adapted, %s parameters, %s, seed %llu\n", a.out.c_str(),
              a.rank, report->alpha, report->adapted.size(), params_text(report->n_params).c_str(),
              human_bytes(report->n_bytes).c_str(), static_cast<unsigned long long>(a.seed));
  if (!report->f16_fallback.empty()) {
    std::printf("%zu tensors in F16: their rows (the rank, %d) do not split into Q8_0 blocks of 32\n",
                report->f16_fallback.size(), a.rank);
  }
  return 0;
}

struct MergeArgs {
  std::string base, adapter, out;
  float scale = 1.0f;
  int threads = 0;
  int max_rank = model::lora::kDefaultMaxRank;
};

int run_lora_merge(const MergeArgs& a) {
  convert::MergeOptions o;
  o.scale = a.scale;
  o.max_rank = a.max_rank;
  ThreadPool pool(a.threads > 0 ? a.threads : ThreadPool::available_cores());
  ProgressBar bar("merge tensors", 0, ProgressUnit::Items, progress_wanted(quiet()));
  auto progress = [&](const std::string& name, size_t i, size_t n) {
    bar.set_total(n);
    bar.update(i, name);
  };
  auto report = convert::merge_adapter(a.base, a.adapter, a.out, o, pool, progress);
  bar.finish();
  if (!report.ok()) return fail(report.error().message);
  std::map<std::string, int> by_type;
  for (const auto& t : report->merged) ++by_type[std::string(dtype_name(t.type))];
  std::string types;
  for (const auto& [name, count] : by_type) types += strprintf("%s%d %s", types.empty() ? "" : ", ", count, name.c_str());
  std::printf("wrote %s: %zu tensors merged (%s) at scale %g, %zu copied, %s\n", a.out.c_str(),
              report->merged.size(), types.empty() ? "none" : types.c_str(), a.scale, report->n_copied,
              human_bytes(report->out_bytes).c_str());
  for (const std::string& name : report->ignored) {
    std::printf("ignored %s (norm vectors in adapters are not applied, as in llama.cpp)\n", name.c_str());
  }
  return 0;
}

void setup_lora_synth(CLI::App& parent) {
  auto a = std::make_shared<LoraSynthArgs>();
  CLI::App* cmd = parent.add_subcommand("synth", "Write a random LoRA adapter for a base model (tests, benchmarks)");
  cmd->add_option("base", a->base, "Base model GGUF")->required();
  cmd->add_option("out", a->out, "Output adapter GGUF")->required();
  cmd->add_option("--rank", a->rank, "LoRA rank")->required()->check(CLI::Range(1, 1 << 16));
  cmd->add_option("--alpha", a->alpha, "adapter.lora.alpha (default: the rank, so the scale is 1)");
  cmd->add_option("--targets", a->targets, "Projections, comma-separated: q,k,v,o,gate,up,down (default: all the "
                                           "base has)");
  cmd->add_option("--type", a->type, "Tensor type: f32, f16, bf16 or q8_0")->capture_default_str();
  cmd->add_option("--seed", a->seed, "Random seed (same seed, same bytes)")->capture_default_str();
  cmd->add_option("--strength", a->strength, "Std of the delta's elements relative to the base weights' RMS")
      ->capture_default_str();
  cmd->add_option("--max-lora-rank", a->max_rank, "Largest rank accepted")->capture_default_str();
  cmd->callback([a] { set_exit_code(run_lora_synth(*a)); });
}

void setup_lora_merge(CLI::App& parent) {
  auto a = std::make_shared<MergeArgs>();
  CLI::App* cmd = parent.add_subcommand("merge", "Bake a LoRA adapter into a model: W + scale * B*A, same types");
  cmd->add_option("base", a->base, "Base model GGUF")->required();
  cmd->add_option("adapter", a->adapter, "LoRA adapter GGUF (llama.cpp format)")->required();
  cmd->add_option("out", a->out, "Output model GGUF")->required();
  cmd->add_option("--scale", a->scale, "User scale (times alpha / rank)")->capture_default_str();
  cmd->add_option("--threads", a->threads, "Threads (0 = all available cores)")->check(CLI::Range(0, 1024));
  cmd->add_option("--max-lora-rank", a->max_rank, "Largest rank accepted")->capture_default_str();
  cmd->callback([a] { set_exit_code(run_lora_merge(*a)); });
}

void setup_lora(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("lora", "LoRA adapters (llama.cpp GGUF format): synth, merge");
  cmd->require_subcommand(1);
  setup_lora_synth(*cmd);
  setup_lora_merge(*cmd);
}

}  // namespace

KAIRO_REGISTER_COMMAND(lora, setup_lora);

}  // namespace kairo::tools
