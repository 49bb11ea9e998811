#pragma once
// The LoRA flags shared by `kairo serve`, `kairo run` and `kairo bench batch`: an adapter named on the command line
// as [NAME=]PATH[:SCALE], read against the loaded model and made servable (model::Model::add_adapter).
#include <cerrno>
#include <cstdlib>
#include <string>

#include "core/format.h"
#include "core/result.h"
#include "model/lora/adapter.h"
#include "model/model.h"

namespace kairo::tools {

struct LoraSpec {
  std::string name;  // serve: what a request's "model" selects it by
  std::string path;
  float scale = 1.0f;
};

// "NAME=PATH[:SCALE]" when `named`, else "PATH[:SCALE]". A ":SCALE" suffix is one that parses as a number.
inline Result<LoraSpec> parse_lora_spec(const std::string& text, bool named) {
  LoraSpec spec;
  std::string rest = text;
  if (named) {
    const size_t eq = rest.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == rest.size()) {
      return Error{strprintf("--lora %s: expected NAME=PATH[:SCALE] (the name is what requests put in \"model\")",
                             text.c_str())};
    }
    spec.name = rest.substr(0, eq);
    rest = rest.substr(eq + 1);
  }
  const size_t colon = rest.rfind(':');
  if (colon != std::string::npos && colon + 1 < rest.size()) {
    const std::string tail = rest.substr(colon + 1);
    char* end = nullptr;
    errno = 0;
    const float scale = std::strtof(tail.c_str(), &end);
    if (end == tail.c_str() + tail.size() && errno == 0) {
      spec.scale = scale;
      rest = rest.substr(0, colon);
    }
  }
  if (rest.empty()) return Error{strprintf("--lora %s: the adapter path is empty", text.c_str())};
  spec.path = rest;
  if (!named) spec.name = rest;
  return spec;
}

// Loads the adapter against `model` and adds it; returns its index (requests' engine::Request::adapter).
inline Result<int> attach_lora(model::Model& model, const LoraSpec& spec, int max_rank) {
  model::lora::LoadOptions o;
  o.scale = spec.scale;
  o.max_rank = max_rank;
  KAIRO_TRY_ASSIGN(const model::lora::Adapter adapter,
                   model::lora::load_adapter(spec.path, model.file(), model.config(), o));
  return model.add_adapter(adapter);
}

}  // namespace kairo::tools
