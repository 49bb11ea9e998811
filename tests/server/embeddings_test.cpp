// POST /v1/embeddings over HTTP with the real engine, on random-weight embedding models that `kairo synth`'s code
// writes (the demo tokenizer, last and mean pooling): the vectors against llama.cpp's llama-embedding on the same
// files (tests/data/reference/embeddings-synth-llama.json says how they were made), float and base64 encodings,
// `dimensions`, usage, and the errors: a model without pooling, a prompt past the context, bad fields.
#include <gtest/gtest.h>

#include <openssl/evp.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <fstream>

#include "convert/synth.h"
#include "engine/engine.h"
#include "http_client.h"
#include "model/arch/arch.h"
#include "model/model.h"
#include "server/server.h"
#include "test_paths.h"
#include "tokenizer/tokenizer.h"

namespace kairo::server::testing {
namespace {

using json = nlohmann::json;

const json& reference() {
  static const json r = [] {
    std::ifstream in(kairo::testing::source_path("tests/data/reference/embeddings-synth-llama.json"));
    return json::parse(in);
  }();
  return r;
}

// The reference's model, with the given pooling: the same seed writes the same weights.
std::string synth_model(const std::string& pooling) {
  const json& s = reference()["synth"];
  convert::SynthOptions o;
  model::ModelConfig& c = o.config;
  c.arch = s["arch"];
  c.dim = s["dim"];
  c.n_layers = s["layers"];
  c.n_heads = s["heads"];
  c.n_kv_heads = s["kv_heads"];
  c.head_dim = c.dim / c.n_heads;
  c.ffn_dim = s["ffn"];
  c.n_vocab = s["vocab"];
  c.context_length = s["context"];
  c.rope.freq_base = 10000.0f;
  c.rope.n_rot = c.head_dim;
  model::apply_arch_traits(c);
  c.pooling = pooling == "mean" ? model::Pooling::Mean : pooling == "last" ? model::Pooling::Last : model::Pooling::None;
  auto scheme = convert::parse_quant_scheme(s["type"]);
  EXPECT_TRUE(scheme.ok());
  o.scheme = *scheme;
  o.seed = s["seed"];
  o.tokenizer_path = kairo::testing::source_path(s["tokenizer"].get<std::string>());
  const std::string path = ::testing::TempDir() + "/kairo_embeddings_" + pooling + "_" + std::to_string(::getpid()) +
                           ".gguf";
  ThreadPool pool(1);
  auto r = convert::write_synth_model(o, path, pool);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return path;
}

double cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    ab += static_cast<double>(a[i]) * b[i];
    aa += static_cast<double>(a[i]) * a[i];
    bb += static_cast<double>(b[i]) * b[i];
  }
  return ab / std::sqrt(aa * bb);
}

std::vector<float> from_base64(const std::string& text) {
  std::string bytes(text.size(), '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(bytes.data()),
                                reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  const size_t padding = text.size() >= 2 ? (text[text.size() - 1] == '=') + (text[text.size() - 2] == '=') : 0;
  std::vector<float> out((static_cast<size_t>(n) - padding) / sizeof(float));
  std::memcpy(out.data(), bytes.data(), out.size() * sizeof(float));
  return out;
}

class EmbeddingsServer : public ::testing::Test {
 public:
  HttpResult post(const json& body) { return post_json(port_, "/v1/embeddings", body); }

 protected:
  void serve(const std::string& pooling) {
    path_ = synth_model(pooling);
    auto m = model::Model::load(path_);
    ASSERT_TRUE(m.ok()) << m.error().message;
    model_ = std::move(m).value();
    auto t = tokenizer::Tokenizer::from_gguf(model_->file());
    ASSERT_TRUE(t.ok()) << t.error().message;
    tokenizer_ = std::move(t).value();
    engine::EngineConfig cfg;
    cfg.n_threads = 1;
    auto e = engine::Engine::create(*model_, *tokenizer_, cfg);
    ASSERT_TRUE(e.ok()) << e.error().message;
    engine_ = std::move(e).value();
    ServerConfig c;
    c.port = 0;
    c.n_http_threads = 2;
    c.access_log = false;
    ModelInfo info;
    info.id = "embedder";
    info.pooling = static_cast<engine::EmbeddingPooling>(model_->config().pooling);
    info.pooling_key = "llama.pooling_type";
    info.embedding_dim = model_->config().dim;
    server_ = std::make_unique<Server>(c, info);
    ASSERT_TRUE(server_->start().ok());
    server_->attach(*engine_, *tokenizer_);
    port_ = server_->port();
  }
  void TearDown() override {
    if (server_) server_->stop();
    server_.reset();
    engine_.reset();
    tokenizer_.reset();
    model_.reset();
    if (!path_.empty()) std::remove(path_.c_str());
  }
  // The reference cases of one pooling.
  std::vector<json> cases(const std::string& pooling) const {
    std::vector<json> out;
    for (const json& c : reference()["cases"])
      if (c["pooling"] == pooling) out.push_back(c);
    return out;
  }

  std::string path_;
  std::unique_ptr<model::Model> model_;
  std::unique_ptr<tokenizer::Tokenizer> tokenizer_;
  std::unique_ptr<engine::Engine> engine_;
  std::unique_ptr<Server> server_;
  int port_ = 0;
};

void expect_matches_llama_cpp(EmbeddingsServer& s, const std::vector<json>& cases) {
  ASSERT_FALSE(cases.empty());
  json texts = json::array();
  for (const json& c : cases) texts.push_back(c["text"]);
  const auto r = s.post({{"model", "embedder"}, {"input", texts}});
  ASSERT_EQ(r.status, 200) << r.body;
  const json j = r.json();
  EXPECT_EQ(j["object"], "list");
  EXPECT_EQ(j["model"], "embedder");
  ASSERT_EQ(j["data"].size(), cases.size());
  int n_tokens = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const json& d = j["data"][i];
    EXPECT_EQ(d["object"], "embedding");
    EXPECT_EQ(d["index"], static_cast<int>(i));
    const std::vector<float> got = d["embedding"];
    const std::vector<float> want = cases[i]["embedding"];
    ASSERT_EQ(got.size(), want.size());
    EXPECT_GE(cosine(got, want), 0.9999) << cases[i]["text"];
    n_tokens += static_cast<int>(cases[i]["tokens"].size());
  }
  EXPECT_EQ(j["usage"]["prompt_tokens"], n_tokens) << "the same tokens as llama.cpp";
  EXPECT_EQ(j["usage"]["total_tokens"], n_tokens);

  // The token ids llama.cpp used, sent as ids: the same vectors, bit for bit as the text's.
  json ids = json::array();
  for (const json& c : cases) ids.push_back(c["tokens"]);
  const auto by_ids = s.post({{"input", ids}});
  ASSERT_EQ(by_ids.status, 200) << by_ids.body;
  for (size_t i = 0; i < cases.size(); ++i) EXPECT_EQ(by_ids.json()["data"][i]["embedding"], j["data"][i]["embedding"]);
}

TEST_F(EmbeddingsServer, LastTokenPoolingMatchesLlamaCpp) {
  serve("last");
  expect_matches_llama_cpp(*this, cases("last"));
}

TEST_F(EmbeddingsServer, MeanPoolingMatchesLlamaCpp) {
  serve("mean");
  expect_matches_llama_cpp(*this, cases("mean"));
}

TEST_F(EmbeddingsServer, Base64AndDimensions) {
  serve("last");
  const std::string text = cases("last").at(0)["text"];
  const std::vector<float> floats = post({{"input", text}}).json()["data"][0]["embedding"];
  const auto b64 = post({{"input", text}, {"encoding_format", "base64"}});
  ASSERT_EQ(b64.status, 200) << b64.body;
  EXPECT_EQ(from_base64(b64.json()["data"][0]["embedding"]), floats) << "little-endian float32, as the clients decode";

  const auto cut = post({{"input", text}, {"dimensions", 16}});
  ASSERT_EQ(cut.status, 200) << cut.body;
  const std::vector<float> v = cut.json()["data"][0]["embedding"];
  ASSERT_EQ(v.size(), 16u);
  double norm2 = 0, head2 = 0;
  for (size_t i = 0; i < 16; ++i) {
    norm2 += static_cast<double>(v[i]) * v[i];
    head2 += static_cast<double>(floats[i]) * floats[i];
  }
  EXPECT_NEAR(norm2, 1.0, 1e-5) << "normalised again";
  for (size_t i = 0; i < 16; ++i) EXPECT_NEAR(v[i], floats[i] / std::sqrt(head2), 1e-6);
}

TEST_F(EmbeddingsServer, ErrorsSayWhatToChange) {
  serve("last");
  const int context = engine_->context_length();
  json too_long = json::array();
  for (int i = 0; i < context + 1; ++i) too_long.push_back(5);
  auto r = post({{"input", too_long}});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.json()["error"]["code"], "context_length_exceeded") << r.body;
  r = post({{"input", ""}});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.json()["error"]["param"], "input") << r.body;
  r = post({{"input", "hi"}, {"encoding_format", "int8"}});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.json()["error"]["param"], "encoding_format") << r.body;
  r = post({{"input", "hi"}, {"dimensions", 100000}});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.json()["error"]["param"], "dimensions") << r.body;
  r = post({{"input", "hi"}, {"model", "other"}});
  EXPECT_EQ(r.status, 404) << r.body;
  EXPECT_EQ(engine_->stats().n_kv_blocks_used, 0);
}

TEST_F(EmbeddingsServer, AModelWithoutPoolingIsRefused) {
  serve("none");
  const auto r = post({{"input", "hi"}});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.json()["error"]["code"], "model_not_embedding") << r.body;
  EXPECT_NE(r.body.find("llama.pooling_type"), std::string::npos) << r.body;
}

}  // namespace
}  // namespace kairo::server::testing
