// LoRA in requests: llama-server's per-request `lora` field ([{"id": N, "scale": S}, ...]) and the bodies of vLLM's
// POST /v1/load_lora_adapter and /v1/unload_lora_adapter. Which adapter the ids and names mean is the route's to
// resolve (lora_selection.h): the loaded adapters change while the server runs.
#include <cfloat>
#include <cmath>

#include "core/format.h"
#include "server/openai/json_fields.h"
#include "server/openai/parse_request.h"

namespace kairo::server {

using json = nlohmann::ordered_json;
using namespace json_fields;

namespace {

constexpr size_t kMaxLoraEntries = 1024;
constexpr size_t kMaxNameBytes = 256;
constexpr size_t kMaxPathBytes = 4096;

// A LoRA scale: a finite number >= 0 that is finite as a float too (it multiplies the adapter's rank values).
std::optional<ApiError> check_scale(const json& v, const std::string& param, float& out) {
  if (!v.is_number()) {
    return invalid_param(param, strprintf("'%s' must be a number (1 = the adapter as loaded, 0 = off), got %s",
                                          param.c_str(), kind_of(v)));
  }
  const double d = v.get<double>();
  if (!std::isfinite(d) || d < 0.0 || d > FLT_MAX) {
    return invalid_param(param, strprintf("'%s' must be a finite number >= 0, got %s", param.c_str(),
                                          preview(v).c_str()));
  }
  out = static_cast<float>(d);
  return std::nullopt;
}

std::optional<ApiError> get_required_string(const json& body, const char* key, size_t max_bytes, const char* what,
                                            std::string& out) {
  KAIRO_API_TRY(get_string(body, key, key, max_bytes, out));
  if (out.empty()) return invalid_param(key, strprintf("'%s' is required: %s", key, what));
  return std::nullopt;
}

}  // namespace

std::optional<ApiError> parse_lora_field(const json& body, GenerationParams& out) {
  auto it = body.find("lora");
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (!it->is_array()) {
    return invalid_param("lora", strprintf("'lora' must be an array of {\"id\": N, \"scale\": S} objects, got %s",
                                           kind_of(*it)));
  }
  if (it->size() > kMaxLoraEntries) {
    return invalid_param("lora", strprintf("'lora' has %zu entries; at most %zu are accepted", it->size(),
                                           kMaxLoraEntries));
  }
  std::vector<LoraScale> entries;
  for (size_t i = 0; i < it->size(); ++i) {
    const json& e = (*it)[i];
    const std::string param = strprintf("lora[%zu]", i);
    if (!e.is_object()) {
      return invalid_param(param, strprintf("'%s' must be an object {\"id\": N, \"scale\": S}, got %s", param.c_str(),
                                            kind_of(e)));
    }
    if (!present(e, "id")) return invalid_param(param + ".id", strprintf("'%s.id' is required", param.c_str()));
    if (!present(e, "scale")) {
      return invalid_param(param + ".scale", strprintf("'%s.scale' is required", param.c_str()));
    }
    int64_t id = 0;
    KAIRO_API_TRY(check_int_value(e.at("id"), param + ".id", 0, 1 << 20, id));
    LoraScale entry;
    entry.id = static_cast<int>(id);
    KAIRO_API_TRY(check_scale(e.at("scale"), param + ".scale", entry.scale));
    for (size_t j = 0; j < entries.size(); ++j) {
      if (entries[j].id == entry.id) {
        return invalid_param(param + ".id", strprintf("'%s.id' is %d, which lora[%zu] names already; give each "
                                                      "adapter once",
                                                      param.c_str(), entry.id, j));
      }
    }
    entries.push_back(entry);
  }
  out.lora = std::move(entries);
  return std::nullopt;
}

ApiResult<LoadLoraRequest> parse_load_lora_request(const json& body) {
  LoadLoraRequest req;
  if (auto e = get_required_string(body, "lora_name", kMaxNameBytes, "the name requests select the adapter by, as "
                                                                       "their 'model'",
                                   req.name)) {
    return *e;
  }
  if (auto e = get_required_string(body, "lora_path", kMaxPathBytes,
                                   "the path of a llama.cpp GGUF LoRA adapter on the server", req.path)) {
    return *e;
  }
  if (present(body, "scale")) {
    if (auto e = check_scale(body.at("scale"), "scale", req.scale)) return *e;
  }
  return req;
}

ApiResult<UnloadLoraRequest> parse_unload_lora_request(const json& body) {
  UnloadLoraRequest req;
  if (auto e = get_required_string(body, "lora_name", kMaxNameBytes, "the name of the adapter to unload", req.name)) {
    return *e;
  }
  return req;
}

}  // namespace kairo::server
