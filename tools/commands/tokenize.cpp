// `kairo tokenize --model M [--no-bos] [--parse-special] (--text T | --file F)`: prints {"tokens":[...]}.
#include <cstdio>
#include <memory>

#include <nlohmann/json.hpp>

#include "command_registry.h"
#include "core/mapped_file.h"
#include "gguf/gguf_file.h"
#include "tokenizer/tokenizer.h"

namespace kairo::tools {
namespace {

struct TokenizeArgs {
  std::string model;
  std::string text;
  std::string file;
  bool no_bos = false;
  bool parse_special = false;
};

int run_tokenize(const TokenizeArgs& args, bool have_text, bool have_file) {
  if (have_text == have_file) {
    std::fprintf(stderr, "error: give the text with exactly one of --text or --file\n");
    return 1;
  }
  std::string text = args.text;
  if (have_file) {
    auto content = read_text_file(args.file);
    if (!content.ok()) {
      std::fprintf(stderr, "error: %s\n", content.error().message.c_str());
      return 1;
    }
    text = std::move(content).value();
  }
  auto file = gguf::File::open(args.model);
  if (!file.ok()) {
    std::fprintf(stderr, "error: %s\n", file.error().message.c_str());
    return 1;
  }
  auto tok = tokenizer::Tokenizer::from_gguf(*file);
  if (!tok.ok()) {
    std::fprintf(stderr, "error: %s\n", tok.error().message.c_str());
    return 1;
  }
  const bool add_bos = (*tok)->add_bos_by_default() && !args.no_bos;
  const nlohmann::json out = {{"tokens", (*tok)->encode(text, add_bos, args.parse_special)}};
  std::printf("%s\n", out.dump().c_str());
  return 0;
}

void setup_tokenize(CLI::App& app) {
  auto args = std::make_shared<TokenizeArgs>();
  CLI::App* cmd = app.add_subcommand("tokenize", "Print the token ids of a text as JSON: {\"tokens\":[...]}");
  cmd->add_option("--model,-m", args->model, "GGUF file whose tokenizer to use")->required();
  auto* text = cmd->add_option("--text,-t", args->text, "The text");
  auto* file = cmd->add_option("--file,-f", args->file, "Read the text from this file (bytes as they are)");
  cmd->add_flag("--no-bos", args->no_bos, "Do not add BOS even when the model asks for it");
  cmd->add_flag("--parse-special", args->parse_special,
                "Special tokens written in the text (e.g. <|im_start|>) become their ids");
  cmd->callback([args, text, file] { set_exit_code(run_tokenize(*args, text->count() > 0, file->count() > 0)); });
}

}  // namespace

KAIRO_REGISTER_COMMAND(tokenize, setup_tokenize);

}  // namespace kairo::tools
