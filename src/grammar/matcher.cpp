#include "grammar/matcher.h"

#include <algorithm>

namespace kairo::grammar {

GrammarMatcher::GrammarMatcher(std::shared_ptr<StackArena> arena, size_t max_rollback)
    : arena_(std::move(arena)), max_rollback_(max_rollback), stacks_(arena_->initial()) {}

bool GrammarMatcher::accept(std::string_view bytes) {
  scratch_a_ = stacks_;
  for (char c : bytes) {
    arena_->advance(scratch_a_, static_cast<uint8_t>(c), scratch_b_);
    if (scratch_b_.empty()) return false;
    if (scratch_b_.size() > kMaxLiveStacks) {
      too_ambiguous_ = true;
      return false;
    }
    std::swap(scratch_a_, scratch_b_);
  }
  if (max_rollback_ > 0) {
    if (history_.size() == max_rollback_) history_.pop_front();
    history_.push_back(std::move(stacks_));
  }
  stacks_ = scratch_a_;
  return true;
}

bool GrammarMatcher::can_end() const {
  return !stacks_.empty() && stacks_.front() == StackArena::kAccepted;
}

bool GrammarMatcher::can_continue() const {
  return std::any_of(stacks_.begin(), stacks_.end(), [](StackId id) { return id != StackArena::kAccepted; });
}

void GrammarMatcher::rollback(size_t n) {
  n = std::min(n, history_.size());
  for (size_t i = 0; i < n; ++i) {
    stacks_ = std::move(history_.back());
    history_.pop_back();
  }
}

void GrammarMatcher::reset() {
  history_.clear();
  stacks_ = arena_->initial();
  too_ambiguous_ = false;
}

}  // namespace kairo::grammar
