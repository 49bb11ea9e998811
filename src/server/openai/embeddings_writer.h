#pragma once
// The body of POST /v1/embeddings: {"object": "list", "data": [{"object": "embedding", "index", "embedding"}],
// "model", "usage"}, each vector as floats or base64 (little-endian float32), cut to `dimensions` and normalised
// again when asked. Embeddings are never streamed: the stream hooks are never called by GenerationJob (stream off).
#include <string>
#include <vector>

#include "server/response_writer.h"

namespace kairo::server {

class EmbeddingsWriter : public ResponseWriter {
 public:
  EmbeddingsWriter(std::string model, bool base64, int dimensions)
      : model_(std::move(model)), base64_(base64), dimensions_(dimensions) {}

  std::string stream_open(size_t, int) override { return {}; }
  std::string stream_delta(const ChoiceDelta&) override { return {}; }
  std::string stream_close(const Usage&) override { return {}; }
  std::string stream_error(const ApiError&) override { return {}; }
  std::string response(const std::vector<ChoiceResult>& choices, const Usage& usage) override;

 private:
  std::string model_;
  bool base64_;
  int dimensions_;
};

// The first `dimensions` values of a unit vector, scaled back to unit length (OpenAI's `dimensions` for models
// trained to be cut, Matryoshka-style). dimensions <= 0 or >= size: the vector unchanged.
std::vector<float> truncate_embedding(const std::vector<float>& v, int dimensions);
// Little-endian float32 bytes, base64-encoded (what the openai clients decode by default).
std::string embedding_base64(const std::vector<float>& v);

}  // namespace kairo::server
