#include "plan/trained_context.h"

#include <algorithm>

#include "core/format.h"

namespace kairo::plan {
namespace {

bool has_tensor(const std::vector<TensorSpec>& tensors, const std::string& name) {
  return std::any_of(tensors.begin(), tensors.end(), [&](const TensorSpec& t) { return t.name == name; });
}

}  // namespace

std::string describe_rope_scaling(const model::ModelConfig& c, const std::vector<TensorSpec>& tensors) {
  const auto original = static_cast<long long>(c.rope_original_context);
  if (!c.yarn_freq_factors.empty()) return strprintf("YaRN from an original context of %lld", original);
  if (c.rope.freq_scale != 1.0f) {
    std::string s = strprintf("linear x%g", 1.0 / c.rope.freq_scale);
    if (original > 0) s += strprintf(" from an original context of %lld", original);
    return s;
  }
  if (c.long_rope && has_tensor(tensors, "rope_factors_long.weight")) {
    return strprintf("long-rope factors (the long set above %lld tokens)", original);
  }
  if (has_tensor(tensors, "rope_freqs.weight")) return "llama-3 frequency factors (rope_freqs)";
  return "none";
}

TrainedContext check_trained_context(const model::ModelConfig& c, const std::vector<TensorSpec>& tensors,
                                     int context_length, const std::string& context_knob) {
  TrainedContext t;
  t.requested = context_length;
  t.trained = c.context_length;
  t.rope_scaling = describe_rope_scaling(c, tensors);
  t.fits = context_length <= c.context_length;
  if (t.fits) return t;
  // Why the rope scaling cannot simply be relied on: it is already part of how the GGUF reaches its context length,
  // and kairo applies it as the file states it.
  const std::string scaling =
      t.rope_scaling == "none"
          ? "The model has no rope scaling to stretch its positions."
          : "Its rope scaling (" + t.rope_scaling + ") is applied as the GGUF states it; kairo does not stretch it "
            "further.";
  t.advice = strprintf(
      "%s %d is beyond the model's trained context of %d tokens (%s.context_length): positions past %d are ones the "
      "model never saw in training, so its output degrades there, whatever the memory. %s `kairo serve` refuses "
      "--max-model-len above %d. Lower %s to %d or less, or use a model made for %d tokens (trained for them, or a "
      "GGUF whose rope scaling and context_length reach them).",
      context_knob.c_str(), context_length, c.context_length, c.arch.c_str(), c.context_length, scaling.c_str(),
      c.context_length, context_knob.c_str(), c.context_length, context_length);
  return t;
}

}  // namespace kairo::plan
