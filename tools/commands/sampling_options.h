#pragma once
// The sampling flags shared by `kairo run` and `kairo chat`: one definition of their names, defaults, ranges and help,
// applied to whichever parameter struct the command hands on (the generator's sampling::SamplingConfig or the
// engine's SamplingParams, whose seed is optional).
#include <CLI/CLI.hpp>
#include <cstdint>

namespace kairo::tools {

// llama.cpp's defaults, which users of a terminal tool expect.
struct SamplingFlags {
  float temperature = 0.8f;
  int top_k = 40;
  float top_p = 0.95f;
  float min_p = 0.05f;
  float repeat_penalty = 1.0f;
  float presence_penalty = 0.0f;
  float frequency_penalty = 0.0f;
  int64_t seed = -1;  // -1: a random seed
};

inline void add_sampling_flags(CLI::App* cmd, SamplingFlags& f, const char* seed_help = "Random seed (-1 = random)") {
  cmd->add_option("--temperature,-t", f.temperature, "Sampling temperature; 0 is greedy")->capture_default_str()
      ->check(CLI::Range(0.0, 100.0));
  cmd->add_option("--top-k", f.top_k, "Keep the k most likely tokens (0 = off)")->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--top-p", f.top_p, "Nucleus sampling mass (1 = off)")->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--min-p", f.min_p, "Drop tokens below min-p x the top probability (0 = off)")
      ->capture_default_str()->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--repeat-penalty", f.repeat_penalty, "Repetition penalty (1 = off)")->capture_default_str();
  cmd->add_option("--presence-penalty", f.presence_penalty, "Presence penalty")->capture_default_str();
  cmd->add_option("--frequency-penalty", f.frequency_penalty, "Frequency penalty")->capture_default_str();
  cmd->add_option("--seed,-s", f.seed, seed_help)->capture_default_str();
}

template <typename Params>
void apply_sampling_flags(const SamplingFlags& f, Params& p) {
  p.temperature = f.temperature;
  p.top_k = f.top_k;
  p.top_p = f.top_p;
  p.min_p = f.min_p;
  p.repetition_penalty = f.repeat_penalty;
  p.presence_penalty = f.presence_penalty;
  p.frequency_penalty = f.frequency_penalty;
  if (f.seed >= 0) p.seed = static_cast<uint64_t>(f.seed);
}

}  // namespace kairo::tools
