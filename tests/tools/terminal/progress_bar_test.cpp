#include "terminal/progress_bar.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <thread>

namespace kairo::tools {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

// What a bar wrote to its stream.
std::string written(FILE* f) {
  std::fflush(f);
  std::string out(static_cast<size_t>(std::ftell(f)), '\0');
  std::rewind(f);
  out.resize(std::fread(out.data(), 1, out.size(), f));
  return out;
}

TEST(ProgressLine, ShowsBarPercentAmountsRateAndEta) {
  const ProgressState s{"loading m.gguf", 512 * kMiB, 1024 * kMiB, ProgressUnit::Bytes, 2.0, "blk.3.ffn_up.weight"};
  const std::string line = progress_line(s, 120);
  EXPECT_EQ(line.rfind("loading m.gguf [", 0), 0u) << line;
  EXPECT_NE(line.find("] "), std::string::npos) << line;
  EXPECT_NE(line.find(" 50%  512 MiB/1.00 GiB  256 MiB/s  ETA 2s  blk.3.ffn_up.weight"), std::string::npos) << line;
  // Half the bar is filled.
  const size_t open = line.find('['), close = line.find(']');
  const std::string bar = line.substr(open + 1, close - open - 1);
  const size_t filled = bar.find_first_not_of('#');
  EXPECT_EQ(filled, bar.size() / 2) << bar;
  EXPECT_EQ(bar.find_first_not_of('-', filled), std::string::npos) << bar;
}

TEST(ProgressLine, CountsItemsAndSpellsLongEtas) {
  const ProgressState s{"quantize tensors", 3, 381, ProgressUnit::Items, 3.0, ""};
  const std::string line = progress_line(s, 120);
  EXPECT_NE(line.find("  0%  3/381  1.0/s  ETA 6m18s"), std::string::npos) << line;
  const ProgressState hours{"x", 1, 10000, ProgressUnit::Items, 1.0, ""};
  EXPECT_NE(progress_line(hours, 120).find("ETA 2h46m"), std::string::npos) << progress_line(hours, 120);
}

TEST(ProgressLine, WithoutATotalShowsNeitherBarNorEta) {
  const ProgressState s{"reading", 5 * kMiB, 0, ProgressUnit::Bytes, 1.0, ""};
  const std::string line = progress_line(s, 100);
  EXPECT_EQ(line, "reading 5.00 MiB  5.00 MiB/s");
}

TEST(ProgressLine, WhenDoneShowsTheTimeItTook) {
  const ProgressState s{"synth tensors", 39, 39, ProgressUnit::Items, 75.0, ""};
  const std::string line = progress_line(s, 100);
  EXPECT_NE(line.find("100%  39/39  0.5/s  1m15s"), std::string::npos) << line;
  EXPECT_EQ(line.find("ETA"), std::string::npos) << line;
}

// A line that wraps breaks the carriage-return redraw: every width keeps it inside the terminal, cutting the detail
// first and the bar next.
TEST(ProgressLine, NeverWiderThanTheTerminal) {
  const std::string detail(300, 'd');
  for (int columns = 10; columns <= 200; ++columns) {
    const ProgressState s{"loading model.gguf", 700 * kMiB, 1024 * kMiB, ProgressUnit::Bytes, 1.5, detail};
    const std::string line = progress_line(s, columns);
    EXPECT_LE(static_cast<int>(line.size()), columns - 1) << columns << ": " << line;
    if (columns >= 80) EXPECT_NE(line.find("ETA"), std::string::npos) << columns << ": " << line;
  }
  const ProgressState wide{"loading", 1, 2, ProgressUnit::Items, 1.0, "name"};
  EXPECT_NE(progress_line(wide, 200).find("  name"), std::string::npos) << "room left: the detail shows";
}

TEST(ProgressBarTest, DisabledWritesNothing) {
  FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    ProgressBar bar("loading", 100, ProgressUnit::Items, false, f);
    for (uint64_t i = 0; i <= 100; ++i) bar.update(i, "x");
  }
  EXPECT_EQ(written(f), "");
  std::fclose(f);
}

TEST(ProgressBarTest, RedrawsInPlaceAtMostTenTimesASecondThenClearsTheLine) {
  FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  ProgressBar bar("work", 1000, ProgressUnit::Items, true, f);
  for (uint64_t i = 0; i < 999; ++i) bar.update(i);  // well under 0.1 s: one draw
  std::string out = written(f);
  EXPECT_EQ(out.rfind("\rwork [", 0), 0u) << out;
  EXPECT_EQ(out.find('\n'), std::string::npos) << "in place, never a new line";
  size_t draws = 0;
  for (size_t p = out.find('\r'); p != std::string::npos; p = out.find('\r', p + 1)) ++draws;
  EXPECT_EQ(draws, 1u) << out;
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  bar.update(999);
  bar.update(1000);  // completion always draws
  out = written(f);
  EXPECT_NE(out.find(" 99%  999/1000"), std::string::npos) << out;
  EXPECT_NE(out.find("100%  1000/1000"), std::string::npos) << out;
  bar.finish();
  out = written(f);
  EXPECT_EQ(out.substr(out.size() - 4), "\r\x1b[K") << "the line is cleared for what comes next";
  bar.finish();
  EXPECT_EQ(written(f), out) << "finishing twice clears once";
  std::fclose(f);
}

TEST(ProgressBarTest, WorkThatEndsBeforeTheDelayShowsNothing) {
  FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    ProgressBar bar("loading", 10, ProgressUnit::Items, true, f, 30.0);
    for (uint64_t i = 0; i <= 10; ++i) bar.update(i);
  }
  EXPECT_EQ(written(f), "");
  std::fclose(f);
}

TEST(ProgressBarTest, QuietWantsNoBar) { EXPECT_FALSE(progress_wanted(true)); }

}  // namespace
}  // namespace kairo::tools
