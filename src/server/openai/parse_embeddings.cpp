// POST /v1/embeddings: OpenAI's request (input, encoding_format, dimensions, model, user) validated into an
// EmbeddingsRequest.
#include "core/format.h"
#include "server/openai/json_fields.h"
#include "server/openai/parse_request.h"

namespace kairo::server {

using json = nlohmann::ordered_json;
using namespace json_fields;

ApiResult<EmbeddingsRequest> parse_embeddings_request(const json& body, const ParseContext& ctx) {
  EmbeddingsRequest req;
  if (auto e = get_string(body, "model", "model", 256, req.model)) return *e;
  if (auto e = parse_prompt_list(body, "input", ctx, req.inputs)) return *e;
  std::string format = "float";
  if (auto e = get_string(body, "encoding_format", "encoding_format", 16, format)) return *e;
  if (format != "float" && format != "base64") {
    return invalid_param("encoding_format", strprintf("'encoding_format' must be \"float\" or \"base64\", got %s",
                                                      preview(body.at("encoding_format")).c_str()));
  }
  req.base64 = format == "base64";
  if (auto e = get_int(body, "dimensions", "dimensions", 1, 1 << 20, req.dimensions)) return *e;
  std::string user;  // accepted and unused, as by OpenAI for abuse monitoring
  if (auto e = get_string(body, "user", "user", 256, user)) return *e;
  return req;
}

}  // namespace kairo::server
