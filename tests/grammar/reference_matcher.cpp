#include "reference_matcher.h"

#include <map>
#include <set>

#include "tokenizer/utf8.h"

namespace kairo::grammar::testing {
namespace {

std::optional<std::u32string> decode_utf8(const std::string& s) {
  std::u32string out;
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    int len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (len == 0 || i + len > s.size()) return std::nullopt;
    uint32_t cp = len == 1 ? c : c & (0x3F >> (len - 1));
    for (int k = 1; k < len; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xC0) != 0x80) return std::nullopt;
      cp = (cp << 6) | (b & 0x3F);
    }
    static constexpr uint32_t kMinForLength[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMinForLength[len] || cp > kMaxCodepoint || (cp >= 0xD800 && cp <= 0xDFFF)) return std::nullopt;
    out.push_back(cp);
    i += len;
  }
  return out;
}

using Ends = std::set<size_t>;

class Recognizer {
 public:
  Recognizer(const GrammarAst& ast, const std::u32string& input) : ast_(ast), in_(input) {}

  Ends rule(const std::string& name, size_t pos) {
    const auto key = std::make_pair(name, pos);
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    memo_[key] = {};  // re-entry at the same position (only through nullable loops) adds nothing
    const AstRule* r = ast_.find(name);
    Ends ends;
    if (r) {
      for (const auto& alt : r->alternatives) {
        for (size_t e : sequence(alt, 0, pos)) ends.insert(e);
      }
    }
    memo_[key] = ends;
    return ends;
  }

 private:
  Ends sequence(const AstSequence& seq, size_t i, size_t pos) {
    if (i == seq.size()) return {pos};
    Ends out;
    for (size_t mid : node(seq[i], pos)) {
      for (size_t e : sequence(seq, i + 1, mid)) out.insert(e);
    }
    return out;
  }

  Ends node(const AstNode& n, size_t pos) {
    switch (n.kind) {
      case AstNode::Kind::kLiteral:
        if (in_.compare(pos, n.literal.size(), n.literal) == 0 && pos + n.literal.size() <= in_.size()) {
          return {pos + n.literal.size()};
        }
        return {};
      case AstNode::Kind::kCharClass:
        if (pos < in_.size()) {
          for (const auto& r : n.ranges) {
            if (in_[pos] >= r.lo && in_[pos] <= r.hi) return {pos + 1};
          }
        }
        return {};
      case AstNode::Kind::kRuleRef:
        return rule(n.rule, pos);
      case AstNode::Kind::kGroup: {
        Ends out;
        for (const auto& alt : n.alternatives) {
          for (size_t e : sequence(alt, 0, pos)) out.insert(e);
        }
        return out;
      }
      case AstNode::Kind::kRepeat: {
        Ends out, current{pos}, seen;
        for (uint32_t count = 0;; ++count) {
          if (count >= n.min) out.insert(current.begin(), current.end());
          if (count == n.max || current.empty()) break;
          Ends next;
          for (size_t p : current) {
            for (size_t e : sequence(n.alternatives[0], 0, p)) next.insert(e);
          }
          if (count >= n.min) {
            // Past the minimum only new positions matter (this also ends nullable loops).
            Ends fresh;
            for (size_t e : next) {
              if (seen.insert(e).second) fresh.insert(e);
            }
            next = fresh;
          }
          current = next;
        }
        return out;
      }
    }
    return {};
  }

  const GrammarAst& ast_;
  const std::u32string& in_;
  std::map<std::pair<std::string, size_t>, Ends> memo_;
};

class Sampler {
 public:
  Sampler(const GrammarAst& ast, std::mt19937& rng, size_t max_bytes) : ast_(ast), rng_(rng), max_(max_bytes) {}

  bool rule(const std::string& name, int depth) {
    const AstRule* r = ast_.find(name);
    if (!r || depth > 40) return false;
    return sequence(r->alternatives[pick(r->alternatives.size())], depth);
  }

  std::u32string out;

 private:
  size_t pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }

  bool sequence(const AstSequence& seq, int depth) {
    for (const auto& n : seq) {
      if (!node(n, depth)) return false;
      if (out.size() > max_) return false;
    }
    return true;
  }

  uint32_t random_codepoint(const std::vector<CodepointRange>& ranges) {
    // Mostly ASCII members when there are some, so samples look like the language; sometimes any member.
    std::vector<CodepointRange> pool;
    if (pick(4) != 0) {
      for (const auto& r : ranges) {
        if (r.lo < 0x80) pool.push_back({r.lo, std::min<uint32_t>(r.hi, 0x7F)});
      }
    }
    if (pool.empty()) pool = ranges;
    for (;;) {
      const auto& r = pool[pick(pool.size())];
      const uint32_t cp = std::uniform_int_distribution<uint32_t>(r.lo, r.hi)(rng_);
      if (cp < 0xD800 || cp > 0xDFFF) return cp;
    }
  }

  bool node(const AstNode& n, int depth) {
    switch (n.kind) {
      case AstNode::Kind::kLiteral:
        out += n.literal;
        return true;
      case AstNode::Kind::kCharClass:
        if (n.ranges.empty()) return false;
        out.push_back(random_codepoint(n.ranges));
        return true;
      case AstNode::Kind::kRuleRef:
        return rule(n.rule, depth + 1);
      case AstNode::Kind::kGroup:
        return sequence(n.alternatives[pick(n.alternatives.size())], depth + 1);
      case AstNode::Kind::kRepeat: {
        const uint32_t extra = n.max == kUnboundedRepeat ? 4 : n.max - n.min;
        const uint32_t count = n.min + static_cast<uint32_t>(pick(std::min<uint32_t>(extra, 4) + 1));
        for (uint32_t i = 0; i < count; ++i) {
          if (!sequence(n.alternatives[0], depth + 1)) return false;
        }
        return true;
      }
    }
    return false;
  }

  const GrammarAst& ast_;
  std::mt19937& rng_;
  size_t max_;
};

}  // namespace

std::string encode_utf8(const std::u32string& s) {
  std::string out;
  for (uint32_t cp : s) tokenizer::append_utf8(cp, out);
  return out;
}

bool reference_full_match(const GrammarAst& ast, const std::string& input, const std::string& root) {
  const auto cps = decode_utf8(input);
  if (!cps) return false;
  Recognizer rec(ast, *cps);
  return rec.rule(root, 0).count(cps->size()) > 0;
}

std::optional<std::string> sample_from_grammar(const GrammarAst& ast, std::mt19937& rng, size_t max_bytes,
                                               const std::string& root) {
  Sampler s(ast, rng, max_bytes);
  if (!s.rule(root, 0)) return std::nullopt;
  return encode_utf8(s.out);
}

}  // namespace kairo::grammar::testing
