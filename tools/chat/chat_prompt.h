#pragma once
// The conversation as prompt tokens for the next reply, rendered exactly as `kairo serve` renders a
// /v1/chat/completions request (server::chat_prompt_tokens: the model's chat template, or ChatML for a model without
// one). A long chat outgrows the context: the oldest exchanges are then forgotten, ollama's way, until the prompt
// leaves `reply_room` tokens for the reply.
#include <cstdint>
#include <vector>

#include "core/result.h"

#include "chat/conversation.h"

namespace kairo::server {
struct Backend;
}

namespace kairo::tools::chat {

struct ChatPrompt {
  std::vector<int32_t> tokens;
  bool opens_thinking = false;  // the template opened a `<think>` block: the reply starts inside it
  int n_forgotten = 0;          // exchanges dropped from `conversation` to make room
};

// Errors (the conversation is left as it was): the template rejects the conversation, or the system prompt and the
// last message alone leave no room for a reply.
Result<ChatPrompt> fit_prompt(Conversation& conversation, const server::Backend& backend, int context_tokens,
                              int reply_room);

// Room for the reply when forgetting: a quarter of the context, but no more than max_tokens (when set) or 2048
// tokens (a long-context model keeps its history rather than reserving tens of thousands of tokens).
int reply_room(int context_tokens, int max_tokens);

}  // namespace kairo::tools::chat
