#include "terminal/progress_bar.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "core/format.h"
#include "terminal/terminal_info.h"

namespace kairo::tools {
namespace {

constexpr double kRedrawSeconds = 0.1;
constexpr int kMaxBarWidth = 30;
constexpr int kMinBarWidth = 10;

// Three significant digits ("266 MiB", "1.02 GiB"): a progress line has little room.
std::string compact_bytes(double n) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (n >= 1000.0 && u < 4) {
    n /= 1024.0;
    ++u;
  }
  if (u == 0) return strprintf("%.0f B", n);
  return strprintf(n >= 100 ? "%.0f %s" : n >= 10 ? "%.1f %s" : "%.2f %s", n, units[u]);
}

std::string amount(uint64_t n, ProgressUnit unit) {
  return unit == ProgressUnit::Bytes ? compact_bytes(static_cast<double>(n)) : std::to_string(n);
}

std::string rate(double per_second, ProgressUnit unit) {
  if (unit == ProgressUnit::Bytes) return compact_bytes(per_second) + "/s";
  return strprintf(per_second >= 10 ? "%.0f/s" : "%.1f/s", per_second);
}

std::string duration(double s) {
  const long long t = std::llround(std::max(0.0, s));
  if (t < 60) return strprintf("%llds", t);
  if (t < 3600) return strprintf("%lldm%02llds", t / 60, t % 60);
  return strprintf("%lldh%02lldm", t / 3600, (t / 60) % 60);
}

}  // namespace

std::string progress_line(const ProgressState& s, int columns) {
  const bool known = s.total > 0;
  const double fraction = known ? std::min(1.0, static_cast<double>(s.done) / static_cast<double>(s.total)) : 0.0;
  const double per_second = s.elapsed_s > 0 ? static_cast<double>(s.done) / s.elapsed_s : 0.0;
  std::string numbers = known ? strprintf("%3d%%  %s/%s", static_cast<int>(fraction * 100),
                                          amount(s.done, s.unit).c_str(), amount(s.total, s.unit).c_str())
                              : amount(s.done, s.unit);
  if (per_second > 0) numbers += "  " + rate(per_second, s.unit);
  if (known && per_second > 0 && s.done < s.total)
    numbers += "  ETA " + duration(static_cast<double>(s.total - s.done) / per_second);
  else if (known && s.done >= s.total)
    numbers += "  " + duration(s.elapsed_s);

  const int fixed = static_cast<int>(s.label.size() + 1 + numbers.size());
  std::string line(s.label);
  if (known) {
    const int bar = std::clamp(columns - 1 - fixed - 4, 0, kMaxBarWidth);
    if (bar >= kMinBarWidth) {
      const int filled = static_cast<int>(fraction * bar);
      line += " [" + std::string(static_cast<size_t>(filled), '#') + std::string(static_cast<size_t>(bar - filled), '-') + "]";
    }
  }
  line += " " + numbers;
  // The detail takes what is left of the line; a terminal that wraps a line would break the carriage-return redraw.
  const int room = columns - 1 - static_cast<int>(line.size()) - 2;
  if (!s.detail.empty() && room >= 8) {
    std::string detail(s.detail.substr(0, static_cast<size_t>(room)));
    line += "  " + detail;
  }
  if (static_cast<int>(line.size()) > columns - 1) line.resize(static_cast<size_t>(std::max(0, columns - 1)));
  return line;
}

bool progress_wanted(bool quiet) {
  if (quiet) return false;
  const char* term = std::getenv("TERM");
  if (term && std::strcmp(term, "dumb") == 0) return false;
  return is_terminal(STDERR_FILENO);
}

ProgressBar::ProgressBar(std::string label, uint64_t total, ProgressUnit unit, bool enabled, FILE* out,
                         double delay_s)
    : label_(std::move(label)), total_(total), unit_(unit), enabled_(enabled), out_(out), delay_s_(delay_s) {}

void ProgressBar::update(uint64_t done, std::string_view detail) {
  done_ = done;
  if (!enabled_) return;
  const Clock::time_point now = Clock::now();
  if (std::chrono::duration<double>(now - start_).count() < delay_s_) return;
  const bool complete = total_ > 0 && done >= total_;
  if (drawn_ && !complete && std::chrono::duration<double>(now - last_draw_).count() < kRedrawSeconds) return;
  last_draw_ = now;
  draw(detail);
}

void ProgressBar::draw(std::string_view detail) {
  const ProgressState s{label_, done_, total_, unit_,
                        std::chrono::duration<double>(Clock::now() - start_).count(), detail};
  const int columns = terminal_columns(::fileno(out_));
  std::fprintf(out_, "\r%s\x1b[K", progress_line(s, columns).c_str());
  std::fflush(out_);
  drawn_ = true;
}

void ProgressBar::finish() {
  if (!drawn_) return;
  std::fputs("\r\x1b[K", out_);
  std::fflush(out_);
  drawn_ = false;
}

}  // namespace kairo::tools
