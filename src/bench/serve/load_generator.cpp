#include "bench/serve/load_generator.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <random>

#include "core/format.h"

namespace kairo::bench::serve {

namespace net = boost::asio;

std::string LoadLevel::label() const {
  return open_loop ? strprintf("rate %g/s", value) : strprintf("concurrency %g", value);
}

namespace {

struct LevelState {
  const ClientConfig& client;
  const std::vector<Session>& sessions;
  std::vector<size_t> first_record;  // index of each session's first turn in records
  LevelRun& run;
  Clock::time_point start;
  const ProgressFn& progress;
  int n_done = 0;
  int64_t output_tokens = 0;
  size_t next_session = 0;
};

net::awaitable<void> run_session(LevelState& st, size_t s) {
  const Session& session = st.sessions[s];
  std::vector<std::string> replies;
  for (size_t t = 0; t < session.turns.size(); ++t) {
    RequestRecord& rec = st.run.records[st.first_record[s] + t];
    co_await run_request(st.client, session, static_cast<int>(t), replies, st.start, rec);
    replies.push_back(rec.text);
    st.n_done += 1;
    st.output_tokens += rec.ok ? rec.output_tokens : 0;
    if (st.progress) {
      st.progress(st.n_done, static_cast<int>(st.run.records.size()), st.output_tokens,
                  std::chrono::duration<double>(Clock::now() - st.start).count());
    }
  }
}

net::awaitable<void> closed_loop_client(LevelState& st) {
  while (st.next_session < st.sessions.size()) {
    const size_t s = st.next_session++;
    co_await run_session(st, s);
  }
}

net::awaitable<void> open_loop_dispatcher(LevelState& st, double rate, uint64_t seed) {
  auto executor = co_await net::this_coro::executor;
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> gap(rate);
  net::steady_timer timer(executor);
  Clock::time_point next = st.start;
  for (size_t s = 0; s < st.sessions.size(); ++s) {
    // Arrival times are fixed in advance (not "sleep after sending"), so a slow send does not lower the rate.
    timer.expires_at(next);
    co_await timer.async_wait(net::use_awaitable);
    net::co_spawn(executor, run_session(st, s), net::detached);
    next += std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(gap(rng)));
  }
}

}  // namespace

LevelRun run_level(const ClientConfig& client, const std::vector<Session>& sessions, const LoadLevel& level,
                   uint64_t seed, const ProgressFn& progress) {
  LevelRun run;
  run.level = level;
  if (!(level.value > 0)) {
    run.error = "the load level must be positive";
    return run;
  }
  LevelState st{client, sessions, {}, run, Clock::now(), progress};
  size_t n_records = 0;
  for (const auto& s : sessions) {
    st.first_record.push_back(n_records);
    n_records += s.turns.size();
  }
  run.records.resize(n_records);

  net::io_context ioc(1);
  st.start = Clock::now();
  if (level.open_loop) {
    net::co_spawn(ioc, open_loop_dispatcher(st, level.value, seed), net::detached);
  } else {
    const size_t n_clients = std::min(sessions.size(), static_cast<size_t>(level.value));
    for (size_t c = 0; c < n_clients; ++c) net::co_spawn(ioc, closed_loop_client(st), net::detached);
  }
  try {
    ioc.run();
  } catch (const std::exception& e) {
    run.error = std::string("load generator failed: ") + e.what();
  }
  double end = 0;
  for (const auto& r : run.records) end = std::max(end, r.start_s + r.e2e_s);
  run.duration_s = end;
  return run;
}

}  // namespace kairo::bench::serve
