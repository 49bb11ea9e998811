#include "bench/batch_bench.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <random>

#include "core/format.h"
#include "grammar/byte_grammar.h"
#include "grammar/json_schema.h"
#include "grammar/stack_arena.h"
#include "bench/oracle_proposer.h"
#include "engine/engine.h"

namespace kairo::bench {
namespace {

using Clock = std::chrono::steady_clock;

// What the engine's callbacks record: when each request got its first token, and every token's arrival.
struct Timeline {
  std::mutex mutex;
  std::condition_variable done;
  int n_finished = 0;
  int n_failed = 0;
  std::vector<Clock::time_point> first_token;           // per request
  std::vector<std::pair<Clock::time_point, int>> events;  // (arrival, tokens)
  std::vector<std::vector<int32_t>> outputs;            // per request
};

engine::Request make_request(std::mt19937_64& rng, int n_vocab, int n_prompt, int n_gen, float temperature,
                             const std::shared_ptr<grammar::StackArena>& grammar) {
  std::uniform_int_distribution<int32_t> pick(0, n_vocab - 1);
  engine::Request r;
  r.grammar = grammar;
  r.prompt_tokens.resize(static_cast<size_t>(n_prompt));
  for (auto& t : r.prompt_tokens) t = pick(rng);
  r.sampling.temperature = temperature;
  if (temperature > 0) r.sampling.seed = rng();
  r.stop.max_tokens = n_gen;
  r.stop.ignore_eos = true;
  return r;
}

std::vector<engine::Request> make_requests(std::mt19937_64& rng, int n_vocab, int n, int n_prompt, int n_gen,
                                          float temperature, const std::shared_ptr<grammar::StackArena>& grammar) {
  std::vector<engine::Request> requests;
  for (int i = 0; i < n; ++i) requests.push_back(make_request(rng, n_vocab, n_prompt, n_gen, temperature, grammar));
  return requests;
}

// Submits the requests at once and waits for all; returns their timeline relative to the submit time.
Result<BatchBenchRow> run_one(engine::Engine& eng, std::vector<engine::Request> requests, int n_prompt, int n_gen,
                              const std::shared_ptr<grammar::StackArena>& grammar) {
  const int n = static_cast<int>(requests.size());
  Timeline tl;
  tl.first_token.assign(static_cast<size_t>(n), Clock::time_point{});
  tl.outputs.resize(static_cast<size_t>(n));
  const engine::EngineStats before = eng.stats();
  const Clock::time_point t0 = Clock::now();
  for (int i = 0; i < n; ++i) {
    const bool constrained = grammar != nullptr;
    auto id = eng.submit(std::move(requests[static_cast<size_t>(i)]), [&tl, i, constrained](const engine::RequestOutput& out) {
      const Clock::time_point now = Clock::now();
      std::lock_guard<std::mutex> lock(tl.mutex);
      if (!out.tokens.empty()) {
        if (tl.first_token[static_cast<size_t>(i)] == Clock::time_point{}) tl.first_token[static_cast<size_t>(i)] = now;
        tl.events.emplace_back(now, static_cast<int>(out.tokens.size()));
        for (const engine::GeneratedToken& t : out.tokens) tl.outputs[static_cast<size_t>(i)].push_back(t.token);
      }
      if (out.finished) {
        ++tl.n_finished;
        // A constrained request may complete its text early ("stop"); anything else must run to n_gen tokens.
        const bool early_ok = constrained && out.finish_reason == engine::FinishReason::Stop;
        if (out.finish_reason != engine::FinishReason::Length && !early_ok) ++tl.n_failed;
        tl.done.notify_one();
      }
    });
    if (auto* rejected = std::get_if<engine::SubmitRejection>(&id)) {
      eng.drain(60.0);
      return Error{"the engine refused a request: " + rejected->message};
    }
  }
  std::unique_lock<std::mutex> lock(tl.mutex);
  tl.done.wait(lock, [&] { return tl.n_finished == n; });
  if (tl.n_failed > 0) return Error{strprintf("%d of %d requests ended before %d tokens", tl.n_failed, n, n_gen)};

  const Clock::time_point all_started = *std::max_element(tl.first_token.begin(), tl.first_token.end());
  Clock::time_point end = all_started;
  BatchBenchRow row;
  row.n_seqs = n;
  row.n_prompt = n_prompt;
  row.n_gen = n_gen;
  for (const auto& [at, count] : tl.events) {
    end = std::max(end, at);
    row.total_tokens += count;
    if (at > all_started) row.gen_tokens += count;
  }
  auto secs = [](Clock::duration d) { return std::chrono::duration<double>(d).count(); };
  row.prefill_seconds = secs(all_started - t0);
  row.gen_seconds = secs(end - all_started);
  row.total_seconds = secs(end - t0);
  row.prefill_tps = static_cast<double>(n) * n_prompt / row.prefill_seconds;
  row.gen_tps = row.gen_seconds > 0 ? static_cast<double>(row.gen_tokens) / row.gen_seconds : 0.0;
  row.total_tps = static_cast<double>(n) * (n_prompt + n_gen) / row.total_seconds;
  const engine::EngineStats after = eng.stats();
  row.spec_drafts = after.spec_num_drafts - before.spec_num_drafts;
  row.spec_draft_tokens = after.spec_num_draft_tokens - before.spec_num_draft_tokens;
  row.spec_accepted = after.spec_num_accepted_tokens - before.spec_num_accepted_tokens;
  row.outputs = std::move(tl.outputs);
  return row;
}

}  // namespace

Result<std::vector<BatchBenchRow>> run_batch_bench(model::Model& model, const tokenizer::Tokenizer& tokenizer,
                                                   const BatchBenchOptions& o,
                                                   const std::function<void(const BatchBenchRow&)>& on_row) {
  const model::ModelConfig& c = model.config();
  if (o.n_seqs.empty()) return Error{"--batch needs at least one batch size"};
  int max_seqs = 0;
  for (int n : o.n_seqs) {
    if (n <= 0 || n > 4096) return Error{strprintf("batch size %d is out of range; use 1 to 4096", n)};
    max_seqs = std::max(max_seqs, n);
  }
  if (o.n_prompt <= 0 || o.n_gen <= 0) return Error{"--prompt and --gen must be positive"};
  if (o.oracle && o.n_adapters > 0) return Error{"--speculative oracle and --lora do not combine; run them apart"};
  if (o.n_adapters < 0 || o.n_adapters > model.adapters().size()) {
    return Error{strprintf("internal: %d LoRA adapters asked for, %d loaded", o.n_adapters, model.adapters().size())};
  }
  if (o.n_prompt + o.n_gen > c.context_length) {
    return Error{strprintf("--prompt %d + --gen %d exceed the model's context of %d tokens", o.n_prompt, o.n_gen,
                           c.context_length)};
  }
  engine::EngineConfig ec;
  ec.scheduler.max_num_seqs = max_seqs;
  ec.scheduler.max_num_batched_tokens = std::max(o.max_batched_tokens, max_seqs);
  ec.enable_prefix_caching = false;  // random prompts share nothing; keep the measure free of cache bookkeeping
  ec.kv_dtype = o.kv_dtype;
  ec.n_threads = o.n_threads;
  // Every sequence holds its whole prompt + generation at once: no preemption. The engine also wants room for one
  // sequence at full context.
  const int64_t per_seq = (o.n_prompt + o.n_gen + ec.block_size - 1) / ec.block_size + 1;
  const int64_t full_ctx = (c.context_length + ec.block_size - 1) / ec.block_size;
  ec.n_kv_blocks = std::max<int64_t>(per_seq * max_seqs, full_ctx);
  ec.speculative = o.speculative;
  std::shared_ptr<OracleProposer> oracle;
  if (o.oracle) {
    oracle = std::make_shared<OracleProposer>(o.oracle_accuracy, c.n_vocab);
    ec.speculative.method = engine::SpeculativeMethod::Custom;
    ec.speculative.custom = oracle;
  }
  KAIRO_TRY_ASSIGN(std::unique_ptr<engine::Engine> eng, engine::Engine::create(model, tokenizer, ec));
  const char* mode = o.oracle                                                       ? "oracle"
                     : o.speculative.method == engine::SpeculativeMethod::Ngram      ? "ngram"
                     : o.speculative.method == engine::SpeculativeMethod::DraftModel ? "draft"
                                                                                     : "off";

  std::shared_ptr<grammar::StackArena> grammar;
  if (!o.json_schema.empty() || !o.gbnf.empty()) {
    std::string gbnf = o.gbnf;
    if (!o.json_schema.empty()) {
      KAIRO_TRY_ASSIGN(gbnf, grammar::json_schema_to_gbnf(std::string_view(o.json_schema)));
    }
    KAIRO_TRY_ASSIGN(grammar::ByteGrammar lowered, grammar::compile_gbnf(gbnf));
    grammar = std::make_shared<grammar::StackArena>(std::move(lowered));
  }
  std::mt19937_64 rng(o.seed);
  // Warm-up: faults in the weights and starts the engine's threads.
  auto warm_up = run_one(*eng, make_requests(rng, c.n_vocab, 1, std::min(o.n_prompt, 16), 2, o.temperature, grammar),
                         std::min(o.n_prompt, 16), 2, grammar);
  if (!warm_up.ok()) return warm_up.error();
  std::vector<BatchBenchRow> rows;
  for (int n : o.n_seqs) {
    std::vector<engine::Request> requests = make_requests(rng, c.n_vocab, n, o.n_prompt, o.n_gen, o.temperature, grammar);
    if (oracle) {  // first without guesses (the oracle knows nothing yet), recording what the target generates
      oracle->set({});
      KAIRO_TRY_ASSIGN(BatchBenchRow plain, run_one(*eng, requests, o.n_prompt, o.n_gen, grammar));
      std::map<std::vector<int32_t>, std::vector<int32_t>> recorded;
      for (size_t i = 0; i < requests.size(); ++i) recorded[requests[i].prompt_tokens] = plain.outputs[i];
      oracle->set(std::move(recorded));
      if (on_row) on_row(plain);
      rows.push_back(std::move(plain));
    }
    std::vector<engine::Request> lora_requests;
    if (o.n_adapters > 0) {
      lora_requests = requests;
      for (size_t i = 0; i < lora_requests.size(); ++i)
        lora_requests[i].adapter = 1 + static_cast<int>(i % static_cast<size_t>(o.n_adapters));
    }
    KAIRO_TRY_ASSIGN(BatchBenchRow row, run_one(*eng, std::move(requests), o.n_prompt, o.n_gen, grammar));
    row.speculative = mode;
    if (o.n_adapters > 0) {  // the base row first, then the same prompts over the adapters
      if (on_row) on_row(row);
      rows.push_back(row);
      KAIRO_TRY_ASSIGN(row, run_one(*eng, std::move(lora_requests), o.n_prompt, o.n_gen, grammar));
      row.speculative = mode;
      row.n_adapters = o.n_adapters;
    }
    // Greedy requests must come out token for token as without speculation (sampled ones only in distribution).
    if (oracle && o.temperature == 0 && row.outputs != rows.back().outputs) {
      return Error{strprintf("with the oracle's proposals at batch %d the outputs differ from the run without "
                             "speculation: speculative decoding changed what was sampled",
                             n)};
    }
    if (on_row) on_row(row);
    rows.push_back(row);
  }
  return rows;
}

}  // namespace kairo::bench
