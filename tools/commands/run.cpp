// `kairo run --model M --prompt P [--device D]`: generate a continuation. With --json prints
// {"prompt_tokens":[...],"tokens":[...],"text":"..."} (+ "logits" for the first --logits K steps).
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "command_registry.h"
#include "device_option.h"
#include "sampling_options.h"
#include "core/format.h"
#include "core/thread_pool.h"
#include "engine/generator.h"
#include "grammar/byte_grammar.h"
#include "grammar/json_schema.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"

namespace kairo::tools {
namespace {

struct RunArgs {
  std::string model = "models/aidreams260K.gguf";
  std::string prompt;
  int max_tokens = 128;
  int ctx_size = 0;  // 0 = the model's trained context
  SamplingFlags sampling;
  int threads = 0;
  bool json = false;
  int logits_steps = 0;
  bool no_bos = false;
  bool stats = false;
  bool exact_numerics = false;
  std::string device = "cpu";
  std::string json_schema_file;
  std::string grammar_file;
};

// The output grammar of --json-schema / --grammar, compiled; null when neither is given.
Result<std::shared_ptr<grammar::StackArena>> output_grammar(const RunArgs& args) {
  if (args.json_schema_file.empty() && args.grammar_file.empty()) return std::shared_ptr<grammar::StackArena>();
  const std::string& path = args.json_schema_file.empty() ? args.grammar_file : args.json_schema_file;
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{strprintf("%s: cannot be read", path.c_str())};
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string gbnf = text;
  if (!args.json_schema_file.empty()) {
    auto g = grammar::json_schema_to_gbnf(std::string_view(text));
    if (!g.ok()) return Error{path + ": " + g.error().message};
    gbnf = std::move(*g);
  }
  auto lowered = grammar::compile_gbnf(gbnf);
  if (!lowered.ok()) return Error{path + ": " + lowered.error().message};
  return std::make_shared<grammar::StackArena>(std::move(*lowered));
}

int run_generate(const RunArgs& args) {
  auto model = load_model_on(args.model, args.device);
  if (!model.ok()) {
    std::fprintf(stderr, "error: %s\n", model.error().message.c_str());
    return 1;
  }
  auto tok = tokenizer::Tokenizer::from_gguf((*model)->file());
  if (!tok.ok()) {
    std::fprintf(stderr, "error: %s\n", tok.error().message.c_str());
    return 1;
  }
  const tokenizer::Tokenizer& tk = **tok;
  const bool add_bos = !args.no_bos && tk.add_bos_by_default();
  const std::vector<int32_t> prompt = tk.encode(args.prompt, add_bos, /*parse_special=*/false);

  engine::GenerateOptions opts;
  opts.max_tokens = args.max_tokens;
  opts.context_limit = args.ctx_size;
  apply_sampling_flags(args.sampling, opts.sampling);
  opts.n_logit_steps = args.logits_steps;
  opts.exact_numerics = args.exact_numerics;
  for (int32_t id = 0; id < tk.n_vocab(); ++id) {
    if (tk.is_eog(id)) opts.stop_token_ids.push_back(id);
  }

  auto grammar = output_grammar(args);
  if (!grammar.ok()) {
    std::fprintf(stderr, "error: %s\n", grammar.error().message.c_str());
    return 1;
  }
  engine::GrammarMaskers maskers(tk, tk.eog_ids());
  if (*grammar) opts.grammar = std::make_shared<engine::GrammarConstraint>(*grammar, maskers.get(*grammar));
  ThreadPool pool(args.threads > 0 ? args.threads : ThreadPool::available_cores());
  tokenizer::IncrementalDecoder decoder(tk);
  std::string text;
  auto on_token = [&](int32_t token) {
    if (tk.is_eog(token)) return;
    const std::string piece = decoder.push(token);
    text += piece;
    if (!args.json) {
      std::fputs(piece.c_str(), stdout);
      std::fflush(stdout);
    }
  };
  if (!args.json) std::fputs(args.prompt.c_str(), stdout);
  auto result = engine::generate(**model, prompt, opts, pool, on_token);
  if (!result.ok()) {
    std::fprintf(stderr, "\nerror: %s\n", result.error().message.c_str());
    return 1;
  }
  const std::string tail = decoder.flush();
  text += tail;
  if (args.json) {
    nlohmann::json out;
    out["prompt_tokens"] = prompt;
    out["tokens"] = result->tokens;
    out["text"] = text;
    out["stop_reason"] = engine::stop_reason_name(result->stop_reason);
    if (args.logits_steps > 0) out["logits"] = result->step_logits;
    std::printf("%s\n", out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else {
    std::printf("%s\n", tail.c_str());
    if (result->stop_reason == engine::StopReason::ContextFull) {
      const int trained = (*model)->config().context_length;
      const int context = args.ctx_size > 0 ? std::min(args.ctx_size, trained) : trained;
      std::fprintf(stderr, "[stopped: the context of %d tokens is full%s]\n", context,
                   context < trained ? " (raise --ctx-size)" : "");
    }
  }
  if (args.stats) {
    const double n_gen = static_cast<double>(result->tokens.size());
    std::fprintf(stderr, "prompt: %zu tokens in %.3f s (%.1f t/s); generated: %zu tokens in %.3f s (%.1f t/s)\n",
                 prompt.size(), result->prefill_seconds, prompt.size() / std::max(1e-9, result->prefill_seconds),
                 result->tokens.size(), result->decode_seconds, n_gen / std::max(1e-9, result->decode_seconds));
  }
  return 0;
}

void setup_run(CLI::App& app) {
  auto a = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand("run", "Generate a continuation of a prompt");
  add_device_option(cmd, a->device);
  cmd->add_option("--model,-m", a->model, "GGUF model file")->capture_default_str();
  cmd->add_option("--prompt,-p", a->prompt, "Prompt text")->required();
  cmd->add_option("--max-tokens,-n", a->max_tokens, "Tokens to generate at most")->capture_default_str()
      ->check(CLI::Range(0, 1 << 24));
  cmd->add_option("--ctx-size,-c", a->ctx_size,
                  "Tokens of context (prompt + output) to keep KV for; the KV cache is allocated for all of it up "
                  "front (0 = the model's trained context)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  add_sampling_flags(cmd, a->sampling);
  cmd->add_option("--threads", a->threads, "Threads (0 = all available cores)")->capture_default_str()
      ->check(CLI::Range(0, 1024));
  cmd->add_flag("--json", a->json, "Print one JSON object with prompt tokens, tokens and text");
  auto* schema_opt = cmd->add_option("--json-schema", a->json_schema_file,
                                     "Constrain the output to this JSON Schema (a file; docs/structured-output.md)");
  cmd->add_option("--grammar", a->grammar_file, "Constrain the output to this GBNF grammar (a file)")
      ->excludes(schema_opt);
  cmd->add_flag("--exact-numerics", a->exact_numerics,
                "Batch-invariant matmuls even when sampling (default: only at temperature 0; a sampled prompt may be "
                "prefilled with faster relaxed kernels)");
  cmd->add_option("--logits", a->logits_steps, "With --json: include the raw logits of the first K steps")
      ->check(CLI::Range(0, 1 << 20));
  cmd->add_flag("--no-bos", a->no_bos, "Do not add the BOS token");
  cmd->add_flag("--stats", a->stats, "Print timings to stderr");
  cmd->callback([a] { set_exit_code(run_generate(*a)); });
}

}  // namespace

KAIRO_REGISTER_COMMAND(run, setup_run);

}  // namespace kairo::tools
