#pragma once
// A one-line progress bar with rate and ETA, for the commands that take long: model load, quantize, synth, lora
// merge, bench serve. It draws only where someone watches (stderr a terminal, no --quiet: progress_wanted); anywhere
// else every call is a no-op, so logs and pipes never get carriage-return noise.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace kairo::tools {

enum class ProgressUnit { Bytes, Items };

// What one line shows.
struct ProgressState {
  std::string_view label;
  uint64_t done = 0;
  uint64_t total = 0;  // 0: unknown (no bar, no ETA)
  ProgressUnit unit = ProgressUnit::Items;
  double elapsed_s = 0;
  std::string_view detail;  // what is being worked on now (a tensor's name), cut to fit
};

// "label [######------]  48%  1.21 GiB/2.52 GiB  812.0 MiB/s  ETA 3s  detail", at most `columns` characters (the
// detail is cut first, then the bar narrows). The rate is the average since the start, so the ETA does not jump.
std::string progress_line(const ProgressState& s, int columns);

// Whether progress bars are wanted on stderr: it is a terminal, TERM is not "dumb", and the user did not ask for
// quiet output.
bool progress_wanted(bool quiet);

class ProgressBar {
 public:
  // Draws on `out` only when `enabled`, and only once `delay_s` has passed: work that ends sooner shows nothing (a
  // small model's load never flashes a bar). Redraws at most 10 times a second.
  ProgressBar(std::string label, uint64_t total, ProgressUnit unit, bool enabled, FILE* out = stderr,
              double delay_s = 0);
  ~ProgressBar() { finish(); }
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void set_total(uint64_t total) { total_ = total; }
  void update(uint64_t done, std::string_view detail = {});
  // Clears the line (once drawn), so what the command prints next starts on a clean line.
  void finish();

 private:
  using Clock = std::chrono::steady_clock;
  void draw(std::string_view detail);

  std::string label_;
  uint64_t total_ = 0;
  uint64_t done_ = 0;
  ProgressUnit unit_;
  bool enabled_;
  FILE* out_;
  double delay_s_;
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_draw_{};
  bool drawn_ = false;
};

}  // namespace kairo::tools
