// The keys file of `kairo serve --api-keys-file`: a full entry, the defaults, every validation error (pinned, since
// an operator reads them), and which models a key may use.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "server/tenants.h"

namespace kairo::server {
namespace {

std::string parse_error(const std::string& text) {
  auto r = parse_tenants(text, "keys.json");
  if (r.ok()) return "(parsed)";
  return r.error().message;
}

TEST(TenantsTest, ParsesEveryField) {
  auto r = parse_tenants(R"({"keys": [
      {"name": "team-a", "key": "sk-a", "max_concurrent_requests": 8, "tokens_per_minute": 100000,
       "priority": "high", "models": ["kairo", "kairo-alias"]},
      {"name": "team-b", "key": "sk-b", "priority": "low", "weight": 2.5},
      {"name": "batch", "key": "sk-c", "max_concurrent_requests": 0, "tokens_per_minute": 0}]})",
                         "keys.json");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->size(), 3u);
  const Tenant& a = (*r)[0];
  EXPECT_EQ(a.name, "team-a");
  EXPECT_EQ(a.key, "sk-a");
  EXPECT_EQ(a.max_concurrent_requests, 8);
  EXPECT_EQ(a.tokens_per_minute, 100000);
  EXPECT_EQ(a.priority, PriorityClass::High);
  EXPECT_EQ(a.weight, 4.0);
  EXPECT_EQ(a.models, (std::vector<std::string>{"kairo", "kairo-alias"}));
  const Tenant& b = (*r)[1];
  EXPECT_EQ(b.priority, PriorityClass::Low);
  EXPECT_EQ(b.weight, 2.5);  // overrides the class's 0.25
  EXPECT_TRUE(b.may_use_every_model());
  EXPECT_EQ(b.max_concurrent_requests, 0);
  EXPECT_EQ(b.tokens_per_minute, 0);
  const Tenant& c = (*r)[2];  // 0 = no limit, as absent
  EXPECT_EQ(c.max_concurrent_requests, 0);
  EXPECT_EQ(c.tokens_per_minute, 0);
  EXPECT_EQ(c.priority, PriorityClass::Normal);
  EXPECT_EQ(c.weight, 1.0);
}

TEST(TenantsTest, WeightOverridesTheClassWhateverTheFieldOrder) {
  auto r = parse_tenants(R"({"keys": [{"weight": 3, "name": "x", "priority": "high", "key": "k"}]})", "f");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ((*r)[0].weight, 3.0);
  EXPECT_EQ((*r)[0].priority, PriorityClass::High);
}

TEST(TenantsTest, ClassWeights) {
  EXPECT_EQ(priority_class_weight(PriorityClass::High), 4.0);
  EXPECT_EQ(priority_class_weight(PriorityClass::Normal), 1.0);
  EXPECT_EQ(priority_class_weight(PriorityClass::Low), 0.25);
  EXPECT_STREQ(priority_class_name(PriorityClass::Low), "low");
}

TEST(TenantsTest, FileLevelErrors) {
  EXPECT_EQ(parse_error("{\"keys\": ["),
            "keys file keys.json: not valid JSON: parse error at line 1, column 11: syntax error while parsing value "
            "- unexpected end of input; expected '[', '{', or a literal");
  EXPECT_EQ(parse_error("[]"), "keys file keys.json: must be a JSON object like {\"keys\": [...]}, got an array");
  EXPECT_EQ(parse_error(R"({"keys": [], "extra": 1})"),
            "keys file keys.json: unknown top-level field \"extra\"; the file holds only \"keys\"");
  EXPECT_EQ(parse_error("{}"),
            "keys file keys.json: \"keys\" must be an array of {\"name\": ..., \"key\": ...} entries, got nothing");
  EXPECT_EQ(parse_error(R"({"keys": {"name": "a"}})"),
            "keys file keys.json: \"keys\" must be an array of {\"name\": ..., \"key\": ...} entries, got an object");
  EXPECT_EQ(parse_error(R"({"keys": []})"),
            "keys file keys.json: \"keys\" is empty; list at least one key (a server with no keys would need none)");
}

TEST(TenantsTest, EntryErrorsNameTheEntryAndTheFix) {
  const std::string k0 = "keys file keys.json: keys[0]";
  const std::string a = k0 + " (\"a\")";
  EXPECT_EQ(parse_error(R"({"keys": ["sk-1"]})"),
            k0 + ": must be an object like {\"name\": ..., \"key\": ...}, got a string");
  EXPECT_EQ(parse_error(R"({"keys": [{"key": "sk-1"}]})"),
            k0 + ": has no \"name\"; give each key a name (it labels the key's metrics and errors)");
  EXPECT_EQ(parse_error(R"({"keys": [{"name": 5, "key": "sk-1"}]})"),
            k0 + ": \"name\" must be a string, got an integer");
  EXPECT_EQ(parse_error(R"({"keys": [{"name": "", "key": "sk-1"}]})"),
            k0 + ": \"name\" is empty; give each key a name");
  EXPECT_EQ(parse_error(R"({"keys": [{"name": "a\nb", "key": "sk-1"}]})"),
            k0 + ": \"name\" must be at most 128 bytes without control characters");
  EXPECT_EQ(parse_error(R"({"keys": [{"name": "a"}]})"),
            a + ": has no \"key\"; add the secret clients send as 'Authorization: Bearer <key>'");
  EXPECT_EQ(parse_error(R"({"keys": [{"name": "a", "key": ""}]})"),
            a + ": \"key\" is empty; a key must be a non-empty secret");
  EXPECT_EQ(parse_error(R"({"keys": [{"name": "a", "key": 12}]})"), a + ": \"key\" must be a string, got an integer");
  EXPECT_EQ(parse_error(R"({"keys": [{"name": "a", "key": "sk 1"}]})"),
            a + ": \"key\" holds spaces or control characters, which cannot travel in an Authorization header");
  EXPECT_EQ(parse_error(R"({"keys": [{"name": "a", "key": "k", "max_concurent_requests": 8}]})"),
            a + ": unknown field \"max_concurent_requests\"; the fields are name, key, max_concurrent_requests, "
                "tokens_per_minute, priority, weight, models");
  EXPECT_EQ(parse_error(R"({"keys": [{"name": "a", "key": "k", "max_concurrent_requests": -1}]})"),
            a + ": \"max_concurrent_requests\" is -1; use a count from 1 up, or 0 (or leave it out) for no limit");
  EXPECT_EQ(parse_error(R"({"keys": [{"name": "a", "key": "k", "max_concurrent_requests": 2.5}]})"),
            a + ": \"max_concurrent_requests\" must be an integer, got a number with a fraction");
  EXPECT_EQ(parse_error(R"({"keys": [{"name": "a", "key": "k", "max_concurrent_requests": "8"}]})"),
            a + ": \"max_concurrent_requests\" must be an integer, got a string");
  EXPECT_EQ(parse_error(R"({"keys": [{"name": "a", "key": "k", "tokens_per_minute": -100}]})"),
            a + ": \"tokens_per_minute\" is -100; use a count from 1 up, or 0 (or leave it out) for no limit");
  EXPECT_EQ(parse_error(R"({"keys": [{"name": "a", "key": "k", "tokens_per_minute": true}]})"),
            a + ": \"tokens_per_minute\" must be an integer, got a boolean");
  EXPECT_EQ(parse_error(R"({"keys": [{"name": "a", "key": "k", "tokens_per_minute": 18446744073709551615}]})"),
            a + ": \"tokens_per_minute\" is too large; use at most 2^52, or 0 (or leave it out) for no limit");
  EXPECT_EQ(parse_error(R"({"keys": [{"name": "a", "key": "k", "priority": "urgent"}]})"),
            a + ": \"priority\" must be \"high\", \"normal\" or \"low\", got \"urgent\"");
  EXPECT_EQ(parse_error(R"({"keys": [{"name": "a", "key": "k", "priority": 1}]})"),
            a + ": \"priority\" must be \"high\", \"normal\" or \"low\", got an integer");
  EXPECT_EQ(parse_error(R"({"keys": [{"name": "a", "key": "k", "weight": 0}]})"),
            a + ": \"weight\" must be a positive number (the class weights are high 4, normal 1, low 0.25), got 0");
  EXPECT_EQ(parse_error(R"({"keys": [{"name": "a", "key": "k", "weight": "2"}]})"),
            a + ": \"weight\" must be a positive number (the class weights are high 4, normal 1, low 0.25), got a "
                "string");
  EXPECT_EQ(parse_error(R"({"keys": [{"name": "a", "key": "k", "models": "kairo"}]})"),
            a + ": \"models\" must be an array of model names, got a string; leave it out to allow every model");
  EXPECT_EQ(parse_error(R"({"keys": [{"name": "a", "key": "k", "models": []}]})"),
            a + ": \"models\" is empty, which would allow no model; list the names, or leave it out to allow every "
                "model");
  EXPECT_EQ(parse_error(R"({"keys": [{"name": "a", "key": "k", "models": ["x", 3]}]})"),
            a + ": \"models\"[1] must be a non-empty string, got an integer");
  EXPECT_EQ(parse_error(R"({"keys": [{"name": "a", "key": "k", "models": [""]}]})"),
            a + ": \"models\"[0] must be a non-empty string, got \"\"");
}

TEST(TenantsTest, DuplicatesAreRefusedWithoutPrintingTheKey) {
  EXPECT_EQ(parse_error(R"({"keys": [{"name": "a", "key": "sk-1"}, {"name": "b", "key": "sk-2"},
                                     {"name": "a", "key": "sk-3"}]})"),
            "keys file keys.json: keys[2] (\"a\"): the name is also keys[0]'s; give each key its own name");
  const std::string dup =
      parse_error(R"({"keys": [{"name": "a", "key": "sk-secret"}, {"name": "b", "key": "sk-secret"}]})");
  EXPECT_EQ(dup, "keys file keys.json: keys[1] (\"b\"): the key is also keys[0]'s (\"a\"); give each name its own key");
  EXPECT_EQ(dup.find("sk-secret"), std::string::npos);
}

TEST(TenantsTest, LoadReadsTheFileAndNamesAMissingOne) {
  const std::string path = ::testing::TempDir() + "/kairo_tenants_test.json";
  {
    std::ofstream out(path);
    out << R"({"keys": [{"name": "a", "key": "sk-1"}]})";
  }
  auto r = load_tenants_file(path);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ((*r)[0].name, "a");
  std::remove(path.c_str());
  auto missing = load_tenants_file(path);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message.rfind("cannot read the keys file (--api-keys-file): " + path, 0), 0u)
      << missing.error().message;
}

TEST(TenantsTest, ModelsListCoversTheServedNamesAsOneModel) {
  const std::vector<std::string> served = {"demo", "demo-alias"};
  Tenant all;
  EXPECT_TRUE(may_use_model(all, "", served));
  EXPECT_TRUE(may_use_model(all, "anything", served));
  Tenant by_alias;
  by_alias.models = {"demo-alias"};
  EXPECT_TRUE(may_use_model(by_alias, "demo-alias", served));
  EXPECT_TRUE(may_use_model(by_alias, "demo", served));  // the same model under its id
  EXPECT_TRUE(may_use_model(by_alias, "", served));      // no `model` = the served model
  Tenant adapters_only;
  adapters_only.models = {"my-lora"};
  EXPECT_FALSE(may_use_model(adapters_only, "demo", served));
  EXPECT_FALSE(may_use_model(adapters_only, "", served));
  EXPECT_TRUE(may_use_model(adapters_only, "my-lora", served));
  EXPECT_FALSE(may_use_model(adapters_only, "other-lora", served));
}

}  // namespace
}  // namespace kairo::server
