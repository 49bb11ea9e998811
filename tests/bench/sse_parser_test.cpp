#include "bench/serve/sse_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kairo::bench::serve {
namespace {

std::vector<std::string> parse_in_pieces(const std::string& stream, size_t piece) {
  std::vector<std::string> events;
  SseParser p([&](const std::string& d) { events.push_back(d); });
  for (size_t i = 0; i < stream.size(); i += piece) p.feed(std::string_view(stream).substr(i, piece));
  p.finish();
  return events;
}

TEST(SseParser, EventsSurviveAnySplitOfTheBytes) {
  const std::string stream =
      ": comment\r\n\r\ndata: {\"a\":1}\r\n\r\nevent: x\ndata: first\ndata: second\nid: 3\n\ndata:nospace\r\r"
      "data: [DONE]\n\n";
  const std::vector<std::string> want = {"{\"a\":1}", "first\nsecond", "nospace", "[DONE]"};
  for (size_t piece : {1, 2, 3, 7, 1000}) EXPECT_EQ(parse_in_pieces(stream, piece), want) << "piece " << piece;
}

TEST(SseParser, FinishDispatchesAnUnterminatedEvent) {
  EXPECT_EQ(parse_in_pieces("data: tail", 4), std::vector<std::string>{"tail"});
  EXPECT_EQ(parse_in_pieces("data: tail\n", 4), std::vector<std::string>{"tail"});
  EXPECT_TRUE(parse_in_pieces(": only a comment\n\n", 4).empty());
  EXPECT_TRUE(parse_in_pieces("", 4).empty());
}

TEST(SseParser, EmptyDataFieldIsAnEvent) {
  EXPECT_EQ(parse_in_pieces("data:\n\n", 1), std::vector<std::string>{""});
}

}  // namespace
}  // namespace kairo::bench::serve
