#include "chat/conversation.h"

namespace kairo::tools::chat {

bool Conversation::forget_oldest_exchange() {
  if (turns_.size() < 3) return false;
  turns_.erase(turns_.begin(), turns_.begin() + 2);
  return true;
}

nlohmann::ordered_json Conversation::messages() const {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  if (!system_.empty()) out.push_back({{"role", "system"}, {"content", system_}});
  for (const Turn& t : turns_) out.push_back({{"role", t.role}, {"content", t.content}});
  return out;
}

}  // namespace kairo::tools::chat
