#pragma once
// Output grammars compiled once and shared: requests with the same GBNF text (the same schema, regex or choice list
// turn into the same text) get the same compiled grammar, the most recently used kept. Compilation runs on a
// thread of its own, never the engine's, and a grammar that takes longer than the limit is refused with a 400
// instead of holding up the request; the engine later shares one token-mask cache per compiled grammar.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "grammar/stack_arena.h"
#include "server/api_error.h"

namespace kairo::server {

class GrammarCache {
 public:
  explicit GrammarCache(size_t max_entries = 64, std::chrono::milliseconds time_limit = std::chrono::seconds(5),
                        int max_compiling = 4);

  // The compiled grammar of `gbnf`, or a 400 naming `param` (syntax errors with line and column, undefined rules,
  // left recursion, the time limit), or a 429 when max_compiling compilations already run.
  ApiResult<std::shared_ptr<grammar::StackArena>> get(const std::string& gbnf, const std::string& param,
                                                      const std::string& root = "root");

 private:
  size_t max_entries_;
  std::chrono::milliseconds time_limit_;
  int max_compiling_;
  mutable std::mutex mutex_;
  std::list<std::pair<std::string, std::shared_ptr<grammar::StackArena>>> entries_;  // most recent first
  // Shared with the compiling threads, which may outlive a wait that timed out (and this cache).
  std::shared_ptr<std::atomic<int>> n_compiling_ = std::make_shared<std::atomic<int>>(0);
};

}  // namespace kairo::server
