// JSON Schema -> grammar, checked against an independent validator: for every schema in
// tests/data/json-schemas/conformance.json, random texts the generated grammar derives (the reference sampler,
// which walks the grammar's AST and shares no code with the matcher) must validate under Python's `jsonschema`
// (Debian's python3-jsonschema, with a format checker), and the matcher must accept each of them. Unsupported
// keywords must be refused with the keyword and its JSON pointer named.
#include "grammar/json_schema.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <random>

#include "grammar/byte_grammar.h"
#include "grammar/gbnf_parser.h"
#include "grammar/matcher.h"
#include "reference_matcher.h"

namespace kairo::grammar {
namespace {

using ordered = nlohmann::ordered_json;

ordered load_cases() {
  std::ifstream in(std::string(KAIRO_SOURCE_DIR) + "/tests/data/json-schemas/conformance.json");
  return ordered::parse(in);
}

bool matcher_accepts(const ByteGrammar& g, const std::string& text) {
  GrammarMatcher m(std::make_shared<StackArena>(g), 0);
  return m.accept(text) && m.can_end();
}

TEST(JsonSchema, SamplesOfEverySchemaValidateIndependently) {
  const ordered cases = load_cases();
  ASSERT_GE(cases.size(), 30u);
  ordered out = ordered::array();
  for (const auto& c : cases) {
    const std::string name = c["name"];
    auto gbnf = json_schema_to_gbnf(c["schema"]);
    ASSERT_TRUE(gbnf.ok()) << name << ": " << gbnf.error().message;
    auto ast = parse_gbnf(*gbnf);
    ASSERT_TRUE(ast.ok()) << name << ": " << ast.error().message << "\n" << *gbnf;
    auto lowered = lower_grammar(*ast);
    ASSERT_TRUE(lowered.ok()) << name << ": " << lowered.error().message << "\n" << *gbnf;
    std::mt19937 rng(1234);
    int got = 0;
    for (int attempt = 0; attempt < 400 && got < 10; ++attempt) {
      auto text = testing::sample_from_grammar(*ast, rng, 400);
      if (!text) continue;
      ++got;
      EXPECT_TRUE(matcher_accepts(*lowered, *text)) << name << ": the matcher refuses its own sample " << *text;
      out.push_back({{"name", name}, {"schema", c["schema"]}, {"text", *text}});
    }
    EXPECT_EQ(got, 10) << name << ": the sampler found too few texts under 400 bytes\n" << *gbnf;
  }
  const std::string path = std::string(KAIRO_BINARY_DIR) + "/json_schema_samples.json";
  std::ofstream(path) << out.dump();
  const std::string cmd = "/usr/bin/python3 " + std::string(KAIRO_SOURCE_DIR) +
                          "/tests/grammar/validate_json_samples.py " + path;
  EXPECT_EQ(std::system(cmd.c_str()), 0) << "some samples do not validate: see the output above";
}

TEST(JsonSchema, UnsupportedKeywordsAreNamedWithTheirPointer) {
  const std::vector<std::pair<const char*, const char*>> cases = {
      {R"({"type":"object","properties":{"a":{"type":"string","contentEncoding":"base64"}}})",
       "the keyword 'contentEncoding' is not supported"},
      {R"({"type":"object","patternProperties":{"^x":{}}})", "'patternProperties' is not supported"},
      {R"({"type":"array","uniqueItems":true})", "uniqueItems: true is not supported"},
      {R"({"type":"number","multipleOf":2})", "'multipleOf' is not supported"},
      {R"({"not":{"type":"string"}})", "'not' is not supported"},
      {R"({"type":"string","format":"hostname"})", "the string format 'hostname' is not supported"},
      {R"({"oneOf":[{"type":"string"},{"type":"string","maxLength":2}]})", "branches 0 and 1 can match the same"},
      {R"({"$ref":"#/$defs/missing"})", "does not resolve"},
      {R"({"type":"string","pattern":"(a)\\1"})", "backreferences are not supported"},
      {R"({"type":"number","maximum":5})", "bounds on 'number'"},
  };
  for (const auto& [schema, expected] : cases) {
    auto r = json_schema_to_gbnf(std::string_view(schema));
    ASSERT_FALSE(r.ok()) << schema;
    EXPECT_NE(r.error().message.find(expected), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find("(at #"), std::string::npos) << r.error().message;
  }
  auto nested = json_schema_to_gbnf(std::string_view(R"({"properties":{"a/b":{"items":{"if":{}}}}})"));
  ASSERT_FALSE(nested.ok());
  EXPECT_NE(nested.error().message.find("(at #/properties/a~1b/items)"), std::string::npos) << nested.error().message;
}

TEST(JsonSchema, PropertiesKeepTheSchemasOrderAndRejectWhatTheSchemaForbids) {
  auto gbnf = json_schema_to_gbnf(std::string_view(
      R"({"type":"object","properties":{"zeta":{"type":"integer"},"alpha":{"type":"string"}},"required":["zeta"],
          "additionalProperties":false})"));
  ASSERT_TRUE(gbnf.ok()) << gbnf.error().message;
  auto g = compile_gbnf(*gbnf);
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_TRUE(matcher_accepts(*g, R"({"zeta":1,"alpha":"x"})"));
  EXPECT_TRUE(matcher_accepts(*g, "{ \"zeta\": 1 }"));
  EXPECT_FALSE(matcher_accepts(*g, R"({"alpha":"x"})"));           // required missing
  EXPECT_FALSE(matcher_accepts(*g, R"({"zeta":1,"other":2})"));    // additionalProperties: false
  EXPECT_FALSE(matcher_accepts(*g, R"({"zeta":"1"})"));            // wrong type
  EXPECT_FALSE(matcher_accepts(*g, "{\"zeta\":1" + std::string(40, ' ') + "}"));  // unbounded whitespace
}

TEST(JsonSchema, ExtraKeysNeverRepeatADeclaredName) {
  auto gbnf = json_schema_to_gbnf(std::string_view(
      R"({"type":"object","properties":{"ab":{"type":"integer"}},"additionalProperties":{"type":"string"}})"));
  ASSERT_TRUE(gbnf.ok()) << gbnf.error().message;
  auto g = compile_gbnf(*gbnf);
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_TRUE(matcher_accepts(*g, R"({"ab":1,"a":"x","abc":"y","b":"z"})"));
  EXPECT_TRUE(matcher_accepts(*g, R"({"a":"x"})"));
  EXPECT_FALSE(matcher_accepts(*g, R"({"ab":1,"ab":"x"})"));
  EXPECT_FALSE(matcher_accepts(*g, R"({"ab":"x"})"));
}

}  // namespace
}  // namespace kairo::grammar
