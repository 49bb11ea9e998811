#pragma once
// Syntax tree of a parsed template. Nodes are plain data; the evaluator walks them.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tokenizer/jinja/value.h"

namespace kairo::jinja {

struct Expr;
struct Stmt;
using ExprPtr = std::unique_ptr<Expr>;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct Expr {
  enum class Kind {
    Const,     // constant
    Name,      // name
    List,      // args = items
    Tuple,     // args = items
    Dict,      // args = key0, value0, key1, value1...
    GetAttr,   // args[0].name
    GetItem,   // args[0][args[1]]
    Slice,     // args[0][args[1]:args[2]:args[3]] (null for omitted parts)
    Call,      // args[0](args[1..], kwargs)
    Filter,    // args[0] | name(args[1..], kwargs); args[0] null inside {% filter %}
    Test,      // args[0] is name(args[1..], kwargs)
    Unary,     // name in {"-", "+", "not"}; args[0]
    Binary,    // name in {"+","-","*","/","//","%","**","~","and","or"}; args[0], args[1]
    Compare,   // args[0] ops[0] args[1] ops[1] args[2] ... (chained like Python)
    CondExpr,  // args[1] if args[0] else args[2] (args[2] null: Undefined)
  };
  Kind kind;
  int line = 0;
  Value constant;
  std::string name;
  std::vector<ExprPtr> args;
  std::vector<std::pair<std::string, ExprPtr>> kwargs;
  std::vector<std::string> ops;
};

// Left side of `set` / `for`: a name, a tuple of names, or `namespace.attr`.
struct Target {
  std::vector<std::string> names;  // one name, or several for tuple unpacking
  bool is_tuple = false;
  std::string ns_attr;  // non-empty: names[0].ns_attr
};

struct MacroParam {
  std::string name;
  ExprPtr default_value;  // may be null
};

struct Stmt {
  enum class Kind { Text, Output, If, For, Set, SetBlock, Macro, CallBlock, FilterBlock, With, Break, Continue, Block };
  Kind kind;
  int line = 0;
  std::string text;  // Text; Macro name

  ExprPtr expr;  // Output; Set value; For iterable; CallBlock call; FilterBlock filter chain; SetBlock filter
  Target target;  // Set / SetBlock / For

  std::vector<std::pair<ExprPtr, Body>> branches;  // If: condition + body (else branch has a null condition)
  Body body;                                       // For / SetBlock / Macro / CallBlock / FilterBlock / With / Block
  Body else_body;                                  // For
  ExprPtr loop_filter;                             // For `if` clause
  bool uses_loop_var = true;                       // For: whether `loop` appears in the body (set by prepare())
  std::vector<MacroParam> params;                  // Macro / CallBlock (caller's parameters)
  std::vector<std::pair<Target, ExprPtr>> assignments;  // With
};

struct Template {
  Body body;
};

}  // namespace kairo::jinja
