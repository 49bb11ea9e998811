#include "server/tool_call_bodies.h"

#include "server/text_markers.h"
#include "server/tool_call_format.h"

namespace kairo::server {
namespace {

using json = nlohmann::ordered_json;

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

json parse_quietly(std::string_view text) { return json::parse(text, nullptr, /*allow_exceptions=*/false); }

// A JSON object of arguments, compact; nullopt when the text is not one.
std::optional<std::string> arguments_object(std::string_view text) {
  const json args = parse_quietly(text);
  if (!args.is_object()) return std::nullopt;
  return args.dump();
}

// One <｜tool▁call▁begin｜>…<｜tool▁call▁end｜>'s inside: "function<｜tool▁sep｜>name\n```json\n{…}\n```" (R1, V3) or
// "name<｜tool▁sep｜>{…}" (V3.1).
std::optional<ParsedToolCall> parse_deepseek_call(std::string_view inner) {
  const size_t sep = inner.find(markers::kDeepSeekSep);
  if (sep == std::string_view::npos) return std::nullopt;
  const std::string_view head = trim(inner.substr(0, sep));
  const std::string_view after = inner.substr(sep + markers::kDeepSeekSep.size());
  std::string_view name, args;
  if (starts_with(trim(after), "{")) {
    name = head;
    args = trim(after);
  } else {
    const size_t newline = after.find('\n');
    if (newline == std::string_view::npos) return std::nullopt;
    name = trim(after.substr(0, newline));
    args = trim(after.substr(newline + 1));
    // The arguments sit in a ```json fence, which a model may also write bare (```) or leave out.
    if (starts_with(args, "```json")) args.remove_prefix(7);
    else if (starts_with(args, "```")) args.remove_prefix(3);
    if (args.size() >= 3 && args.substr(args.size() - 3) == "```") args.remove_suffix(3);
    args = trim(args);
  }
  std::optional<std::string> arguments = arguments_object(args);
  if (name.empty() || !arguments) return std::nullopt;
  return ParsedToolCall{std::string(name), std::move(*arguments)};
}

// The schema a tool gives one of its parameters, or null.
const json* parameter_schema(const json* tools, const std::string& function, const std::string& parameter) {
  if (tools == nullptr || !tools->is_array()) return nullptr;
  for (const json& tool : *tools) {
    const json* fn = tool.contains("function") ? &tool["function"] : nullptr;
    if (fn == nullptr || !fn->is_object() || fn->value("name", "") != function) continue;
    const json* params = fn->contains("parameters") ? &(*fn)["parameters"] : nullptr;
    if (params == nullptr || !params->is_object() || !params->contains("properties")) return nullptr;
    const json& props = (*params)["properties"];
    return props.is_object() && props.contains(parameter) ? &props[parameter] : nullptr;
  }
  return nullptr;
}

// "<tag=NAME>" at the start of `s`: NAME, and `s` moved past the '>'.
std::optional<std::string> take_tag(std::string_view& s, std::string_view tag) {
  if (!starts_with(s, tag)) return std::nullopt;
  const size_t gt = s.find('>', tag.size());
  if (gt == std::string_view::npos) return std::nullopt;
  const std::string_view name = s.substr(tag.size(), gt - tag.size());
  if (name.empty() || name.find('\n') != std::string_view::npos || name.find('<') != std::string_view::npos) {
    return std::nullopt;
  }
  s.remove_prefix(gt + 1);
  return std::string(name);
}

}  // namespace

std::optional<ParsedToolCall> parse_json_call(std::string_view text) {
  const json body = parse_quietly(text);
  if (!body.is_object() || !body.contains("name") || !body["name"].is_string()) return std::nullopt;
  const char* key = body.contains("arguments") ? "arguments" : body.contains("parameters") ? "parameters" : nullptr;
  if (key != nullptr && !body[key].is_object()) return std::nullopt;
  return ParsedToolCall{body["name"].get<std::string>(), key != nullptr ? body[key].dump() : "{}"};
}

std::optional<std::vector<ParsedToolCall>> parse_json_call_array(std::string_view text) {
  const json body = parse_quietly(text);
  if (!body.is_array() || body.empty()) return std::nullopt;
  std::vector<ParsedToolCall> calls;
  for (const json& element : body) {
    std::optional<ParsedToolCall> call = parse_json_call(element.dump());
    if (!call) return std::nullopt;
    calls.push_back(std::move(*call));
  }
  return calls;
}

std::optional<std::vector<ParsedToolCall>> parse_deepseek_calls(std::string_view body) {
  std::vector<ParsedToolCall> calls;
  for (std::string_view rest = trim(body); !rest.empty(); rest = trim(rest)) {
    if (!starts_with(rest, markers::kDeepSeekCallBegin)) return std::nullopt;
    const size_t end = rest.find(markers::kDeepSeekCallEnd);
    if (end == std::string_view::npos) return std::nullopt;
    const size_t from = markers::kDeepSeekCallBegin.size();
    std::optional<ParsedToolCall> call = parse_deepseek_call(rest.substr(from, end - from));
    if (!call) return std::nullopt;
    calls.push_back(std::move(*call));
    rest.remove_prefix(end + markers::kDeepSeekCallEnd.size());
  }
  if (calls.empty()) return std::nullopt;
  return calls;
}

bool xml_value_is_raw_text(const json& schema) {
  if (!schema.is_object()) return false;
  if (schema.contains("type")) {
    const json& type = schema["type"];
    if (type.is_string()) return type == "string";
    if (!type.is_array()) return false;
    bool string = false, other = false;
    for (const json& t : type) {
      if (t == "string") string = true;
      else if (t != "null") other = true;
    }
    return string && !other;
  }
  std::vector<json> values;
  if (schema.contains("const")) values.push_back(schema["const"]);
  if (schema.contains("enum") && schema["enum"].is_array()) {
    values.insert(values.end(), schema["enum"].begin(), schema["enum"].end());
  }
  if (values.empty()) return false;
  for (const json& v : values)
    if (!v.is_string()) return false;
  return true;
}

std::optional<ParsedToolCall> parse_xml_call(std::string_view body, const json* tools) {
  std::string_view rest = trim(body);
  std::optional<std::string> name = take_tag(rest, markers::kXmlFunctionOpen);
  if (!name) return std::nullopt;
  json args = json::object();
  for (rest = trim(rest); !starts_with(rest, markers::kXmlFunctionClose); rest = trim(rest)) {
    std::optional<std::string> parameter = take_tag(rest, markers::kXmlParameterOpen);
    if (!parameter || args.contains(*parameter)) return std::nullopt;
    const size_t close = rest.find(markers::kXmlParameterClose);
    if (close == std::string_view::npos) return std::nullopt;
    std::string_view value = rest.substr(0, close);
    rest.remove_prefix(close + markers::kXmlParameterClose.size());
    // The template writes "\n" around the value; what is inside is the value, blanks and all.
    if (starts_with(value, "\n")) value.remove_prefix(1);
    if (!value.empty() && value.back() == '\n') value.remove_suffix(1);
    const json* schema = parameter_schema(tools, *name, *parameter);
    json parsed = schema != nullptr && !xml_value_is_raw_text(*schema) ? parse_quietly(value)
                                                                       : json(json::value_t::discarded);
    args[*parameter] = parsed.is_discarded() ? json(std::string(value)) : std::move(parsed);
  }
  rest.remove_prefix(markers::kXmlFunctionClose.size());
  if (!trim(rest).empty()) return std::nullopt;
  return ParsedToolCall{std::move(*name), args.dump()};
}

}  // namespace kairo::server
