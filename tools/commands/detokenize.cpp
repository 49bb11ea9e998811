// `kairo detokenize --model M --tokens 1,2,3 [--special]`: prints the text of the tokens (llama.cpp's
// llama_detokenize: the SentencePiece space prefix of the first token is dropped, tokenization spaces cleaned where
// the model asks for it) followed by a newline.
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "command_registry.h"
#include "core/format.h"
#include "gguf/gguf_file.h"
#include "tokenizer/tokenizer.h"

namespace kairo::tools {
namespace {

struct DetokenizeArgs {
  std::string model;
  std::string tokens;
  bool special = false;
};

// "1, 2,3" -> {1, 2, 3}; an error names the first item that is not an integer.
Result<std::vector<int32_t>> parse_ids(const std::string& list) {
  std::vector<int32_t> ids;
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t end = list.find(',', pos);
    if (end == std::string::npos) end = list.size();
    std::string item = list.substr(pos, end - pos);
    const size_t b = item.find_first_not_of(" \t");
    const size_t e = item.find_last_not_of(" \t");
    item = b == std::string::npos ? "" : item.substr(b, e - b + 1);
    if (item.empty() && end == list.size() && ids.empty() && pos == 0) break;  // "--tokens ''": no tokens
    errno = 0;
    char* stop = nullptr;
    const long long v = item.empty() ? 0 : std::strtoll(item.c_str(), &stop, 10);
    if (item.empty() || *stop != '\0' || errno == ERANGE || v < INT32_MIN || v > INT32_MAX) {
      return Error{strprintf("--tokens: %s is not a token id (expected comma-separated integers like 1,2,3)",
                             quote_for_error(item).c_str())};
    }
    ids.push_back(static_cast<int32_t>(v));
    pos = end + 1;
  }
  return ids;
}

int run_detokenize(const DetokenizeArgs& args) {
  auto ids = parse_ids(args.tokens);
  if (!ids.ok()) {
    std::fprintf(stderr, "error: %s\n", ids.error().message.c_str());
    return 1;
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
  const Status valid = (*tok)->check_ids(*ids);
  if (!valid.ok()) {
    std::fprintf(stderr, "error: %s\n", valid.error().message.c_str());
    return 1;
  }
  const std::string text = (*tok)->detokenize(*ids, {.remove_special = false, .render_special = args.special});
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fputc('\n', stdout);
  return 0;
}

void setup_detokenize(CLI::App& app) {
  auto args = std::make_shared<DetokenizeArgs>();
  CLI::App* cmd = app.add_subcommand("detokenize", "Print the text of token ids");
  cmd->add_option("--model,-m", args->model, "GGUF file whose tokenizer to use")->required();
  cmd->add_option("--tokens", args->tokens, "Comma-separated token ids, e.g. 1,2,3")->required();
  cmd->add_flag("--special", args->special, "Show control tokens (BOS, <|im_end|>, ...) as their text");
  cmd->callback([args] { set_exit_code(run_detokenize(*args)); });
}

}  // namespace

KAIRO_REGISTER_COMMAND(detokenize, setup_detokenize);

}  // namespace kairo::tools
