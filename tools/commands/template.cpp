// `kairo template (--model M | --template-file F) --context-file C.json [--date YYYY-MM-DD]`: renders a chat
// template with the variables of the JSON object in C (messages, add_generation_prompt, tools, bos_token,
// eos_token, and any others the template reads) and prints exactly the rendered text, with no newline added.
// An error in the template (including its own raise_exception) exits 1 with the template's message on stderr.
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "command_registry.h"
#include "gguf/gguf_file.h"
#include "tokenizer/jinja/chat_template.h"

namespace kairo::tools {
namespace {

struct TemplateArgs {
  std::string model;
  std::string template_file;
  std::string context_file;
  std::string date;
};

Result<std::string> read_text(const std::string& path, const char* what) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return Error{std::string("cannot open ") + what + " '" + path + "'"};
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

Result<std::string> load_template(const TemplateArgs& args) {
  if (!args.template_file.empty()) return read_text(args.template_file, "--template-file");
  auto file = gguf::File::open(args.model);
  if (!file.ok()) return file.error();
  if (!file->find("tokenizer.chat_template"))
    return Error{"'" + args.model + "' has no tokenizer.chat_template; pass the template with --template-file"};
  return file->get_string("tokenizer.chat_template");
}

int run_template(const TemplateArgs& args) {
  auto fail = [](const std::string& msg) {
    std::fprintf(stderr, "error: %s\n", msg.c_str());
    return 1;
  };
  if (args.model.empty() == args.template_file.empty()) return fail("give exactly one of --model and --template-file");
  auto tmpl = load_template(args);
  if (!tmpl.ok()) return fail(tmpl.error().message);
  auto context_text = read_text(args.context_file, "--context-file");
  if (!context_text.ok()) return fail(context_text.error().message);
  nlohmann::ordered_json context;
  try {
    context = nlohmann::ordered_json::parse(*context_text);
  } catch (const nlohmann::json::exception& e) {
    return fail("--context-file '" + args.context_file + "' is not valid JSON: " + e.what());
  }
  if (!context.is_object())
    return fail("--context-file must hold a JSON object like {\"messages\": [...], \"add_generation_prompt\": true}");
  jinja::RenderOptions options;
  options.strftime_now_date = args.date;
  auto out = jinja::render(*tmpl, context, options);
  if (!out.ok()) return fail(out.error().message);
  std::fwrite(out->data(), 1, out->size(), stdout);
  return 0;
}

void setup_template(CLI::App& app) {
  auto args = std::make_shared<TemplateArgs>();
  CLI::App* cmd = app.add_subcommand("template", "Render a chat template (Jinja2) with a JSON context");
  auto* model = cmd->add_option("--model,-m", args->model, "GGUF file whose tokenizer.chat_template to render");
  auto* file = cmd->add_option("--template-file", args->template_file, "Jinja2 template file to render");
  model->excludes(file);
  cmd->add_option("--context-file", args->context_file,
                  "JSON object with messages, add_generation_prompt, tools, bos_token, eos_token")
      ->required();
  cmd->add_option("--date", args->date, "Pin strftime_now() to this date (YYYY-MM-DD) for reproducible output");
  cmd->callback([args] { set_exit_code(run_template(*args)); });
}

}  // namespace

KAIRO_REGISTER_COMMAND(template, setup_template);

}  // namespace kairo::tools
