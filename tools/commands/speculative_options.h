#pragma once
// The speculative-decoding flags shared by `kairo serve` and `kairo bench batch`.
#include <CLI/CLI.hpp>

#include <string>

#include "core/format.h"
#include "core/result.h"
#include "device_option.h"
#include "engine/speculative_config.h"
#include "tokenizer/tokenizer.h"

namespace kairo::tools {

struct SpeculativeArgs {
  std::string method = "none";
  std::string draft_model;  // --draft-model: implies --speculative draft
  engine::SpeculativeConfig config;
};

// `extra_methods`: methods a command adds beyond none|ngram (the bench's "oracle"), listed in the help.
inline void add_speculative_options(CLI::App* cmd, SpeculativeArgs& a, const std::string& extra_methods = "") {
  cmd->add_option("--speculative", a.method,
                  "Speculative decoding: none, ngram (prompt lookup: propose what followed the last n tokens "
                  "earlier in the prompt or output) or draft (--draft-model)" +
                      extra_methods +
                      "; outputs are "
                      "unchanged (token for token at temperature 0 and with --exact-numerics, in distribution for "
                      "sampled requests)")
      ->capture_default_str();
  cmd->add_option("--draft-model", a.draft_model,
                  "A smaller GGUF model with the same tokenizer that proposes its continuation: greedy for greedy "
                  "requests, drawn from its distribution for sampled ones (implies --speculative draft)");
  cmd->add_option("--num-speculative-tokens", a.config.num_tokens, "Most tokens proposed per request and step")
      ->capture_default_str();
  cmd->add_option("--ngram-min", a.config.ngram.min_n, "Shortest suffix the n-gram proposer matches")
      ->capture_default_str();
  cmd->add_option("--ngram-max", a.config.ngram.max_n, "Longest suffix the n-gram proposer matches")
      ->capture_default_str();
  cmd->add_option("--speculative-max-batch", a.config.max_batch,
                  "No speculation in steps where this many requests run or more (0 = no cap)")
      ->capture_default_str();
  cmd->add_flag("--speculative-always", [&a](int64_t) { a.config.adaptive = false; },
                "Verify proposals in every step (default: only where the measured step times and acceptance say it "
                "pays)");
}

// The engine's configuration for method none, ngram or draft; other names are an error naming the choices. For
// draft, `draft` is the loaded draft model (load_draft_model), which must outlive the engine.
inline Result<engine::SpeculativeConfig> speculative_config(const SpeculativeArgs& a, model::Model* draft = nullptr) {
  engine::SpeculativeConfig c = a.config;
  const std::string method = a.method == "none" && !a.draft_model.empty() ? "draft" : a.method;
  if (method == "none") {
    c.method = engine::SpeculativeMethod::None;
  } else if (method == "ngram") {
    c.method = engine::SpeculativeMethod::Ngram;
  } else if (method == "draft") {
    if (a.draft_model.empty()) return Error{"--speculative draft needs --draft-model FILE"};
    c.method = engine::SpeculativeMethod::DraftModel;
    c.draft_model = draft;
  } else {
    return Error{"--speculative " + a.method + " is not a method; use none, ngram or draft"};
  }
  return c;
}

// Loads --draft-model (if given) on the target's device and checks that its tokenizer is the target's token for
// token: a draft that numbers tokens differently would propose nonsense. Null when there is no draft model.
inline Result<std::unique_ptr<model::Model>> load_draft_model(const SpeculativeArgs& a, const model::Model& target,
                                                              const std::string& device) {
  if (a.draft_model.empty()) return std::unique_ptr<model::Model>{};
  auto loaded = load_model_on(a.draft_model, device);
  if (!loaded.ok()) return Error{"--draft-model " + a.draft_model + ": " + loaded.error().message};
  std::unique_ptr<model::Model> draft = std::move(loaded).value();
  auto target_tok = tokenizer::Tokenizer::from_gguf(target.file());
  auto draft_tok = tokenizer::Tokenizer::from_gguf(draft->file());
  if (!target_tok.ok() || !draft_tok.ok()) {
    return Error{"--draft-model " + a.draft_model + ": both models need a tokenizer in their GGUF to compare"};
  }
  const auto& t = (*target_tok)->vocab().tokens;
  const auto& d = (*draft_tok)->vocab().tokens;
  if (t.size() != d.size()) {
    return Error{strprintf("--draft-model %s has %zu tokens but the model %zu: a draft model must share the model's "
                           "tokenizer",
                           a.draft_model.c_str(), d.size(), t.size())};
  }
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i].text != d[i].text) {
      return Error{strprintf("--draft-model %s numbers its tokens differently: token %zu is \"%s\" there and \"%s\" "
                             "in the model; a draft model must share the model's tokenizer",
                             a.draft_model.c_str(), i, d[i].text.c_str(), t[i].text.c_str())};
    }
  }
  return draft;
}

}  // namespace kairo::tools
