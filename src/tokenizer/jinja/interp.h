#pragma once
// Interpreter state shared by the evaluator and the builtins: variable scopes, resource counters, and the
// entry points builtins call back into (calling callables, applying filters and tests).
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "tokenizer/jinja/ast.h"
#include "tokenizer/jinja/chat_template.h"
#include "tokenizer/jinja/value.h"

namespace kairo::jinja {

struct Scope : std::enable_shared_from_this<Scope> {
  explicit Scope(std::shared_ptr<Scope> parent = nullptr) : parent(std::move(parent)) {}
  const Value* lookup(const std::string& name) const {
    for (const Scope* s = this; s; s = s->parent.get()) {
      auto it = s->vars.find(name);
      if (it != s->vars.end()) return &it->second;
    }
    return nullptr;
  }
  std::shared_ptr<Scope> parent;
  std::unordered_map<std::string, Value> vars;
};

using FilterFn = Value (*)(Interp&, const Value& input, CallArgs& args);
using TestFn = bool (*)(Interp&, const Value& input, CallArgs& args);

FilterFn find_filter(const std::string& name);
TestFn find_test(const std::string& name);
// Bound method `obj.name` for str/dict/list, or Undefined (with Jinja's message) when there is none.
Value get_method(const Value& obj, const std::string& name);
// Globals every template sees: range, namespace, dict, raise_exception, strftime_now, cycler, joiner.
void add_globals(Scope& scope);

class Interp {
 public:
  explicit Interp(const RenderOptions& options) : options_(options) {}
  const RenderOptions& options() const { return options_; }

  Value call(const Value& callee, CallArgs& args);
  Value apply_filter(const std::string& name, const Value& input, CallArgs& args);
  bool apply_test(const std::string& name, const Value& input, CallArgs& args);

  // Limit checks; each throws TemplateError (Kind::Limit) naming the RenderOptions field.
  void check_string_size(size_t n_bytes) const;
  void check_list_size(size_t n_items) const;
  void count_loop_iteration();
  void enter_call();
  void leave_call() { --call_depth_; }
  void append_output(std::string& out, const std::string& text) const;

  // Keeps a scope alive until the render ends (macros and callers refer to their defining scope without owning
  // it, so values never form reference cycles).
  void pin(std::shared_ptr<Scope> scope) { pinned_.push_back(std::move(scope)); }

  std::string strftime_now(const std::string& format) const;

 private:
  RenderOptions options_;
  int64_t loop_iterations_ = 0;
  int64_t macro_calls_ = 0;
  int call_depth_ = 0;
  std::vector<std::shared_ptr<Scope>> pinned_;
};

// Reads a builtin's arguments by position or keyword, rejecting unknown keywords and extra positionals.
class ArgReader {
 public:
  ArgReader(const CallArgs& args, const char* func, std::initializer_list<const char*> names);
  const Value* get(size_t idx) const { return idx < values_.size() ? values_[idx] : nullptr; }
  Value get_or(size_t idx, Value fallback) const {
    const Value* v = get(idx);
    return v ? *v : std::move(fallback);
  }

 private:
  std::vector<const Value*> values_;
};

// Items a for loop or filter iterates: list items, dict keys, string characters; Undefined is empty.
std::vector<Value> iterate(const Value& v);
// Attribute / item access with Jinja's sandboxed rules and Undefined messages.
Value get_attr(const Value& obj, const std::string& name);
Value get_item(const Value& obj, const Value& key);
Value slice(Interp& in, const Value& obj, const Value& start, const Value& stop, const Value& step);
Value binary_op(Interp& in, const std::string& op, const Value& a, const Value& b);
Value unary_op(const std::string& op, const Value& a);
bool contains(const Value& container, const Value& item);
// Throws the Undefined's message (Jinja's UndefinedError) if v is Undefined.
void require_defined(const Value& v);
// Python printf-style `fmt % args`; escape_args for a Markup format (markup.h).
std::string percent_format(Interp& in, const std::string& fmt, const Value& args, bool escape_args = false);

}  // namespace kairo::jinja
