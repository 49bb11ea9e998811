#pragma once
// What the load generator sends. The server's tokenizer is unknown to the client, so prompts are random common
// English words, about one token each for Llama/Qwen/GPT tokenizers; the real token counts come back in the
// responses' `usage`. Every session draws fresh words so prompts do not share prefixes by accident; the multi-turn
// workload shares a system prompt on purpose (and each turn extends the previous one), which is what a prefix cache
// is for.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/result.h"

namespace kairo::bench::serve {

enum class WorkloadKind { Random, Mixed, MultiTurn };
enum class Endpoint { Completions, Chat };

struct WorkloadOptions {
  WorkloadKind kind = WorkloadKind::Random;
  Endpoint endpoint = Endpoint::Completions;  // MultiTurn always uses chat
  int input_tokens = 128;
  int output_tokens = 64;
  double long_fraction = 0.2;                 // Mixed: share of long requests
  int long_input_tokens = 1024;
  int long_output_tokens = 256;
  int turns = 3;                              // MultiTurn: user turns per conversation
  int prefix_tokens = 256;                    // MultiTurn: system prompt shared by every conversation
  uint64_t seed = 1;
};

struct Turn {
  std::string user_text;
  int n_words = 0;
  int max_tokens = 0;
};

// A conversation: one turn for Random and Mixed; later turns of MultiTurn carry the earlier turns and replies.
struct Session {
  Endpoint endpoint = Endpoint::Completions;
  std::string system_prompt;  // chat only; empty = none
  int system_words = 0;
  std::vector<Turn> turns;
};

Result<WorkloadKind> parse_workload_kind(const std::string& name);  // random | mixed | multi-turn
const char* workload_kind_name(WorkloadKind kind);

// Sessions holding n_requests turns in all (the last MultiTurn conversation may be shorter).
std::vector<Session> make_sessions(const WorkloadOptions& options, int n_requests);

// n space-separated words drawn from a fixed list of common words.
std::string random_words(std::mt19937_64& rng, int n);

}  // namespace kairo::bench::serve
