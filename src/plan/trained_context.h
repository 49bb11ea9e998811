#pragma once
// The context a model was made for (GGUF <arch>.context_length, rope scaling included) bounds a plan as much as
// memory does: a longer context may fit in memory, but positions past it are ones the model never saw, and
// `kairo serve` refuses a --max-model-len above it. This check tells a plan so, in words that say what to change.
#include <string>
#include <vector>

#include "model/config.h"
#include "plan/model_shapes.h"

namespace kairo::plan {

struct TrainedContext {
  int requested = 0;
  int trained = 0;           // <arch>.context_length
  std::string rope_scaling;  // "none", or how the model stretches its positions: "YaRN from an original context of
                             // 4096", "linear x4", "llama-3 frequency factors (rope_freqs)", "long-rope factors ..."
  bool fits = true;          // requested <= trained
  std::string advice;        // when it does not fit: what happens past the trained context and what to change
};

// How the model scales rope: from its config and, for factors stored as tensors (llama-3's rope_freqs, phi3's
// rope_factors_long), its tensor list.
std::string describe_rope_scaling(const model::ModelConfig& config, const std::vector<TensorSpec>& tensors);

// context_knob: the flag that sets the context in the caller's command line ("--context" for `kairo plan`).
TrainedContext check_trained_context(const model::ModelConfig& config, const std::vector<TensorSpec>& tensors,
                                     int context_length, const std::string& context_knob);

}  // namespace kairo::plan
