#include "tokenizer/jinja/chat_template.h"

#include <new>

#include "tokenizer/jinja/error.h"
#include "tokenizer/jinja/evaluator.h"
#include "tokenizer/jinja/interp.h"
#include "tokenizer/jinja/parser.h"

namespace kairo::jinja {

static std::string describe(const TemplateError& e) {
  std::string where = e.line > 0 ? " (template line " + std::to_string(e.line) + ")" : "";
  switch (e.kind) {
    case TemplateError::Kind::Raised: return e.message;  // the template author's own message, verbatim
    case TemplateError::Kind::Syntax: return "template syntax error: " + e.message + where;
    default: return e.message + where;
  }
}

Result<std::string> render(const std::string& template_source, const nlohmann::ordered_json& context,
                           const RenderOptions& options) {
  if (!context.is_object() && !context.is_null())
    return Error{"the template context must be a JSON object of variables, got " + std::string(context.type_name())};
  try {
    Template tmpl = parse_template(template_source, LexOptions{options.trim_blocks, options.lstrip_blocks});
    prepare(tmpl);
    auto globals = std::make_shared<Scope>();
    add_globals(*globals);
    auto vars = std::make_shared<Scope>(globals);
    if (context.is_object())
      for (auto it = context.begin(); it != context.end(); ++it) vars->vars[it.key()] = from_json(it.value());
    Interp interp(options);
    return execute(interp, tmpl, vars);
  } catch (const TemplateError& e) {
    return Error{describe(e)};
  } catch (const std::bad_alloc&) {
    return Error{"the template ran out of memory; lower RenderOptions limits or check the template"};
  } catch (const std::exception& e) {
    return Error{std::string("template error: ") + e.what()};
  }
}

Result<std::string> apply_chat_template(const std::string& tmpl, const nlohmann::ordered_json& messages,
                                        const nlohmann::ordered_json& tools, bool add_generation_prompt,
                                        const std::string& bos_token, const std::string& eos_token,
                                        const RenderOptions& options) {
  nlohmann::ordered_json context = nlohmann::ordered_json::object();
  context["messages"] = messages;
  if (!tools.is_null()) context["tools"] = tools;
  context["add_generation_prompt"] = add_generation_prompt;
  context["bos_token"] = bos_token;
  context["eos_token"] = eos_token;
  return render(tmpl, context, options);
}

}  // namespace kairo::jinja
