#include "grammar/byte_grammar.h"

#include <algorithm>
#include <map>
#include <optional>

#include "core/format.h"
#include "grammar/gbnf_parser.h"
#include "grammar/utf8_ranges.h"

namespace kairo::grammar {
namespace {

using Sequence = std::vector<Element>;

// Tarjan's algorithm, iteratively (grammars from large schemas have thousands of rules): component id per node.
template <typename EdgeList>
std::vector<uint32_t> strongly_connected_components(const std::vector<EdgeList>& graph) {
  const uint32_t n = static_cast<uint32_t>(graph.size());
  constexpr uint32_t kUnvisited = UINT32_MAX;
  std::vector<uint32_t> index(n, kUnvisited), low(n, 0), component(n, kUnvisited);
  std::vector<bool> on_stack(n, false);
  std::vector<uint32_t> stack;
  std::vector<std::pair<uint32_t, size_t>> calls;  // (node, next edge)
  uint32_t next_index = 0, next_component = 0;
  for (uint32_t root = 0; root < n; ++root) {
    if (index[root] != kUnvisited) continue;
    calls.emplace_back(root, 0);
    while (!calls.empty()) {
      auto& [v, edge] = calls.back();
      if (edge == 0 && index[v] == kUnvisited) {
        index[v] = low[v] = next_index++;
        stack.push_back(v);
        on_stack[v] = true;
      }
      if (edge < graph[v].size()) {
        const uint32_t w = graph[v][edge++].to;
        if (index[w] == kUnvisited) {
          calls.emplace_back(w, 0);
        } else if (on_stack[w]) {
          low[v] = std::min(low[v], index[w]);
        }
        continue;
      }
      if (low[v] == index[v]) {
        uint32_t w;
        do {
          w = stack.back();
          stack.pop_back();
          on_stack[w] = false;
          component[w] = next_component;
        } while (w != v);
        ++next_component;
      }
      const uint32_t done = v;
      calls.pop_back();
      if (!calls.empty()) low[calls.back().first] = std::min(low[calls.back().first], low[done]);
    }
  }
  return component;
}

class Lowering {
 public:
  explicit Lowering(const GrammarAst& ast) : ast_(ast) {}

  Result<ByteGrammar> run(const std::string& root_rule) {
    for (const auto& r : ast_.rules) rule_ids_[r.name] = new_rule(r.name);
    const auto root = rule_ids_.find(root_rule);
    if (root == rule_ids_.end()) {
      return Error{strprintf("grammar: there is no '%s' rule; the grammar starts at `%s ::= ...`", root_rule.c_str(),
                             root_rule.c_str())};
    }
    g_.root = root->second;
    for (const auto& r : ast_.rules) {
      for (const auto& alt : r.alternatives) {
        Sequence seq;
        KAIRO_TRY_STATUS(lower_sequence(alt, seq, r.name));
        bodies_[rule_ids_[r.name]].push_back(std::move(seq));
      }
    }
    KAIRO_TRY_STATUS(check_left_recursion());
    for (size_t r = 0; r < bodies_.size(); ++r) {
      for (auto& alt : bodies_[r]) {
        g_.rules[r].alternative_starts.push_back(static_cast<uint32_t>(g_.elements.size()));
        g_.elements.insert(g_.elements.end(), alt.begin(), alt.end());
        g_.elements.push_back(Element{Element::Kind::kEnd, 0});
      }
    }
    return std::move(g_);
  }

 private:
  uint32_t new_rule(const std::string& name) {
    g_.rules.push_back(ByteRule{name, {}});
    bodies_.emplace_back();
    return static_cast<uint32_t>(g_.rules.size() - 1);
  }

  uint32_t helper_rule(const std::string& owner, std::vector<Sequence> alternatives) {
    const uint32_t id = new_rule(strprintf("%s-%u", owner.c_str(), ++helper_count_[owner]));
    bodies_[id] = std::move(alternatives);
    return id;
  }

  Element bytes(const ByteSet& set) {
    auto [it, inserted] = byte_set_ids_.try_emplace(set, static_cast<uint32_t>(g_.byte_sets.size()));
    if (inserted) g_.byte_sets.push_back(set);
    return Element{Element::Kind::kBytes, it->second};
  }

  Element byte_range(uint8_t lo, uint8_t hi) {
    ByteSet set{};
    for (unsigned b = lo; b <= hi; ++b) set[b >> 6] |= uint64_t{1} << (b & 63);
    return bytes(set);
  }

  Status lower_sequence(const AstSequence& seq, Sequence& out, const std::string& owner) {
    for (const auto& node : seq) KAIRO_TRY_STATUS(lower_node(node, out, owner));
    return Status::success();
  }

  Status lower_node(const AstNode& node, Sequence& out, const std::string& owner) {
    switch (node.kind) {
      case AstNode::Kind::kLiteral:
        for (uint32_t cp : node.literal) {
          for (uint8_t b : utf8_encode(cp)) out.push_back(byte_range(b, b));
        }
        return Status::success();
      case AstNode::Kind::kCharClass:
        lower_class(node.ranges, out, owner);
        return Status::success();
      case AstNode::Kind::kRuleRef: {
        const auto it = rule_ids_.find(node.rule);
        if (it == rule_ids_.end()) {
          return Error{strprintf("grammar: line %d: rule '%s' is used but never defined", node.line, node.rule.c_str())};
        }
        out.push_back(Element{Element::Kind::kRule, it->second});
        return Status::success();
      }
      case AstNode::Kind::kGroup: {
        std::vector<Sequence> alts;
        for (const auto& alt : node.alternatives) {
          Sequence s;
          KAIRO_TRY_STATUS(lower_sequence(alt, s, owner));
          alts.push_back(std::move(s));
        }
        if (alts.size() == 1) {
          out.insert(out.end(), alts[0].begin(), alts[0].end());
        } else {
          out.push_back(Element{Element::Kind::kRule, helper_rule(owner, std::move(alts))});
        }
        return Status::success();
      }
      case AstNode::Kind::kRepeat:
        return lower_repeat(node, out, owner);
    }
    return Status::success();
  }

  // A class: its one-byte members as one byte set, each multi-byte UTF-8 sequence as an alternative.
  void lower_class(const std::vector<CodepointRange>& ranges, Sequence& out, const std::string& owner) {
    ByteSet ascii{};
    bool has_ascii = false;
    std::vector<Sequence> alts;
    for (const auto& r : ranges) {
      for (const auto& seq : utf8_sequences(r)) {
        if (seq.size() == 1) {
          for (unsigned b = seq[0].lo; b <= seq[0].hi; ++b) ascii[b >> 6] |= uint64_t{1} << (b & 63);
          has_ascii = true;
          continue;
        }
        Sequence s;
        for (const auto& br : seq) s.push_back(byte_range(br.lo, br.hi));
        alts.push_back(std::move(s));
      }
    }
    if (has_ascii) alts.insert(alts.begin(), Sequence{bytes(ascii)});
    if (alts.empty()) {
      // A class that matches nothing (e.g. [^\x00-\U0010FFFF]): an empty byte set never matches.
      out.push_back(bytes(ByteSet{}));
    } else if (alts.size() == 1) {
      out.insert(out.end(), alts[0].begin(), alts[0].end());
    } else {
      out.push_back(Element{Element::Kind::kRule, helper_rule(owner, std::move(alts))});
    }
  }

  Status lower_repeat(const AstNode& node, Sequence& out, const std::string& owner) {
    Sequence item;
    KAIRO_TRY_STATUS(lower_sequence(node.alternatives[0], item, owner));
    if (item.empty()) return Status::success();  // repeating the empty string is the empty string
    if (item.size() > 1) item = Sequence{Element{Element::Kind::kRule, helper_rule(owner, {item})}};
    for (uint32_t i = 0; i < node.min; ++i) out.insert(out.end(), item.begin(), item.end());
    if (node.max == kUnboundedRepeat) {
      // star ::= item star | (empty)
      const uint32_t star = helper_rule(owner, {});
      Sequence loop = item;
      loop.push_back(Element{Element::Kind::kRule, star});
      bodies_[star] = {loop, Sequence{}};
      out.push_back(Element{Element::Kind::kRule, star});
      return Status::success();
    }
    // Up to k more: opt_k ::= item opt_{k-1} | (empty)
    std::optional<uint32_t> previous;
    for (uint32_t i = node.min; i < node.max; ++i) {
      Sequence once = item;
      if (previous) once.push_back(Element{Element::Kind::kRule, *previous});
      previous = helper_rule(owner, {once, Sequence{}});
    }
    if (previous) out.push_back(Element{Element::Kind::kRule, *previous});
    return Status::success();
  }

  Status check_left_recursion() {
    const size_t n = bodies_.size();
    std::vector<bool> nullable(n, false);
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t r = 0; r < n; ++r) {
        if (nullable[r]) continue;
        for (const auto& alt : bodies_[r]) {
          bool all = true;
          for (const auto& e : alt) {
            if (e.kind != Element::Kind::kRule || !nullable[e.index]) {
              all = false;
              break;
            }
          }
          if (all) {
            nullable[r] = changed = true;
            break;
          }
        }
      }
    }
    // Left-corner edges: the rules an alternative can start with before consuming a byte. An edge through the
    // last element of an alternative is a tail call: the matcher pushes no frame for it, so a cycle made only of
    // tail edges (nullable repetition such as ("a"? "b"?)*) just revisits an expansion it has seen and stops. A
    // cycle with a pushing edge grows the stack forever: that is the left recursion to refuse.
    struct Edge {
      uint32_t to;
      bool pushes;
    };
    std::vector<std::vector<Edge>> left(n);
    for (size_t r = 0; r < n; ++r) {
      for (const auto& alt : bodies_[r]) {
        for (size_t i = 0; i < alt.size(); ++i) {
          const auto& e = alt[i];
          if (e.kind != Element::Kind::kRule) break;
          left[r].push_back(Edge{e.index, i + 1 < alt.size()});
          if (!nullable[e.index]) break;
        }
      }
    }
    const std::vector<uint32_t> component = strongly_connected_components(left);
    for (uint32_t u = 0; u < n; ++u) {
      for (const Edge& e : left[u]) {
        if (!e.pushes || component[e.to] != component[u]) continue;
        return Error{strprintf("grammar: left recursion (%s) can recurse without consuming input; rewrite it with "
                               "repetition, e.g. `expr ::= term (\"+\" term)*` instead of `expr ::= expr \"+\" term | "
                               "term`",
                               describe_cycle(left, u, e.to).c_str())};
      }
    }
    return Status::success();
  }

  // "u -> v -> ... -> u" along left-corner edges (a breadth-first path from v back to u).
  template <typename EdgeList>
  std::string describe_cycle(const std::vector<EdgeList>& graph, uint32_t u, uint32_t v) const {
    std::vector<uint32_t> from(graph.size(), UINT32_MAX);
    std::vector<uint32_t> queue{v};
    from[v] = v;
    for (size_t q = 0; q < queue.size() && from[u] == UINT32_MAX; ++q) {
      for (const auto& e : graph[queue[q]]) {
        if (from[e.to] == UINT32_MAX) {
          from[e.to] = queue[q];
          queue.push_back(e.to);
        }
      }
    }
    std::vector<uint32_t> path{u};
    for (uint32_t x = u; x != v && from[x] != UINT32_MAX;) {
      x = from[x];
      path.push_back(x);
    }
    std::string out = g_.rules[u].name;
    for (auto it = path.rbegin(); it != path.rend(); ++it) out += " -> " + g_.rules[*it].name;
    return out;
  }

  const GrammarAst& ast_;
  ByteGrammar g_;
  std::map<std::string, uint32_t> rule_ids_;
  std::map<std::string, uint32_t> helper_count_;
  std::map<ByteSet, uint32_t> byte_set_ids_;
  std::vector<std::vector<Sequence>> bodies_;
};

}  // namespace

Result<ByteGrammar> lower_grammar(const GrammarAst& ast, const std::string& root_rule) {
  return Lowering(ast).run(root_rule);
}

Result<ByteGrammar> compile_gbnf(std::string_view text, const std::string& root_rule) {
  KAIRO_TRY_ASSIGN(auto ast, parse_gbnf(text));
  return lower_grammar(ast, root_rule);
}

}  // namespace kairo::grammar
