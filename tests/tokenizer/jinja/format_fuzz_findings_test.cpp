// Reproducers for what fuzzing the chat-template interpreter found in printf-style formatting (`fmt % args`,
// jinja/operators.cpp percent_format): widths beyond its 512-byte snprintf buffer, and floats too large for %d.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tokenizer/jinja/chat_template.h"

namespace kairo::jinja {
namespace {

Result<std::string> render_plain(const std::string& src) { return render(src, nlohmann::ordered_json::object()); }

TEST(JinjaFormatFindings, WideFieldIsNotCutAtTheBuffer) {
  // Python: '%5000s' % 'x' is 4999 spaces and x.
  auto r = render_plain("{{ '%5000s' % 'x' }}|{{ '%-600d' % 7 }}|");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, std::string(4999, ' ') + "x|7" + std::string(599, ' ') + "|");
}

TEST(JinjaFormatFindings, HugeWidthIsALimitErrorNotAGigabyteFormat) {
  // snprintf formats all 999,999,999 bytes (seconds of CPU) before cutting to the buffer; the field must be
  // refused up front as larger than max_output_bytes.
  auto r = render_plain("{{ '%0999999999d' % 1 }}");
  ASSERT_FALSE(r.ok()) << "rendered " << r->size() << " bytes";
  EXPECT_EQ(r.error().message.rfind("template built a string larger than max_output_bytes", 0), 0u)
      << r.error().message;
}

TEST(JinjaFormatFindings, FloatBeyondInt64ForPercentD) {
  // (long long)1e300 is undefined behaviour (UBSan: float-cast-overflow, operators.cpp:393). Python prints the
  // exact integer; an error would also be acceptable, a wrapped number is not.
  auto r = render_plain("{{ '%d' % 1e300 }}");
  if (r.ok()) {
    EXPECT_EQ(*r, "1000000000000000052504760255204420248704468581108159154915854115511802457988908195786371375080447864"
                  "0437044438328838781769425232353604305756447921847867069828483872009265758037378302337947880900593689"
                  "5323497079994508111903896764088007465274278014249457925878882005684283811566947219638686545940054016"
                  "0");
  }
}

TEST(JinjaFormatFindings, NonFiniteFloatAsAnIntegerArgumentIsAnError) {
  // round(-inf) converted -inf to int64 (UBSan: float-cast-overflow, filters.cpp int_arg). A float argument is
  // truncated like Python's int(); one no int64 holds is a clear error naming the argument.
  auto r = render_plain("{{ 2.5 | round(-400e308*10) | int }}");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("precision must be an integer that fits in 64 bits"), std::string::npos)
      << r.error().message;
  auto nan = render_plain("{{ 2.5 | round(1e300) }}");
  EXPECT_FALSE(nan.ok());
  auto truncated = render_plain("{{ 2.567 | round(2.9) }}");
  ASSERT_TRUE(truncated.ok()) << truncated.error().message;
  EXPECT_EQ(*truncated, "2.57");
}

TEST(JinjaFormatFindings, RoundToFarNegativePrecisionIsZero) {
  // Python: round(2.5, -400) == 0.0 (10^400 is inf here, and 0 * inf would be NaN).
  auto r = render_plain("{{ 2.5 | round(-400) }}|{{ 12345.0 | round(-2) }}|{{ 1e308 | round(400) }}");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, "0.0|12300.0|1e+308");
}

TEST(JinjaFormatFindings, HugeIntegerArgumentsAreBoundedNotOverflowed) {
  // truncate(INT64_MAX, leeway=5) computed length + leeway (signed overflow); batch(10**15, fill_with=0) grew a
  // padding list of 10^15 items before checking its size.
  auto t = render_plain("{{ 'abc def' | truncate(9223372036854775807, leeway=5) }}");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(*t, "abc def");
  auto b = render_plain("{{ [1, 2, 3] | batch(1000000000000000, 0) | list | length }}");
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().message.find("list"), std::string::npos) << b.error().message;
}

}  // namespace
}  // namespace kairo::jinja
