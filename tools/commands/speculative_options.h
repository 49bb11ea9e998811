#pragma once
// The speculative-decoding flags shared by `kairo serve` and `kairo bench batch`.
#include <CLI/CLI.hpp>

#include <string>

#include "core/result.h"
#include "engine/speculative_config.h"

namespace kairo::tools {

struct SpeculativeArgs {
  std::string method = "none";
  engine::SpeculativeConfig config;
};

// `extra_methods`: methods a command adds beyond none|ngram (the bench's "oracle"), listed in the help.
inline void add_speculative_options(CLI::App* cmd, SpeculativeArgs& a, const std::string& extra_methods = "") {
  cmd->add_option("--speculative", a.method,
                  "Speculative decoding: none, or ngram (prompt lookup: propose what followed the last n tokens "
                  "earlier in the prompt or output)" + extra_methods + "; outputs are unchanged")
      ->capture_default_str();
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

// The engine's configuration for method none or ngram; other names are an error naming the choices.
inline Result<engine::SpeculativeConfig> speculative_config(const SpeculativeArgs& a) {
  engine::SpeculativeConfig c = a.config;
  if (a.method == "none") {
    c.method = engine::SpeculativeMethod::None;
  } else if (a.method == "ngram") {
    c.method = engine::SpeculativeMethod::Ngram;
  } else {
    return Error{"--speculative " + a.method + " is not a method; use none or ngram"};
  }
  return c;
}

}  // namespace kairo::tools
