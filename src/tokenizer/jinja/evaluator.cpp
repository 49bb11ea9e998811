#include "tokenizer/jinja/evaluator.h"

#include "tokenizer/jinja/error.h"
#include "tokenizer/jinja/py_text.h"

namespace kairo::jinja {
namespace {

enum class Flow { Normal, Break, Continue };

// ---- prepare: static analysis ----------------------------------------------------------------------------------

bool expr_uses_name(const Expr* e, const std::string& name) {
  if (!e) return false;
  if (e->kind == Expr::Kind::Name && e->name == name) return true;
  for (const auto& a : e->args)
    if (expr_uses_name(a.get(), name)) return true;
  for (const auto& kw : e->kwargs)
    if (expr_uses_name(kw.second.get(), name)) return true;
  return false;
}

bool body_uses_name(const Body& body, const std::string& name);

bool stmt_uses_name(const Stmt& s, const std::string& name) {
  if (expr_uses_name(s.expr.get(), name) || expr_uses_name(s.loop_filter.get(), name)) return true;
  for (const auto& [c, b] : s.branches)
    if (expr_uses_name(c.get(), name) || body_uses_name(b, name)) return true;
  for (const auto& p : s.params)
    if (expr_uses_name(p.default_value.get(), name)) return true;
  for (const auto& a : s.assignments)
    if (expr_uses_name(a.second.get(), name)) return true;
  return body_uses_name(s.body, name) || body_uses_name(s.else_body, name);
}

bool body_uses_name(const Body& body, const std::string& name) {
  for (const auto& s : body)
    if (stmt_uses_name(*s, name)) return true;
  return false;
}

void prepare_body(Body& body) {
  for (auto& s : body) {
    for (auto& branch : s->branches) prepare_body(branch.second);
    if (s->kind == Stmt::Kind::For)
      s->uses_loop_var = body_uses_name(s->body, "loop") || body_uses_name(s->else_body, "loop");
    prepare_body(s->body);
    prepare_body(s->else_body);
  }
}

// ---- evaluation ------------------------------------------------------------------------------------------------

class Evaluator {
 public:
  explicit Evaluator(Interp& in) : in_(in) {}

  Flow exec_body(const Body& body, Scope& scope, std::string& out) {
    for (const auto& s : body) {
      Flow f;
      try {
        f = exec(*s, scope, out);
      } catch (TemplateError& e) {
        if (e.line == 0) e.line = s->line;
        throw;
      }
      if (f != Flow::Normal) return f;
    }
    return Flow::Normal;
  }

  Value eval(const Expr& e, Scope& scope) {
    switch (e.kind) {
      case Expr::Kind::Const: return e.constant;
      case Expr::Kind::Name: {
        const Value* v = scope.lookup(e.name);
        return v ? *v : Value::undefined("'" + e.name + "' is undefined");
      }
      case Expr::Kind::List:
      case Expr::Kind::Tuple: {
        std::vector<Value> items;
        for (const auto& a : e.args) items.push_back(eval(*a, scope));
        return Value::list(std::move(items), e.kind == Expr::Kind::Tuple);
      }
      case Expr::Kind::Dict: {
        auto d = std::make_shared<DictObj>();
        for (size_t i = 0; i + 1 < e.args.size(); i += 2) {
          Value k = eval(*e.args[i], scope);
          Value v = eval(*e.args[i + 1], scope);
          if (v.is_namespace()) fail("a namespace cannot be stored in a dict");
          d->set(std::move(k), std::move(v));
        }
        return Value::dict(std::move(d));
      }
      case Expr::Kind::GetAttr: return get_attr(eval(*e.args[0], scope), e.name);
      case Expr::Kind::GetItem: return get_item(eval(*e.args[0], scope), eval(*e.args[1], scope));
      case Expr::Kind::Slice: {
        Value obj = eval(*e.args[0], scope);
        Value parts[3];
        for (int i = 0; i < 3; ++i)
          if (e.args[i + 1]) parts[i] = eval(*e.args[i + 1], scope);
        return slice(in_, obj, parts[0], parts[1], parts[2]);
      }
      case Expr::Kind::Call: {
        Value callee = eval(*e.args[0], scope);
        CallArgs args = eval_args(e, scope);
        return in_.call(callee, args);
      }
      case Expr::Kind::Filter: {
        Value input = eval(*e.args[0], scope);
        CallArgs args = eval_args(e, scope);
        return in_.apply_filter(e.name, input, args);
      }
      case Expr::Kind::Test: {
        Value input = eval(*e.args[0], scope);
        CallArgs args = eval_args(e, scope);
        return Value::boolean(in_.apply_test(e.name, input, args));
      }
      case Expr::Kind::Unary: return unary_op(e.name, eval(*e.args[0], scope));
      case Expr::Kind::Binary: {
        if (e.name == "and") {
          Value a = eval(*e.args[0], scope);
          return truthy(a) ? eval(*e.args[1], scope) : a;
        }
        if (e.name == "or") {
          Value a = eval(*e.args[0], scope);
          return truthy(a) ? a : eval(*e.args[1], scope);
        }
        Value a = eval(*e.args[0], scope);
        Value b = eval(*e.args[1], scope);
        return binary_op(in_, e.name, a, b);
      }
      case Expr::Kind::Compare: {
        Value left = eval(*e.args[0], scope);
        for (size_t i = 0; i < e.ops.size(); ++i) {
          Value right = eval(*e.args[i + 1], scope);
          if (!compare(e.ops[i], left, right)) return Value::boolean(false);
          left = std::move(right);
        }
        return Value::boolean(true);
      }
      case Expr::Kind::CondExpr: {
        if (truthy(eval(*e.args[0], scope))) return eval(*e.args[1], scope);
        if (e.args[2]) return eval(*e.args[2], scope);
        return Value::undefined("the inline if-expression on line " + std::to_string(e.line) +
                                " evaluated to false and no else section was defined.");
      }
    }
    fail("unknown expression");
  }

 private:
  static bool compare(const std::string& op, const Value& a, const Value& b) {
    if (op == "==") return equals(a, b);
    if (op == "!=") return !equals(a, b);
    if (op == "in") return contains(b, a);
    if (op == "notin") return !contains(b, a);
    require_defined(a);
    require_defined(b);
    if (op == "<") return less_than(a, b);
    if (op == ">") return less_than(b, a);
    if (op == "<=") return less_than(a, b) || equals(a, b);
    if (op == ">=") return less_than(b, a) || equals(a, b);
    fail("unknown comparison '" + op + "'");
  }

  CallArgs eval_args(const Expr& e, Scope& scope) {
    CallArgs args;
    for (size_t i = 1; i < e.args.size(); ++i) args.positional.push_back(eval(*e.args[i], scope));
    for (const auto& [k, v] : e.kwargs) args.keyword.emplace_back(k, eval(*v, scope));
    return args;
  }

  void assign(const Target& t, Value v, Scope& scope) {
    if (!t.ns_attr.empty()) {
      const Value* ns = scope.lookup(t.names[0]);
      if (!ns || !ns->is_namespace())
        fail("cannot assign attribute '" + t.ns_attr + "' on '" + t.names[0] + "': it is not a namespace()");
      if (v.holds_namespace()) fail("a namespace cannot be stored inside a namespace");
      ns->namespace_obj().attrs.set(Value::string(t.ns_attr), std::move(v));
      return;
    }
    if (!t.is_tuple) {
      scope.vars[t.names[0]] = std::move(v);
      return;
    }
    std::vector<Value> items = iterate(v);
    if (items.size() > t.names.size())
      fail("too many values to unpack (expected " + std::to_string(t.names.size()) + ")");
    if (items.size() < t.names.size())
      fail("not enough values to unpack (expected " + std::to_string(t.names.size()) + ", got " +
           std::to_string(items.size()) + ")");
    for (size_t i = 0; i < items.size(); ++i) scope.vars[t.names[i]] = std::move(items[i]);
  }

  // Applies a parsed filter chain whose innermost input is null (the {% filter %} / {% set x | f %} forms).
  Value apply_chain(const Expr& chain, Value input, Scope& scope) {
    if (!chain.args[0]) {
      CallArgs args = eval_args(chain, scope);
      return in_.apply_filter(chain.name, input, args);
    }
    Value inner = apply_chain(*chain.args[0], std::move(input), scope);
    CallArgs args = eval_args(chain, scope);
    return in_.apply_filter(chain.name, inner, args);
  }

  Value make_macro(const Stmt& s, Scope& scope, bool is_caller) {
    auto defining = scope.shared_from_this();
    in_.pin(defining);
    Scope* def_scope = defining.get();
    std::string name = is_caller ? "caller" : s.text;
    return Value::callable(name, [this, &s, def_scope](Interp& in, CallArgs& args) -> Value {
      struct CallGuard {
        explicit CallGuard(Interp& in) : in(in) { in.enter_call(); }
        ~CallGuard() { in.leave_call(); }
        Interp& in;
      } guard(in);
      auto local = std::make_shared<Scope>(def_scope->shared_from_this());
      std::vector<Value> extra;
      for (size_t i = 0; i < args.positional.size(); ++i) {
        if (i < s.params.size()) local->vars[s.params[i].name] = args.positional[i];
        else extra.push_back(args.positional[i]);
      }
      auto kwargs = std::make_shared<DictObj>();
      for (auto& [k, v] : args.keyword) {
        bool is_param = false;
        for (const auto& p : s.params) is_param = is_param || p.name == k;
        if (is_param) local->vars[k] = v;
        else if (k == "caller") local->vars["caller"] = v;
        else kwargs->set(Value::string(k), v);
      }
      for (const auto& p : s.params) {
        if (local->vars.count(p.name)) continue;
        local->vars[p.name] = p.default_value ? eval(*p.default_value, *local)
                                              : Value::undefined("parameter '" + p.name + "' was not provided");
      }
      local->vars["varargs"] = Value::list(std::move(extra), /*is_tuple=*/true);
      local->vars["kwargs"] = Value::dict(std::move(kwargs));
      std::string out;
      exec_body(s.body, *local, out);
      return Value::string(std::move(out));
    });
  }

  Flow exec_for(const Stmt& s, Scope& scope, std::string& out) {
    std::vector<Value> items = iterate(eval(*s.expr, scope));
    if (s.loop_filter) {
      std::vector<Value> kept;
      for (auto& item : items) {
        in_.count_loop_iteration();
        auto tmp = std::make_shared<Scope>(scope.shared_from_this());
        assign(s.target, item, *tmp);
        if (truthy(eval(*s.loop_filter, *tmp))) kept.push_back(std::move(item));
      }
      items = std::move(kept);
    }
    if (items.empty()) {
      auto else_scope = std::make_shared<Scope>(scope.shared_from_this());
      exec_body(s.else_body, *else_scope, out);
      return Flow::Normal;
    }
    int64_t n = static_cast<int64_t>(items.size());
    std::shared_ptr<Value> last_changed;
    std::shared_ptr<Scope> iter_scope;
    for (int64_t i = 0; i < n; ++i) {
      in_.count_loop_iteration();
      // Each iteration starts from a fresh scope (Jinja semantics); the previous one is recycled unless a macro
      // or caller defined in it still refers to it.
      if (!iter_scope || iter_scope.use_count() > 1) iter_scope = std::make_shared<Scope>(scope.shared_from_this());
      else iter_scope->vars.clear();
      assign(s.target, items[i], *iter_scope);
      if (s.uses_loop_var) iter_scope->vars["loop"] = make_loop(items, i, last_changed);
      Flow f = exec_body(s.body, *iter_scope, out);
      if (f == Flow::Break) break;
    }
    return Flow::Normal;
  }

  static Value make_loop(const std::vector<Value>& items, int64_t i, std::shared_ptr<Value>& last_changed) {
    int64_t n = static_cast<int64_t>(items.size());
    auto d = std::make_shared<DictObj>();
    auto put = [&](const char* k, Value v) { d->set(Value::string(k), std::move(v)); };
    put("index", Value::integer(i + 1));
    put("index0", Value::integer(i));
    put("revindex", Value::integer(n - i));
    put("revindex0", Value::integer(n - i - 1));
    put("first", Value::boolean(i == 0));
    put("last", Value::boolean(i == n - 1));
    put("length", Value::integer(n));
    put("depth", Value::integer(1));
    put("depth0", Value::integer(0));
    put("previtem", i > 0 ? items[i - 1] : Value::undefined("there is no previous item"));
    put("nextitem", i + 1 < n ? items[i + 1] : Value::undefined("there is no next item"));
    put("cycle", Value::callable("cycle", [i](Interp&, CallArgs& a) -> Value {
          if (a.positional.empty()) fail("no items for cycling given");
          return a.positional[i % a.positional.size()];
        }));
    if (!last_changed) last_changed = std::make_shared<Value>();
    std::shared_ptr<Value> state = last_changed;
    put("changed", Value::callable("changed", [state](Interp&, CallArgs& a) -> Value {
          Value now = Value::list(a.positional);
          if (!state->is_undefined() && equals(*state, now)) return Value::boolean(false);
          *state = now;
          return Value::boolean(true);
        }));
    return Value::dict(std::move(d));
  }

  std::string render_body(const Body& body, Scope& scope) {
    std::string captured;
    exec_body(body, scope, captured);
    return captured;
  }

  Flow exec(const Stmt& s, Scope& scope, std::string& out) {
    switch (s.kind) {
      case Stmt::Kind::Text: in_.append_output(out, s.text); return Flow::Normal;
      case Stmt::Kind::Output: {
        Value v = eval(*s.expr, scope);
        if (v.is_string()) in_.append_output(out, v.str());
        else in_.append_output(out, to_str(v));
        return Flow::Normal;
      }
      case Stmt::Kind::If:
        for (const auto& [cond, body] : s.branches)
          if (!cond || truthy(eval(*cond, scope))) return exec_body(body, scope, out);
        return Flow::Normal;
      case Stmt::Kind::For: return exec_for(s, scope, out);
      case Stmt::Kind::Set: assign(s.target, eval(*s.expr, scope), scope); return Flow::Normal;
      case Stmt::Kind::SetBlock: {
        Value v = Value::string(render_body(s.body, scope));
        if (s.expr) v = apply_chain(*s.expr, std::move(v), scope);
        assign(s.target, std::move(v), scope);
        return Flow::Normal;
      }
      case Stmt::Kind::Macro: scope.vars[s.text] = make_macro(s, scope, false); return Flow::Normal;
      case Stmt::Kind::CallBlock: {
        const Expr& call = *s.expr;
        Value callee = eval(*call.args[0], scope);
        CallArgs args = eval_args(call, scope);
        args.keyword.emplace_back("caller", make_macro(s, scope, true));
        Value r = in_.call(callee, args);
        in_.append_output(out, to_str(r));
        return Flow::Normal;
      }
      case Stmt::Kind::FilterBlock: {
        Value v = apply_chain(*s.expr, Value::string(render_body(s.body, scope)), scope);
        in_.append_output(out, to_str(v));
        return Flow::Normal;
      }
      case Stmt::Kind::With: {
        auto inner = std::make_shared<Scope>(scope.shared_from_this());
        for (const auto& [target, expr] : s.assignments) assign(target, eval(*expr, *inner), *inner);
        return exec_body(s.body, *inner, out);
      }
      case Stmt::Kind::Block: return exec_body(s.body, scope, out);
      case Stmt::Kind::Break: return Flow::Break;
      case Stmt::Kind::Continue: return Flow::Continue;
    }
    return Flow::Normal;
  }

  Interp& in_;
};

}  // namespace

void prepare(Template& tmpl) { prepare_body(tmpl.body); }

std::string execute(Interp& interp, const Template& tmpl, std::shared_ptr<Scope> globals) {
  auto root = std::make_shared<Scope>(std::move(globals));
  interp.pin(root);
  Evaluator ev(interp);
  std::string out;
  ev.exec_body(tmpl.body, *root, out);
  return out;
}

}  // namespace kairo::jinja
