// `kairo quantize IN OUT TYPE`: rewrites a GGUF model with its matrices quantized (see convert/quantize_model.h).
#include <cstdio>
#include <map>

#include "command_registry.h"
#include "convert/quantize_model.h"
#include "core/format.h"
#include "terminal/notes.h"
#include "terminal/progress_bar.h"

namespace kairo::tools {
namespace {

struct QuantizeArgs {
  std::string in, out, type;
  bool pure = false;
  bool allow_requantize = false;
  int threads = 0;
};

int run_quantize(const QuantizeArgs& a) {
  auto scheme = convert::parse_quant_scheme(a.type);
  if (!scheme.ok()) {
    std::fprintf(stderr, "error: %s\n", scheme.error().message.c_str());
    return 1;
  }
  convert::QuantizeOptions o;
  o.scheme = *scheme;
  o.pure = a.pure;
  o.allow_requantize = a.allow_requantize;
  ThreadPool pool(a.threads > 0 ? a.threads : ThreadPool::available_cores());
  ProgressBar bar("quantize tensors", 0, ProgressUnit::Items, progress_wanted(quiet()));
  auto progress = [&](const convert::QuantizedTensor& t, size_t i, size_t n) {
    bar.set_total(n);
    bar.update(i, t.name + " " + std::string(dtype_name(t.from)) + " -> " + std::string(dtype_name(t.to)));
  };
  auto report = convert::quantize_model(a.in, a.out, o, pool, progress);
  bar.finish();
  if (!report.ok()) {
    std::fprintf(stderr, "error: %s\n", report.error().message.c_str());
    return 1;
  }
  std::map<std::string, std::pair<int, uint64_t>> by_type;
  for (const auto& t : report->tensors) {
    auto& [count, bytes] = by_type[std::string(dtype_name(t.to))];
    ++count;
    bytes += t.n_bytes;
  }
  std::printf("wrote %s: %s, %s -> %s\n", a.out.c_str(), o.scheme.name.c_str(), human_bytes(report->in_bytes).c_str(),
              human_bytes(report->out_bytes).c_str());
  for (const auto& [name, cb] : by_type) {
    std::printf("  %-5s %4d tensors %s\n", name.c_str(), cb.first, human_bytes(cb.second).c_str());
  }
  return 0;
}

void setup_quantize(CLI::App& app) {
  auto a = std::make_shared<QuantizeArgs>();
  CLI::App* cmd = app.add_subcommand("quantize", "Convert a GGUF model's weights to another type (llama.cpp's rules)");
  cmd->add_option("in", a->in, "Input GGUF (F32/F16/BF16 weights)")->required();
  cmd->add_option("out", a->out, "Output GGUF")->required();
  cmd->add_option("type", a->type, "Target: " + convert::quant_scheme_names())->required();
  cmd->add_flag("--pure", a->pure, "Every matrix in the base type (no higher-precision output/attn_v/ffn_down)");
  cmd->add_flag("--allow-requantize", a->allow_requantize, "Accept already-quantized input (dequantized first)");
  cmd->add_option("--threads", a->threads, "Threads (0 = all available cores)")->check(CLI::Range(0, 1024));
  cmd->callback([a] { set_exit_code(run_quantize(*a)); });
}

}  // namespace

KAIRO_REGISTER_COMMAND(quantize, setup_quantize);

}  // namespace kairo::tools
