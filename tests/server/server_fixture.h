#pragma once
// Starts the real HTTP server on an ephemeral port over a FakeEngine and the demo model's real tokenizer.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>

#include "fake_engine.h"
#include "gguf/gguf_file.h"
#include "http_client.h"
#include "server/server.h"
#include "test_paths.h"
#include "tokenizer/tokenizer.h"

namespace kairo::server::testing {

inline const tokenizer::Tokenizer& demo_tokenizer() {
  static std::unique_ptr<tokenizer::Tokenizer> tok = [] {
    auto file = gguf::File::open(kairo::testing::demo_model_path());
    if (!file.ok()) throw std::runtime_error(file.error().message);
    auto t = tokenizer::Tokenizer::from_gguf(*file);
    if (!t.ok()) throw std::runtime_error(t.error().message);
    return std::move(t).value();
  }();
  return *tok;
}

inline ServerConfig test_config() {
  ServerConfig c;
  c.host = "127.0.0.1";
  c.port = 0;
  c.n_http_threads = 2;
  c.access_log = false;
  c.shutdown_timeout_s = 5;
  return c;
}

inline ModelInfo test_model() {
  ModelInfo m;
  m.id = "demo";
  m.aliases = {"demo-alias"};
  m.created = 1700000000;
  return m;
}

class ServerTest : public ::testing::Test {
 protected:
  void start(ServerConfig config = test_config(), FakeEngineConfig engine_config = {}, ChatTemplate tmpl = {}) {
    engine_ = std::make_unique<FakeEngine>(demo_tokenizer(), engine_config);
    server_ = std::make_unique<Server>(config, model_info_);
    ASSERT_TRUE(server_->start().ok());
    server_->attach(*engine_, demo_tokenizer(), std::move(tmpl));
    port_ = server_->port();
    ASSERT_GT(port_, 0);
  }
  void TearDown() override {
    if (server_) server_->stop();
    server_.reset();  // before the engine: the server must not outlive it
    engine_.reset();
  }

  HttpResult post(const std::string& path, const nlohmann::json& body, const std::vector<std::string>& headers = {}) {
    return post_json(port_, path, body, headers);
  }
  HttpResult get(const std::string& path, const std::vector<std::string>& headers = {}) {
    return request(port_, "GET", path, "", headers);
  }
  // The text the fake engine generates for these prompt tokens (no stop strings, no EOS).
  std::string fake_text(const std::vector<int32_t>& prompt, int n_tokens, uint64_t seed = 0) const {
    std::string s;
    for (int k = 0; k < n_tokens; ++k) {
      s += demo_tokenizer().token_to_piece(FakeEngine::token_at(prompt, seed, k, demo_tokenizer().n_vocab()));
    }
    return s;
  }
  std::vector<int32_t> encode(const std::string& text) const {
    return demo_tokenizer().encode(text, demo_tokenizer().add_bos_by_default(), true);
  }

  ModelInfo model_info_ = test_model();  // what start() serves (a test may set adapters first)
  std::unique_ptr<FakeEngine> engine_;
  std::unique_ptr<Server> server_;
  int port_ = 0;
};

}  // namespace kairo::server::testing
