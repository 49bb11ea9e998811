#include "bench/serve/workload.h"

#include <algorithm>

#include "core/format.h"

namespace kairo::bench::serve {
namespace {

// Common words that are a single token (with their leading space) in the Llama-2, Llama-3, Qwen2 and GPT-2 vocabs.
constexpr const char* kWords[] = {
    "time", "year", "people", "way", "day", "man", "thing", "woman", "life", "child", "world", "school", "state",
    "family", "student", "group", "country", "problem", "hand", "part", "place", "case", "week", "company",
    "system", "program", "question", "work", "government", "number", "night", "point", "home", "water", "room",
    "mother", "area", "money", "story", "fact", "month", "lot", "right", "study", "book", "eye", "job", "word",
    "business", "issue", "side", "kind", "head", "house", "service", "friend", "father", "power", "hour", "game",
    "line", "end", "member", "law", "car", "city", "community", "name", "president", "team", "minute", "idea",
    "kid", "body", "information", "back", "parent", "face", "others", "level", "office", "door", "health",
    "person", "art", "war", "history", "party", "result", "change", "morning", "reason", "research", "girl",
    "guy", "moment", "air", "teacher", "force", "education", "good", "new", "first", "last", "long", "great",
    "little", "own", "other", "old", "big", "high", "different", "small", "large", "next", "early", "young",
    "important", "few", "public", "bad", "same", "able", "make", "take", "come", "see", "know", "get", "give",
    "find", "think", "tell", "become", "show", "leave", "feel", "put", "bring", "begin", "keep", "hold", "write",
    "stand", "hear", "let", "mean", "set", "meet", "run", "pay", "sit", "speak", "lie", "lead", "read", "grow",
    "lose", "fall", "send", "build", "understand", "draw", "break", "spend", "cut", "rise", "drive", "buy",
    "wear", "choose", "seek", "throw", "catch", "deal", "win", "forget", "light", "music", "river", "market",
    "paper", "model", "data", "memory", "network", "table", "field", "energy", "space", "green", "blue", "red",
};
constexpr int kNumWords = sizeof(kWords) / sizeof(kWords[0]);

Turn make_turn(std::mt19937_64& rng, int n_words, int max_tokens) {
  return {random_words(rng, n_words), n_words, max_tokens};
}

}  // namespace

Result<WorkloadKind> parse_workload_kind(const std::string& name) {
  if (name == "random") return WorkloadKind::Random;
  if (name == "mixed") return WorkloadKind::Mixed;
  if (name == "multi-turn" || name == "shared-prefix") return WorkloadKind::MultiTurn;
  return Error{strprintf("--workload %s is unknown; use random, mixed or multi-turn", quote_for_error(name).c_str())};
}

const char* workload_kind_name(WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::Random: return "random";
    case WorkloadKind::Mixed: return "mixed";
    case WorkloadKind::MultiTurn: return "multi-turn";
  }
  return "?";
}

std::string random_words(std::mt19937_64& rng, int n) {
  std::uniform_int_distribution<int> pick(0, kNumWords - 1);
  std::string out;
  for (int i = 0; i < n; ++i) {
    if (i) out += ' ';
    out += kWords[pick(rng)];
  }
  return out;
}

std::vector<Session> make_sessions(const WorkloadOptions& o, int n_requests) {
  std::mt19937_64 rng(o.seed);
  std::vector<Session> sessions;
  if (o.kind == WorkloadKind::MultiTurn) {
    const std::string system = random_words(rng, o.prefix_tokens);
    const int turns = std::max(1, o.turns);
    for (int done = 0; done < n_requests;) {
      Session s;
      s.endpoint = Endpoint::Chat;
      s.system_prompt = system;
      s.system_words = o.prefix_tokens;
      for (int t = 0; t < turns && done < n_requests; ++t, ++done) {
        s.turns.push_back(make_turn(rng, o.input_tokens, o.output_tokens));
      }
      sessions.push_back(std::move(s));
    }
    return sessions;
  }
  std::bernoulli_distribution is_long(o.kind == WorkloadKind::Mixed ? o.long_fraction : 0.0);
  for (int i = 0; i < n_requests; ++i) {
    Session s;
    s.endpoint = o.endpoint;
    const bool lng = is_long(rng);
    s.turns.push_back(make_turn(rng, lng ? o.long_input_tokens : o.input_tokens,
                                lng ? o.long_output_tokens : o.output_tokens));
    sessions.push_back(std::move(s));
  }
  return sessions;
}

}  // namespace kairo::bench::serve
