// KAIRO_CHECK: on in every build (this suite also runs in the release build, where NDEBUG removes assert()), throws
// InvariantViolation with where it failed and the values involved, and costs nothing but the condition when it holds.
#include "core/check.h"

#include <gtest/gtest.h>

namespace kairo {
namespace {

TEST(Check, APassingCheckFormatsNothing) {
  int n_formatted = 0;
  auto count = [&] { return ++n_formatted; };
  KAIRO_CHECK(1 + 1 == 2, "never formatted: %d", count());
  EXPECT_EQ(n_formatted, 0);
}

TEST(Check, TheConditionIsEvaluatedOnce) {
  int n_evaluated = 0;
  KAIRO_CHECK(++n_evaluated == 1, "evaluated %d times", n_evaluated);
  EXPECT_EQ(n_evaluated, 1);
  EXPECT_THROW(KAIRO_CHECK(++n_evaluated == 1, "evaluated %d times", n_evaluated), InvariantViolation);
  EXPECT_EQ(n_evaluated, 2);
}

TEST(Check, AFailedCheckThrowsWithFileLineMessageAndCondition) {
  const int ref_count = 0, block = 7;
  const int line = __LINE__ + 2;
  try {
    KAIRO_CHECK(ref_count > 0, "block %d released with ref count %d", block, ref_count);
    FAIL() << "no exception";
  } catch (const InvariantViolation& e) {
    EXPECT_EQ(e.file(), "tests/core/check_test.cpp");
    EXPECT_EQ(e.line(), line);
    EXPECT_EQ(e.condition(), "ref_count > 0");
    EXPECT_EQ(e.message(), "block 7 released with ref count 0");
    EXPECT_EQ(std::string(e.what()),
              "tests/core/check_test.cpp:" + std::to_string(line) +
                  ": block 7 released with ref count 0 (check: ref_count > 0)");
  }
}

TEST(Check, AViolationIsALogicError) {
  // Code that must survive any programmer error (the engine loop) can catch it as one.
  EXPECT_THROW(KAIRO_CHECK(false, "plain message"), std::logic_error);
}

TEST(Check, WorksAsTheOnlyStatementOfAnUnbracedIf) {
  bool threw = false;
  try {
    if (true)
      KAIRO_CHECK(false, "x");
    else
      threw = false;
  } catch (const InvariantViolation& e) {
    threw = true;
    EXPECT_EQ(e.message(), "x");
  }
  EXPECT_TRUE(threw);
}

}  // namespace
}  // namespace kairo
