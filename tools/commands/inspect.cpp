// `kairo inspect MODEL`: metadata, tensors, types, sizes and parameter count of a GGUF file. Exit 1 on a bad file.
#include <cstdio>
#include <map>

#include "command_registry.h"
#include "core/format.h"
#include "gguf/gguf_file.h"
#include "model/config.h"

namespace kairo::tools {
namespace {

struct InspectArgs {
  std::string model;
  bool all_tensors = false;
};

int run_inspect(const InspectArgs& args) {
  auto file = gguf::File::open(args.model);
  if (!file.ok()) {
    std::fprintf(stderr, "error: %s\n", file.error().message.c_str());
    return 1;
  }
  const gguf::File& f = *file;
  std::printf("file: %s\nGGUF version %u, %s, alignment %llu, %zu metadata keys, %zu tensors\n\n", f.path().c_str(),
              f.version(), human_bytes(f.file_size()).c_str(), static_cast<unsigned long long>(f.alignment()),
              f.metadata().size(), f.tensors().size());
  std::printf("metadata:\n");
  for (const auto& [key, value] : f.metadata()) {
    std::printf("  %-44s %-8s %s\n", key.c_str(), gguf::value_type_name(value.type()), value.to_display().c_str());
  }
  uint64_t n_params = 0;
  std::map<std::string, std::pair<uint64_t, uint64_t>> by_type;  // type -> (tensors, bytes)
  std::printf("\ntensors:\n");
  size_t shown = 0;
  for (const auto& t : f.tensors()) {
    n_params += static_cast<uint64_t>(t.n_elements());
    auto& agg = by_type[std::string(dtype_name(t.type))];
    agg.first += 1;
    agg.second += t.n_bytes;
    if (!args.all_tensors && shown >= 24) continue;
    ++shown;
    std::string dims;
    for (size_t i = 0; i < t.dims.size(); ++i) dims += (i ? " x " : "") + std::to_string(t.dims[i]);
    std::printf("  %-36s %-6s [%s] %s\n", t.name.c_str(), std::string(dtype_name(t.type)).c_str(), dims.c_str(),
                human_bytes(t.n_bytes).c_str());
  }
  if (shown < f.tensors().size()) std::printf("  ... %zu more (use --all)\n", f.tensors().size() - shown);
  std::printf("\nby type:\n");
  for (const auto& [type, agg] : by_type) {
    std::printf("  %-6s %5llu tensors %s\n", type.c_str(), static_cast<unsigned long long>(agg.first),
                human_bytes(agg.second).c_str());
  }
  std::printf("\nparameters: %llu (%.3f B)\n", static_cast<unsigned long long>(n_params), n_params / 1e9);
  auto config = model::read_config(f);
  if (config.ok()) {
    const auto& c = *config;
    std::printf("model: %s, %s\n", c.arch.c_str(), model::describe_shape(c).c_str());
  } else {
    std::printf("model: not loadable by kairo: %s\n", config.error().message.c_str());
  }
  return 0;
}

void setup_inspect(CLI::App& app) {
  auto args = std::make_shared<InspectArgs>();
  CLI::App* cmd = app.add_subcommand("inspect", "Show a GGUF file's metadata, tensors and parameter count");
  cmd->add_option("model", args->model, "GGUF file")->required();
  cmd->add_flag("--all", args->all_tensors, "List every tensor");
  cmd->callback([args] { set_exit_code(run_inspect(*args)); });
}

}  // namespace

KAIRO_REGISTER_COMMAND(inspect, setup_inspect);

}  // namespace kairo::tools
