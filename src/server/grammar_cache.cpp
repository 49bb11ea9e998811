#include "server/grammar_cache.h"

#include <condition_variable>
#include <thread>

#include "core/format.h"
#include "grammar/byte_grammar.h"

namespace kairo::server {
namespace {

// Shared by the waiting request and the compiling thread, which may outlive the wait.
struct Compilation {
  std::mutex mutex;
  std::condition_variable done_cv;
  bool done = false;
  std::shared_ptr<grammar::StackArena> arena;
  std::string error;
};

}  // namespace

GrammarCache::GrammarCache(size_t max_entries, std::chrono::milliseconds time_limit, int max_compiling)
    : max_entries_(max_entries), time_limit_(time_limit), max_compiling_(max_compiling) {}

ApiResult<std::shared_ptr<grammar::StackArena>> GrammarCache::get(const std::string& gbnf, const std::string& param,
                                                                  const std::string& root) {
  const std::string key = root + '\0' + gbnf;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->first != key) continue;
      entries_.splice(entries_.begin(), entries_, it);
      return entries_.front().second;
    }
    if (n_compiling_->load() >= max_compiling_) {
      ApiError e = api_error(429, strprintf("%d output grammars are being compiled already; retry later",
                                            max_compiling_));
      e.headers.emplace_back("Retry-After", "1");
      return e;
    }
    ++*n_compiling_;
  }
  auto job = std::make_shared<Compilation>();
  std::thread([n_compiling = n_compiling_, job, gbnf, root] {
    auto lowered = grammar::compile_gbnf(gbnf, root);
    std::shared_ptr<grammar::StackArena> arena;
    if (lowered.ok()) arena = std::make_shared<grammar::StackArena>(std::move(*lowered));
    {
      std::lock_guard<std::mutex> lock(job->mutex);
      job->arena = std::move(arena);
      if (!lowered.ok()) job->error = lowered.error().message;
      job->done = true;
    }
    job->done_cv.notify_all();
    --*n_compiling;
  }).detach();

  std::unique_lock<std::mutex> wait(job->mutex);
  if (!job->done_cv.wait_for(wait, time_limit_, [&] { return job->done; })) {
    return invalid_param(param, strprintf("'%s': the output grammar did not compile within %.1f s; simplify it "
                                          "(fewer alternatives, smaller repetition bounds)",
                                          param.c_str(), static_cast<double>(time_limit_.count()) / 1000.0));
  }
  if (!job->arena) return invalid_param(param, "'" + param + "': the output grammar is invalid: " + job->error);
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.emplace_front(key, job->arena);
  if (entries_.size() > max_entries_) entries_.pop_back();
  return job->arena;
}

}  // namespace kairo::server
