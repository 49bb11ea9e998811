#pragma once
// Drives the sessions against the server at one load level, on a single-threaded event loop (coroutines), so
// thousands of streams cost no threads and every timestamp is taken the moment its bytes are read.
//   closed loop, concurrency C: C clients, each sends its next request when the previous one finished;
//   open loop, rate r:          conversations start at Poisson arrivals of r per second, whatever the server's pace.
// A multi-turn conversation always runs its turns one after the other, feeding back the replies.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bench/serve/openai_request.h"
#include "bench/serve/workload.h"

namespace kairo::bench::serve {

struct LoadLevel {
  bool open_loop = false;
  double value = 1;          // concurrency (closed loop) or requests per second (open loop)
  std::string label() const; // "concurrency 4", "rate 2.5/s"
};

struct LevelRun {
  LoadLevel level;
  std::vector<RequestRecord> records;  // one per turn, in session order
  double duration_s = 0;               // first send to last response end
  std::string error;                   // the run itself failed (not a single request)
};

// (requests finished, requests in all, output tokens so far, seconds elapsed)
using ProgressFn = std::function<void(int, int, int64_t, double)>;

LevelRun run_level(const ClientConfig& client, const std::vector<Session>& sessions, const LoadLevel& level,
                   uint64_t seed, const ProgressFn& progress);

}  // namespace kairo::bench::serve
