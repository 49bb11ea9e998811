#pragma once
// JSON Schema -> GBNF, for constrained JSON output (response_format json_schema, structured_outputs.json,
// llama.cpp's json_schema field). The grammar accepts only JSON texts that validate against the schema, written
// compactly with bounded whitespace between tokens (a small model cannot loop on spaces).
//
// Supported: type (and unions), enum, const, properties, required, additionalProperties (false, true or a
// schema), items, prefixItems, minItems, maxItems, uniqueItems: false, anyOf, oneOf (when its branches cannot
// match the same value: different types, or objects told apart by a required const/enum property), allOf (merged
// when the members do not conflict), $ref into $defs/definitions/any local pointer (recursion included), nullable (OpenAPI's; accepted, and null is
// not generated for it, which is valid under both OpenAPI and JSON Schema),
// minLength, maxLength, pattern (regex_grammar.h), format date/time/date-time/uuid/email, integer bounds
// (minimum, maximum, exclusiveMinimum, exclusiveMaximum), and minimum/exclusiveMinimum 0 on numbers.
// Annotations (title, description, default, examples, $schema, $id, $comment, deprecated, readOnly, writeOnly,
// x-*) are allowed and ignored. Every other keyword is an error naming it and its JSON pointer: a constraint
// is never dropped silently.
//
// Properties come out in the order the schema declares them; optional ones may be left out. When a schema
// declares properties and says nothing about additionalProperties, no others are generated (what OpenAI's
// strict mode asks for; such output still validates, since the schema allows but never requires more).
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"

namespace kairo::grammar {

// Whitespace the grammar allows between JSON tokens.
enum class JsonWhitespace {
  Bounded,  // none, one space, or a newline and up to 20 spaces or tabs (llama.cpp's: room to indent)
  Compact,  // none or one space: for machine-read JSON such as tool-call arguments, every token is content
};

// Takes ordered JSON so properties are generated in the order the schema writes them; the text overload parses it
// that way.
Result<std::string> json_schema_to_gbnf(const nlohmann::ordered_json& schema,
                                        JsonWhitespace whitespace = JsonWhitespace::Bounded);
Result<std::string> json_schema_to_gbnf(std::string_view schema_text);

// Several schemas in one grammar, for formats that embed JSON values in other text (tool calls): rule_names[i]
// accepts the JSON of schemas[i], and the caller writes its own rules around them (its root among them; the
// grammar's `root` rule is the first schema's).
struct SchemaRules {
  std::string gbnf;
  std::vector<std::string> rule_names;
};
Result<SchemaRules> json_schemas_to_gbnf(const std::vector<nlohmann::ordered_json>& schemas, std::string_view hint,
                                         JsonWhitespace whitespace = JsonWhitespace::Bounded);

// Any JSON object ({"type": "json_object"} response formats).
std::string json_object_gbnf();

}  // namespace kairo::grammar
