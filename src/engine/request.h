#pragma once
// What a client asks the engine for, and what the engine streams back. Plain data: the server translates OpenAI
// JSON into these, and the engine never sees JSON.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kairo::grammar {
class StackArena;
}

namespace kairo::engine {

using RequestId = uint64_t;

struct SamplingParams {
  float temperature = 1.0f;      // 0 = greedy (deterministic mode)
  int top_k = 0;                 // 0 = off
  float top_p = 1.0f;            // 1 = off
  float min_p = 0.0f;            // 0 = off
  float repetition_penalty = 1.0f;
  float presence_penalty = 0.0f;
  float frequency_penalty = 0.0f;
  std::optional<uint64_t> seed;
  std::vector<std::pair<int32_t, float>> logit_bias;  // token id (validated < n_vocab) -> bias
  int n_logprobs = -1;           // -1: none; 0: the chosen token's logprob only; k: plus the top k alternatives
};

struct StopConditions {
  int max_tokens = 16;
  std::vector<std::string> stop_strings;  // checked across token boundaries; the stop text is not returned
  std::vector<int32_t> stop_token_ids;    // in addition to the model's end-of-generation tokens
  bool ignore_eos = false;
};

// An embedding request's pooling (model::Pooling's values): the request computes its prompt and, instead of
// generating, ends with one vector made of the final hidden states of its tokens.
enum class EmbeddingPooling { None = 0, Mean = 1, Cls = 2, Last = 3 };

struct Request {
  std::vector<int32_t> prompt_tokens;
  // Not None: an embedding request. Its prompt is computed (in chunks, batched with other requests like any prompt)
  // and its one output carries the pooled vector, L2-normalised when `normalize`: the mean of every prompt token's
  // final hidden state, the first token's, or the last token's. Nothing is sampled; the sampling, stop, grammar,
  // fork and speculative fields do not apply.
  EmbeddingPooling embedding = EmbeddingPooling::None;
  bool normalize_embedding = true;
  SamplingParams sampling;
  StopConditions stop;
  int priority = 0;          // lower value = served first (only when the engine runs with priority scheduling)
  std::string cache_salt;    // separates prefix-cache entries between tenants
  // The LoRA adapter the request runs with: model::Model::add_adapter's index, 0 = the base model. The prefix cache
  // is keyed by the adapter's identity (its file's content and scale), so KV computed under one adapter never serves
  // another.
  int adapter = 0;
  // The user scale to run `adapter` at instead of the one it was loaded with (llama-server's per-request `lora`
  // scales): the pair scales and the prefix-cache identity of the same file loaded at that scale, bit for bit; 0 runs
  // the base model. Unset: the loaded scale. Finite and >= 0.
  std::optional<float> adapter_scale;
  // Which load of `adapter` the request means (EngineClient::load_adapter's generation; 0 = an adapter added before
  // the engine started): a request for an index that was unloaded and reused since is refused, never run under the
  // adapter that now has the index.
  uint64_t adapter_generation = 0;
  // The tenant (the API key's name from --api-keys-file; empty = the anonymous tenant) and its weight. While several
  // tenants have work, the scheduler shares each step's token budget and the free sequence seats between them in
  // proportion to their weights (weighted fair queueing), so one tenant's burst cannot starve another.
  std::string tenant;
  double tenant_weight = 1.0;
  // n > 1: the id of an earlier request of this client with the same prompt and cache salt (choice 0). While that
  // request's prompt is still being computed, this one waits for it and then starts from a fork of its KV (every
  // block shared, the partial last block copied on the first write) and samples its own first token from the same
  // logits, so the prompt is computed once for all n choices. If the parent has already moved on (or the prompts
  // differ, or max_num_seqs sequences already run), the request runs on its own, served by the prefix cache.
  RequestId fork_of = 0;
  // Opt out of the engine's speculative decoding (SpeculativeConfig) for this request. Speculation never changes
  // what is sampled; this is for a request whose latency must not vary with how well its guesses go.
  bool speculative = true;
  // Constrained output (a JSON schema, regex, choice list or GBNF grammar, compiled): only tokens the grammar allows
  // are sampled, end-of-generation only where its text is complete, and the request stops when nothing can follow.
  // Null: unconstrained. Once submitted, only the engine thread touches it (requests may share one).
  std::shared_ptr<grammar::StackArena> grammar;
  // A reasoning model's thinking stays free of the grammar, which applies to the answer after it. The block opens
  // with the token think_open (or is open from the start: the prompt ended inside it) and closes with think_close;
  // while it is open, end-of-generation is not sampled (a finished reply must hold the grammar's text). -1: no
  // thinking block, the grammar applies from the first token.
  struct Thinking {
    int32_t open = -1;
    int32_t close = -1;
    bool starts_open = false;
  } grammar_after_thinking;
};

enum class FinishReason { None, Stop, Length, Abort };
const char* finish_reason_name(FinishReason r);  // "stop", "length", "abort"

struct TokenLogprob {
  int32_t token = 0;
  float logprob = 0.0f;
};

struct GeneratedToken {
  int32_t token = 0;
  std::optional<float> logprob;             // when n_logprobs >= 0
  std::vector<TokenLogprob> top_logprobs;   // n_logprobs entries
};

// One update for a request: the tokens produced since the last update and the text they complete.
struct RequestOutput {
  RequestId id = 0;
  std::vector<GeneratedToken> tokens;
  std::string text_delta;     // complete UTF-8 only; held-back bytes come with a later update
  bool finished = false;
  FinishReason finish_reason = FinishReason::None;
  std::string stop_reason;    // the matched stop string, if any
  // With FinishReason::Abort: why the engine gave up on the request when it was not asked to (a lost device).
  std::string error;
  int n_prompt_tokens = 0;
  int n_cached_prompt_tokens = 0;  // prompt tokens served from the prefix cache
  int n_generated_tokens = 0;
  std::vector<float> embedding;  // an embedding request's vector (Request::embedding), on its final output
  // Set on the final output: time from submission to first scheduling, and from there to the first token.
  double queue_seconds = 0;
  double prefill_seconds = 0;
};

}  // namespace kairo::engine
