#pragma once
// The chat so far, as the messages a chat template renders: the system prompt (when there is one) first, then the
// turns, alternating user and assistant.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kairo::tools::chat {

class Conversation {
 public:
  void set_system(std::string text) { system_ = std::move(text); }  // "" removes it
  const std::string& system() const { return system_; }

  void add_user(std::string text) { turns_.push_back({"user", std::move(text)}); }
  void add_assistant(std::string text) { turns_.push_back({"assistant", std::move(text)}); }
  void drop_last_turn() { turns_.pop_back(); }
  void clear() { turns_.clear(); }  // the system prompt stays
  // Forgets the oldest exchange (a user message and the reply to it). False, changing nothing, when no reply is
  // left before the last message.
  bool forget_oldest_exchange();
  size_t n_turns() const { return turns_.size(); }

  // [{"role": "system", "content": ...}, {"role": "user", ...}, ...]
  nlohmann::ordered_json messages() const;

 private:
  struct Turn {
    std::string role;
    std::string content;
  };
  std::string system_;
  std::vector<Turn> turns_;
};

}  // namespace kairo::tools::chat
