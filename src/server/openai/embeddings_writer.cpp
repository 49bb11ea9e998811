#include "server/openai/embeddings_writer.h"

#include <openssl/evp.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

namespace kairo::server {

std::vector<float> truncate_embedding(const std::vector<float>& v, int dimensions) {
  if (dimensions <= 0 || static_cast<size_t>(dimensions) >= v.size()) return v;
  std::vector<float> out(v.begin(), v.begin() + dimensions);
  double norm2 = 0;
  for (float x : out) norm2 += static_cast<double>(x) * x;
  if (norm2 > 0) {
    const double inv = 1.0 / std::sqrt(norm2);
    for (float& x : out) x = static_cast<float>(x * inv);
  }
  return out;
}

std::string embedding_base64(const std::vector<float>& v) {
  static_assert(std::endian::native == std::endian::little, "float32 bytes go out little-endian as they are");
  std::string bytes(v.size() * sizeof(float), '\0');
  if (!v.empty()) std::memcpy(bytes.data(), v.data(), bytes.size());
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

std::string EmbeddingsWriter::response(const std::vector<ChoiceResult>& choices, const Usage& usage) {
  nlohmann::ordered_json data = nlohmann::ordered_json::array();
  for (const ChoiceResult& c : choices) {
    const std::vector<float> v = truncate_embedding(c.embedding, dimensions_);
    nlohmann::ordered_json item = {{"object", "embedding"}, {"index", c.index}};
    if (base64_) {
      item["embedding"] = embedding_base64(v);
    } else {
      item["embedding"] = v;
    }
    data.push_back(std::move(item));
  }
  const nlohmann::ordered_json body = {
      {"object", "list"},
      {"data", std::move(data)},
      {"model", model_},
      {"usage", {{"prompt_tokens", usage.prompt_tokens}, {"total_tokens", usage.prompt_tokens}}}};
  return body.dump();
}

}  // namespace kairo::server
