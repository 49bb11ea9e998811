// `kairo synth [PRESET] OUT.gguf --type T`: writes a random-weight model of a real model's shape (see convert/synth.h).
#include <unistd.h>

#include <cstdio>
#include <optional>

#include "command_registry.h"
#include "convert/synth.h"
#include "core/format.h"
#include "model/arch/arch.h"
#include "plan/model_presets.h"
#include "terminal/notes.h"
#include "terminal/progress_bar.h"

namespace kairo::tools {
namespace {

struct SynthArgs {
  std::vector<std::string> positional;  // [PRESET] OUT.gguf
  std::string type = "F16";
  uint64_t seed = 0;
  std::string tokenizer_from = "models/aidreams260K.gguf";
  bool pure = false;
  int threads = 0;
  float init_std = 0.02f;
  // Shape overrides (or the whole shape, without a preset).
  std::optional<std::string> arch;
  std::optional<int> dim, layers, heads, kv_heads, head_dim, ffn, vocab, context;
  std::optional<int> experts, experts_used, expert_ffn, sliding_window;
  std::optional<float> rope_base, rms_eps;
  std::optional<bool> tied;
  std::string pooling = "none";
};

std::string preset_names() {
  std::string out;
  for (const auto& p : plan::model_presets()) out += (out.empty() ? "" : ", ") + p.name;
  return out;
}

Result<convert::SynthOptions> make_options(const SynthArgs& a) {
  convert::SynthOptions o;
  model::ModelConfig& c = o.config;
  if (a.positional.size() == 2) {
    KAIRO_TRY_ASSIGN(const plan::ModelPreset preset, plan::find_preset(a.positional[0]));
    o.preset = preset.name;
    c = preset.config;
  } else {
    if (!a.dim || !a.layers || !a.heads || !a.ffn || !a.vocab) {
      return Error{strprintf("give a preset (%s) or the whole shape: --dim, --layers, --heads, --ffn and --vocab "
                             "(optional: --arch, --kv-heads, --head-dim, --context, --rope-base, --tied, --experts, "
                             "--experts-used, --expert-ffn, --sliding-window)",
                             preset_names().c_str())};
    }
    c.arch = "llama";
    c.context_length = 2048;
    c.rope.freq_base = 10000.0f;
  }
  if (a.arch) c.arch = *a.arch;
  if (a.dim) c.dim = *a.dim;
  if (a.layers) c.n_layers = *a.layers;
  if (a.heads) c.n_heads = *a.heads;
  if (a.ffn) c.ffn_dim = *a.ffn;
  if (a.vocab) c.n_vocab = *a.vocab;
  if (a.context) c.context_length = *a.context;
  if (a.rope_base) c.rope.freq_base = *a.rope_base;
  if (a.rms_eps) c.rms_eps = *a.rms_eps;
  if (a.tied) c.tied_embeddings = *a.tied;
  c.n_kv_heads = a.kv_heads ? *a.kv_heads : (a.positional.size() == 2 && !a.heads ? c.n_kv_heads : c.n_heads);
  if (a.head_dim) {
    c.head_dim = *a.head_dim;
  } else if (a.dim || a.heads || a.positional.size() == 1) {
    c.head_dim = c.n_heads > 0 ? c.dim / c.n_heads : 0;
  }
  if (a.experts) c.n_experts = *a.experts;
  if (a.experts_used) c.n_experts_used = *a.experts_used;
  if (a.expert_ffn) c.expert_ffn_dim = *a.expert_ffn;
  c.rope.n_rot = c.head_dim;
  model::apply_arch_traits(c);
  if (a.sliding_window) c.sliding_window = *a.sliding_window;
  if (a.pooling == "mean") c.pooling = model::Pooling::Mean;
  if (a.pooling == "cls") c.pooling = model::Pooling::Cls;
  if (a.pooling == "last") c.pooling = model::Pooling::Last;
  KAIRO_TRY_ASSIGN(o.scheme, convert::parse_quant_scheme(a.type));
  o.pure = a.pure;
  o.seed = a.seed;
  o.init_std = a.init_std;
  if (a.tokenizer_from != "none") {
    if (::access(a.tokenizer_from.c_str(), R_OK) != 0) {
      return Error{strprintf("tokenizer source %s cannot be read; pass --tokenizer-from FILE.gguf (any GGUF with a "
                             "tokenizer), or --tokenizer-from none",
                             quote_for_error(a.tokenizer_from).c_str())};
    }
    o.tokenizer_path = a.tokenizer_from;
  }
  return o;
}

int run_synth(const SynthArgs& a) {
  auto options = make_options(a);
  if (!options.ok()) {
    std::fprintf(stderr, "error: %s\n", options.error().message.c_str());
    return 1;
  }
  const std::string& out = a.positional.back();
  ThreadPool pool(a.threads > 0 ? a.threads : ThreadPool::available_cores());
  ProgressBar bar("synth tensors", 0, ProgressUnit::Items, progress_wanted(quiet()));
  auto progress = [&](const std::string& name, DType type, size_t i, size_t n) {
    bar.set_total(n);
    bar.update(i, name + " " + std::string(dtype_name(type)));
  };
  auto report = convert::write_synth_model(*options, out, pool, progress);
  bar.finish();
  if (!report.ok()) {
    std::fprintf(stderr, "error: %s\n", report.error().message.c_str());
    return 1;
  }
  const model::ModelConfig& c = options->config;
  const double params = static_cast<double>(report->n_params);
  const std::string n_params = params >= 1e9 ? strprintf("%.2f B", params * 1e-9) : strprintf("%.2f M", params * 1e-6);
  std::printf("wrote %s: %s, %s, %s parameters, %s, seed %llu\n", out.c_str(),
              options->preset.empty() ? c.arch.c_str() : options->preset.c_str(), options->scheme.name.c_str(),
              n_params.c_str(), human_bytes(report->n_bytes).c_str(),
              static_cast<unsigned long long>(options->seed));
  if (report->n_tokenizer_tokens > 0) {
    std::printf("vocab %d: tokenizer from %s (%d tokens", report->n_vocab, options->tokenizer_path.c_str(),
                report->n_tokenizer_tokens);
    if (report->n_dummy_tokens > 0) std::printf(" + %d unused <dummy_N> tokens", report->n_dummy_tokens);
    std::printf(")\n");
  } else {
    std::printf("vocab %d, no tokenizer\n", report->n_vocab);
  }
  return 0;
}

void setup_synth(CLI::App& app) {
  auto a = std::make_shared<SynthArgs>();
  CLI::App* cmd = app.add_subcommand(
      "synth", "Write a random-weight GGUF of a real model's shape (for benchmarks): kairo synth PRESET OUT.gguf");
  cmd->add_option("args", a->positional, "[PRESET] OUT.gguf; presets: " + preset_names())->required()->expected(1, 2);
  cmd->add_option("--type", a->type, "Weight type: " + convert::quant_scheme_names())->capture_default_str();
  cmd->add_option("--seed", a->seed, "Random seed (same seed, same bytes)")->capture_default_str();
  cmd->add_option("--tokenizer-from", a->tokenizer_from,
                  "GGUF whose tokenizer is copied (padded with unused tokens up to the vocab size), or 'none'")
      ->capture_default_str();
  cmd->add_flag("--pure", a->pure, "Every matrix in the base type (no llama.cpp mix rules)");
  cmd->add_option("--threads", a->threads, "Threads (0 = all available cores)")->check(CLI::Range(0, 1024));
  cmd->add_option("--init-std", a->init_std, "Standard deviation of the weights")->capture_default_str();
  cmd->add_option("--arch", a->arch, "Architecture: llama, qwen2, qwen3, qwen3moe, phi3, gemma2, gemma3 or gpt-oss");
  cmd->add_option("--dim", a->dim, "Embedding width")->check(CLI::Range(1, 1 << 16));
  cmd->add_option("--layers", a->layers, "Transformer blocks")->check(CLI::Range(1, 1024));
  cmd->add_option("--heads", a->heads, "Attention heads")->check(CLI::Range(1, 1024));
  cmd->add_option("--kv-heads", a->kv_heads, "KV heads (GQA); default: --heads")->check(CLI::Range(1, 1024));
  cmd->add_option("--head-dim", a->head_dim, "Head size; default: dim / heads")->check(CLI::Range(2, 1024));
  cmd->add_option("--ffn", a->ffn, "Feed-forward width")->check(CLI::Range(1, 1 << 18));
  cmd->add_option("--vocab", a->vocab, "Vocabulary size (at least the tokenizer's)")->check(CLI::Range(1, 1 << 22));
  cmd->add_option("--context", a->context, "Context length")->check(CLI::Range(1, 1 << 24));
  cmd->add_option("--rope-base", a->rope_base, "RoPE frequency base");
  cmd->add_option("--rms-eps", a->rms_eps, "RMSNorm epsilon");
  cmd->add_option("--tied", a->tied, "Tied embeddings (true/false): no output.weight");
  cmd->add_option("--experts", a->experts, "Mixture of experts: experts per layer")->check(CLI::Range(1, 1024));
  cmd->add_option("--experts-used", a->experts_used, "Mixture of experts: experts each token uses")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--expert-ffn", a->expert_ffn, "Mixture of experts: one expert's feed-forward width")
      ->check(CLI::Range(1, 1 << 18));
  cmd->add_option("--pooling", a->pooling,
                  "An embedding model's pooling (<arch>.pooling_type): none, mean, cls or last; served by "
                  "POST /v1/embeddings")
      ->check(CLI::IsMember({"none", "mean", "cls", "last"}))
      ->capture_default_str();
  cmd->add_option("--sliding-window", a->sliding_window, "Positions the windowed layers attend to (gemma)")
      ->check(CLI::Range(1, 1 << 24));
  cmd->callback([a] { set_exit_code(run_synth(*a)); });
}

}  // namespace

KAIRO_REGISTER_COMMAND(synth, setup_synth);

}  // namespace kairo::tools
