#pragma once
// OpenAI requests after validation: everything here is in range and typed, so the routes only tokenize, check the
// context and submit. Built by parse_request.h; nothing else reads request JSON.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/request.h"

namespace kairo::server {

// One entry of llama-server's per-request `lora` field: the adapter with llama-server's id (its place among the
// server's adapters, from 0) at `scale`.
struct LoraScale {
  int id = 0;
  float scale = 1.0f;  // finite, >= 0
};

// Fields /v1/completions and /v1/chat/completions share.
struct GenerationParams {
  std::string model;                  // empty when the client sent none
  std::optional<int> max_tokens;      // absent: completions 16, chat the rest of the context
  std::string max_tokens_field = "max_tokens";  // the field it came from (max_output_tokens, ...), for errors
  engine::SamplingParams sampling;    // logit_bias ids checked against the vocabulary
  std::vector<std::string> stop;
  std::vector<int32_t> stop_token_ids;
  bool ignore_eos = false;
  int n = 1;
  bool stream = false;
  bool include_usage = false;         // stream_options.include_usage
  int logprobs = -1;                  // -1 none, else top alternatives per token (0 = only the chosen token)
  std::string user;
  int priority = 0;
  bool speculative = true;  // kairo extension: false opts this request out of the server's speculative decoding
  std::optional<std::vector<LoraScale>> lora;  // llama-server's `lora` (absent: nullopt); ids distinct
  // Constrained output as GBNF (empty: none) and the request field it came from, for error messages. Compiled by
  // the route through the server's grammar cache.
  std::string grammar;
  std::string grammar_param;
  std::string grammar_root = "root";
};

// A completions prompt: text to tokenize, or token ids as sent.
struct Prompt {
  bool is_text = true;
  std::string text;
  std::vector<int32_t> tokens;
};

struct CompletionRequest {
  GenerationParams params;
  std::vector<Prompt> prompts;        // one or more (a batch); choices are prompt_idx * n + i
  bool echo = false;
};

// POST /v1/embeddings.
struct EmbeddingsRequest {
  std::string model;
  std::vector<Prompt> inputs;  // one vector each
  bool base64 = false;         // encoding_format "base64": little-endian float32 bytes, base64-encoded
  int dimensions = 0;          // > 0: the first `dimensions` values, normalised again (Matryoshka truncation)
};

struct ChatRequest {
  GenerationParams params;
  // Validated and normalised for the template: every message has a string "role" and a string "content" (parts
  // joined), except an assistant turn of tool calls alone, whose content is null; assistant tool_calls (arguments
  // as an object when they are JSON, which templates index into) and tool_call_id / name kept.
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  nlohmann::ordered_json tools;               // array, or null when none
  // tool_choice: "auto" (the model decides), "none" (no calls are parsed), "required" (at least one call, enforced
  // by a grammar), or "function" with tool_choice_name (that tool, enforced). Calls are parsed in the model's format
  // (Backend::template_traits).
  std::string tool_choice = "auto";
  std::string tool_choice_name;
  bool parallel_tool_calls = true;
  bool add_generation_prompt = true;
  bool continue_final_message = false;
  nlohmann::ordered_json template_kwargs = nlohmann::ordered_json::object();
};

// POST /v1/responses: its input as a chat conversation, and what the Response object repeats back.
struct ResponsesRequest {
  ChatRequest chat;
  // instructions, max_output_tokens, temperature, top_p, tools, tool_choice, parallel_tool_calls, text, metadata,
  // user: as the request gave them (validated), or the defaults OpenAI shows.
  nlohmann::ordered_json echo = nlohmann::ordered_json::object();
};

struct TokenizeRequest {
  bool is_chat = false;
  std::string prompt;                 // is_chat == false
  ChatRequest chat;                   // is_chat == true (messages only)
  bool add_special_tokens = true;
};

struct DetokenizeRequest {
  std::vector<int32_t> tokens;
};

// POST /v1/load_lora_adapter (vLLM's body, plus kairo's optional scale) and /v1/unload_lora_adapter.
struct LoadLoraRequest {
  std::string name;   // lora_name
  std::string path;   // lora_path: a llama.cpp GGUF LoRA adapter on the server's disk
  float scale = 1.0f;
};

struct UnloadLoraRequest {
  std::string name;
};

}  // namespace kairo::server
