#pragma once
// Chat templates: a sandboxed Jinja2 interpreter for the Hugging Face templates stored in GGUF files
// (`tokenizer.chat_template`). It renders byte-identically to Python Jinja2 as transformers configures it
// (ImmutableSandboxedEnvironment, trim_blocks, lstrip_blocks, loopcontrols, tojson = json.dumps with
// ensure_ascii=False keeping key order, raise_exception, strftime_now). Templates cannot reach the host (no
// files, no environment, no Python internals) and every resource they use is bounded by RenderOptions; hitting a
// bound is an Error that names the option.
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "core/result.h"

namespace kairo::jinja {

struct RenderOptions {
  bool trim_blocks = true;
  bool lstrip_blocks = true;
  size_t max_output_bytes = size_t{1} << 22;  // also the largest string any expression may build
  int max_recursion_depth = 64;               // nested macro / caller() calls
  int64_t max_loop_iterations = 1'000'000;    // total over the render; also the longest list a template may build
  int64_t max_macro_calls = 1'000'000;        // total over the render (stops exponential recursion)
  std::string strftime_now_date;              // "YYYY-MM-DD" or "YYYY-MM-DD HH:MM:SS" pins strftime_now(); empty: now
};

// Renders `template_source` with the variables of the JSON object `context`. Object keys keep their order, which
// tojson reproduces, hence ordered_json. Errors: syntax errors ("... (template line N)"), runtime errors with
// Jinja2's message (e.g. "'dict object' has no attribute 'description' (template line N)"), raise_exception()
// messages verbatim, and limit errors naming the RenderOptions field.
Result<std::string> render(const std::string& template_source, const nlohmann::ordered_json& context,
                           const RenderOptions& options = {});

// Renders a chat template with the variables transformers passes: messages, tools (omitted when null),
// add_generation_prompt, bos_token, eos_token.
Result<std::string> apply_chat_template(const std::string& tmpl, const nlohmann::ordered_json& messages,
                                        const nlohmann::ordered_json& tools, bool add_generation_prompt,
                                        const std::string& bos_token, const std::string& eos_token,
                                        const RenderOptions& options = {});

}  // namespace kairo::jinja
