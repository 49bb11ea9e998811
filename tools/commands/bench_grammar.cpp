// `kairo bench grammar --model M`: the cost of constrained output per decode step on one core (the allowed-token
// mask of a JSON grammar over the model's vocabulary), and the time to compile a schema.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "bench/grammar_bench.h"
#include "bench_registry.h"
#include "command_registry.h"
#include "gguf/gguf_file.h"
#include "tokenizer/tokenizer.h"

namespace kairo::tools {
namespace {

struct GrammarArgs {
  std::string model;
  std::string schema_file;
  int schema_properties = 0;
  int steps = 2000;
  uint64_t seed = 1;
  bool json = false;
};

int run_grammar(const GrammarArgs& a) {
  auto file = gguf::File::open(a.model);
  if (!file.ok()) {
    std::fprintf(stderr, "error: %s\n", file.error().message.c_str());
    return 1;
  }
  auto tok = tokenizer::Tokenizer::from_gguf(*file);
  if (!tok.ok()) {
    std::fprintf(stderr, "error: %s\n", tok.error().message.c_str());
    return 1;
  }
  bench::GrammarBenchOptions o;
  for (int32_t id = 0; id < (*tok)->n_vocab(); ++id)
    o.token_bytes.push_back((*tok)->is_eog(id) || (*tok)->is_control(id) ? "" : (*tok)->token_to_piece(id));
  o.eog_ids = (*tok)->eog_ids();
  o.n_steps = a.steps;
  o.seed = a.seed;
  std::string what = "any JSON object";
  if (!a.schema_file.empty()) {
    std::ifstream in(a.schema_file, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "error: %s cannot be read\n", a.schema_file.c_str());
      return 1;
    }
    o.schema.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    what = a.schema_file;
  } else if (a.schema_properties > 0) {
    o.schema = bench::many_property_schema(a.schema_properties);
    what = "a schema of " + std::to_string(a.schema_properties) + " properties";
  }
  auto r = bench::run_grammar_bench(o);
  if (!r.ok()) {
    std::fprintf(stderr, "error: %s\n", r.error().message.c_str());
    return 1;
  }
  if (a.json) {
    nlohmann::json j{{"model", a.model},           {"grammar", what},
                     {"n_vocab", r->n_vocab},      {"steps", r->n_steps},
                     {"documents", r->n_documents}, {"mask_mean_us", r->mask_mean_us},
                     {"mask_p50_us", r->mask_p50_us}, {"mask_p99_us", r->mask_p99_us},
                     {"mask_max_us", r->mask_max_us}, {"accept_mean_us", r->accept_mean_us},
                     {"compile_ms", r->compile_ms}, {"first_mask_ms", r->first_mask_ms},
                     {"trie_ms", r->trie_ms},       {"stack_hits", r->stack_hits},
                     {"truncated_walks", r->truncated_walks}, {"resumed_walks", r->resumed_walks},
                     {"walk_sets", r->walk_sets}};
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  std::printf("grammar: %s over a vocabulary of %d tokens, one core, %d steps (%d complete texts)\n\n", what.c_str(),
              r->n_vocab, r->n_steps, r->n_documents);
  std::printf("| what | value |\n| --- | ---: |\n");
  std::printf("| mask per step, mean | %.1f us |\n| mask per step, p50 | %.1f us |\n", r->mask_mean_us, r->mask_p50_us);
  std::printf("| mask per step, p99 | %.1f us |\n| mask per step, max | %.1f us |\n", r->mask_p99_us, r->mask_max_us);
  std::printf("| accept a token, mean | %.2f us |\n", r->accept_mean_us);
  std::printf("| compile (schema -> GBNF -> byte grammar) | %.2f ms |\n", r->compile_ms);
  std::printf("| first mask of the grammar (whole trie) | %.2f ms |\n", r->first_mask_ms);
  std::printf("| token trie of the vocabulary (once per tokenizer) | %.2f ms |\n", r->trie_ms);
  std::printf("\nmask cache: %llu whole-stack hits, %llu trie walks, %llu resumed sub-walks, %llu sets of stacks "
              "met by the walks\n",
              static_cast<unsigned long long>(r->stack_hits), static_cast<unsigned long long>(r->truncated_walks),
              static_cast<unsigned long long>(r->resumed_walks), static_cast<unsigned long long>(r->walk_sets));
  return 0;
}

void setup_bench_grammar(CLI::App& bench) {
  auto a = std::make_shared<GrammarArgs>();
  CLI::App* cmd = bench.add_subcommand("grammar", "Constrained-output cost: token-mask time per step, schema compile");
  cmd->add_option("--model,-m", a->model, "GGUF file whose tokenizer gives the vocabulary")->required();
  auto* schema = cmd->add_option("--schema", a->schema_file, "JSON Schema file (default: any JSON object)");
  cmd->add_option("--schema-properties", a->schema_properties,
                  "Instead of a file: a generated schema of N mixed properties")
      ->excludes(schema)
      ->check(CLI::Range(1, 10000));
  cmd->add_option("--steps", a->steps, "Masks to time")->capture_default_str()->check(CLI::Range(1, 10000000));
  cmd->add_option("--seed", a->seed, "Random walk seed")->capture_default_str();
  cmd->add_flag("--json", a->json, "Print JSON");
  cmd->callback([a] { set_exit_code(run_grammar(*a)); });
}

}  // namespace

KAIRO_REGISTER_BENCH(grammar, setup_bench_grammar);

}  // namespace kairo::tools
