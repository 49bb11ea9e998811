#include "chat/chat_prompt.h"

#include <algorithm>

#include "core/format.h"
#include "server/endpoints.h"
#include "server/server_context.h"

namespace kairo::tools::chat {

int reply_room(int context_tokens, int max_tokens) {
  int room = std::min(context_tokens / 4, 2048);
  if (max_tokens > 0) room = std::min(room, max_tokens);
  return std::max(room, 1);
}

Result<ChatPrompt> fit_prompt(Conversation& conversation, const server::Backend& backend, int context_tokens,
                              int reply_room) {
  const size_t budget = static_cast<size_t>(std::max(context_tokens - reply_room, 0));
  Conversation trimmed = conversation;
  ChatPrompt out;
  for (;;) {
    server::ChatRequest request;
    request.messages = trimmed.messages();
    server::ApiResult<server::ChatPrompt> rendered = server::chat_prompt_tokens(backend, request, budget);
    if (!rendered.ok()) return Error{rendered.error().message};
    // encode_at_most may finish a word past the budget instead of stopping: count, do not trust past_limit alone.
    if (!rendered->past_limit && rendered->tokens.size() <= budget) {
      out.tokens = std::move(rendered->tokens);
      out.opens_thinking = rendered->opens_thinking;
      conversation = std::move(trimmed);
      return out;
    }
    if (!trimmed.forget_oldest_exchange()) {
      if (conversation.system().empty()) {
        return Error{strprintf("the message does not fit: it and %d tokens for the reply need more than the context "
                               "of %d tokens; shorten it",
                               reply_room, context_tokens)};
      }
      return Error{strprintf("the message does not fit: the system prompt, the message and %d tokens for the reply "
                             "need more than the context of %d tokens; shorten them (/system changes the system "
                             "prompt)",
                             reply_room, context_tokens)};
    }
    ++out.n_forgotten;
  }
}

}  // namespace kairo::tools::chat
