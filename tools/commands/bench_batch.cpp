// `kairo bench batch --model M --batch 1,2,4,...`: aggregate throughput of B sequences decoded together through the
// engine, like llama-batched-bench (see bench/batch_bench.h).
#include <cstdio>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "bench/batch_bench.h"
#include "bench_common.h"
#include "bench_registry.h"
#include "command_registry.h"
#include "device_option.h"
#include "lora_options.h"
#include "speculative_options.h"

namespace kairo::tools {
namespace {

struct BatchArgs {
  std::string model;
  std::string json_schema_file;
  std::string grammar_file;
  bench::BatchBenchOptions options;
  bool json = false;
  SpeculativeArgs speculative;
  std::string device = "cpu";
  std::vector<std::string> loras;  // --lora PATH[:SCALE], comma-separated
  int max_lora_rank = model::lora::kDefaultMaxRank;
};

int run_bench_batch(const BatchArgs& a) {
  bench::BatchBenchOptions options = a.options;
  if (a.options.n_threads < 0 || !(a.options.temperature >= 0)) {
    std::fprintf(stderr, "error: --threads and --temperature must be >= 0\n");
    return 1;
  }
  options.oracle = a.speculative.method == "oracle";
  SpeculativeArgs spec_args = a.speculative;
  if (options.oracle) spec_args.method = "ngram";  // validated as one; the bench swaps in the oracle
  const bool speculating = a.speculative.method != "none" || !a.speculative.draft_model.empty();
  auto model = load_model_on(a.model, a.device);
  if (!model.ok()) {
    std::fprintf(stderr, "error: %s\n", model.error().message.c_str());
    return 1;
  }
  model::Model& m = **model;
  for (const std::string& text : a.loras) {
    auto spec = parse_lora_spec(text, /*named=*/false);
    auto idx = spec.ok() ? attach_lora(m, *spec, a.max_lora_rank) : Result<int>(spec.error());
    if (!idx.ok()) {
      std::fprintf(stderr, "error: %s\n", idx.error().message.c_str());
      return 1;
    }
  }
  options.n_adapters = static_cast<int>(a.loras.size());
  const bool lora = options.n_adapters > 0;
  auto draft = load_draft_model(spec_args, m, a.device);
  if (!draft.ok()) {
    std::fprintf(stderr, "error: %s\n", draft.error().message.c_str());
    return 1;
  }
  auto spec = speculative_config(spec_args, draft->get());
  if (!spec.ok()) {
    std::fprintf(stderr, "error: %s, or oracle\n", spec.error().message.c_str());
    return 1;
  }
  options.speculative = *spec;
  for (auto [path, into] : {std::pair{&a.json_schema_file, &options.json_schema}, std::pair{&a.grammar_file, &options.gbnf}}) {
    if (path->empty()) continue;
    std::ifstream in(*path, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "error: %s cannot be read\n", path->c_str());
      return 1;
    }
    into->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  auto tok = tokenizer::Tokenizer::from_gguf(m.file());
  if (!tok.ok()) {
    std::fprintf(stderr, "error: %s (the engine needs the model's tokenizer; `kairo synth` copies one)\n",
                 tok.error().message.c_str());
    return 1;
  }
  const int n_threads = a.options.n_threads > 0 ? a.options.n_threads : ThreadPool::available_cores();
  if (!a.json) {
    std::printf("model: %s (%s), backend %s, %d threads, prompt %d, gen %d, temperature %g\n\n", a.model.c_str(),
                model_label(m).c_str(), m.device().name().c_str(), n_threads, a.options.n_prompt, a.options.n_gen,
                a.options.temperature);
    std::printf("| B | PP | TG | T_PP s | S_PP t/s | T_TG s | S_TG t/s | T s | S t/s |%s%s\n",
                speculating ? " speculative | accepted | mean length |" : "", lora ? " LoRA | S_TG vs base |" : "");
    std::printf("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |%s%s\n",
                speculating ? " --- | ---: | ---: |" : "", lora ? " --- | ---: |" : "");
    std::fflush(stdout);
  }
  double base_gen_tps = 0;  // the base row just before a LoRA row
  auto print_row = [&](const bench::BatchBenchRow& r) {
    if (a.json) return;
    std::printf("| %d | %d | %d | %.3f | %.2f | %.3f | %.2f | %.3f | %.2f |", r.n_seqs, r.n_prompt * r.n_seqs,
                r.n_gen * r.n_seqs, r.prefill_seconds, r.prefill_tps, r.gen_seconds, r.gen_tps, r.total_seconds,
                r.total_tps);
    if (speculating) {
      // Acceptance rate over the proposed tokens; tokens emitted per verifying step (1 + accepted / proposals).
      const double rate = r.spec_draft_tokens > 0 ? 100.0 * r.spec_accepted / r.spec_draft_tokens : 0.0;
      const double mean = r.spec_drafts > 0 ? 1.0 + static_cast<double>(r.spec_accepted) / r.spec_drafts : 0.0;
      std::printf(" %s | %.1f %% | %.2f |", r.speculative.c_str(), rate, mean);
    }
    if (lora && r.n_adapters == 0) {
      base_gen_tps = r.gen_tps;
      std::printf(" base | |");
    } else if (lora) {
      std::printf(" %d adapters | %.1f %% |", r.n_adapters, base_gen_tps > 0 ? 100.0 * r.gen_tps / base_gen_tps : 0.0);
    }
    std::printf("\n");
    std::fflush(stdout);
  };
  auto rows = bench::run_batch_bench(m, **tok, options, print_row);
  if (!rows.ok()) {
    std::fprintf(stderr, "error: %s\n", rows.error().message.c_str());
    return 1;
  }
  if (a.json) {
    nlohmann::json j;
    j["model"] = a.model;
    j["arch"] = m.config().arch;
    j["types"] = matrix_types(m.file());
    j["backend"] = m.device().name();
    j["threads"] = n_threads;
    j["n_prompt"] = a.options.n_prompt;
    j["n_gen"] = a.options.n_gen;
    j["rows"] = nlohmann::json::array();
    for (const auto& r : *rows) {
      j["rows"].push_back({{"n_seqs", r.n_seqs},
                           {"prefill_s", r.prefill_seconds},
                           {"prefill_ts", r.prefill_tps},
                           {"gen_s", r.gen_seconds},
                           {"gen_tokens", r.gen_tokens},
                           {"total_tokens", r.total_tokens},
                           {"gen_ts", r.gen_tps},
                           {"total_s", r.total_seconds},
                           {"total_ts", r.total_tps},
                           {"speculative", r.speculative},
                           {"n_adapters", r.n_adapters},
                           {"spec_drafts", r.spec_drafts},
                           {"spec_draft_tokens", r.spec_draft_tokens},
                           {"spec_accepted_tokens", r.spec_accepted}});
    }
    std::printf("%s\n", j.dump(2).c_str());
  }
  return 0;
}

void setup_bench_batch(CLI::App& bench) {
  auto a = std::make_shared<BatchArgs>();
  CLI::App* cmd = bench.add_subcommand("batch", "Aggregate t/s of B sequences decoded together (llama-batched-bench)");
  add_device_option(cmd, a->device);
  cmd->add_option("--model,-m", a->model, "GGUF model file (with a tokenizer)")->required();
  cmd->add_option("--batch", a->options.n_seqs, "Sequence counts, comma-separated")->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--prompt", a->options.n_prompt, "Prompt tokens per sequence")->capture_default_str();
  cmd->add_option("--gen", a->options.n_gen, "Generated tokens per sequence")->capture_default_str();
  cmd->add_option("--threads", a->options.n_threads, "Threads (0 = all available cores)");
  cmd->add_option("--max-batched-tokens", a->options.max_batched_tokens, "Engine token budget per step")
      ->capture_default_str();
  cmd->add_option("--temperature", a->options.temperature,
                  "Sampling temperature (0: greedy requests, batch-invariant kernels; above 0: seeded sampling, "
                  "relaxed kernels where faster)")
      ->capture_default_str();
  auto* schema = cmd->add_option("--json-schema", a->json_schema_file,
                                 "Constrain every request to this JSON Schema (a file): the cost of structured output");
  cmd->add_option("--grammar", a->grammar_file, "Constrain every request to this GBNF grammar (a file)")->excludes(schema);
  cmd->add_flag("--json", a->json, "Print JSON");
  cmd->add_option("--oracle-accuracy", a->options.oracle_accuracy,
                  "With --speculative oracle: the share of proposed tokens that are right (what verification costs "
                  "and saves at lower acceptance)")
      ->capture_default_str()->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--lora", a->loras,
                  "LoRA adapters PATH[:SCALE], comma-separated: each batch size runs on the base, then with its "
                  "sequences spread round-robin over the adapters (both rows printed)")
      ->delimiter(',');
  cmd->add_option("--max-lora-rank", a->max_lora_rank, "Largest adapter rank accepted")->capture_default_str();
  add_speculative_options(cmd, a->speculative,
                          ", or oracle (propose the target's own greedy continuation, recorded by a run without "
                          "speculation on the same prompts: both rows are printed)");
  cmd->callback([a] { set_exit_code(run_bench_batch(*a)); });
}

}  // namespace

KAIRO_REGISTER_BENCH(batch, setup_bench_batch);

}  // namespace kairo::tools
