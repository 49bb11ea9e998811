#pragma once
// Walks a parsed template: statements write to an output string, expressions produce Values.
#include <string>

#include "tokenizer/jinja/ast.h"
#include "tokenizer/jinja/interp.h"

namespace kairo::jinja {

// Records which loops use the `loop` variable, so the others skip building it. (Unknown filters and tests are
// reported when reached, as Jinja2 3.1 does for those inside conditionals.)
void prepare(Template& tmpl);

// Renders a prepared template with `globals` as the outermost scope. Throws TemplateError.
std::string execute(Interp& interp, const Template& tmpl, std::shared_ptr<Scope> globals);

}  // namespace kairo::jinja
