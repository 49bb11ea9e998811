// `kairo devices [--json]`: every device kairo can run on here (the CPU, each Vulkan device, CUDA) with the
// capacities and limits that decide what fits and which kernels run: memory heaps, subgroup size, fp16 / int8 /
// integer-dot / cooperative-matrix support, the largest buffer binding and allocation.
#include <cstdio>

#include "command_registry.h"
#include "devices/open_device.h"

namespace kairo::tools {
namespace {

void setup_devices(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("devices", "List the devices kairo can run on (--device cpu|vulkan[:N]|cuda[:N])");
  cmd->add_flag("--json", *json, "Print JSON");
  cmd->callback([json] {
    const nlohmann::json listing = devices::list_devices_json();
    if (*json) {
      std::printf("%s\n", listing.dump(2).c_str());
    } else {
      std::fputs(devices::format_devices(listing).c_str(), stdout);
    }
    set_exit_code(0);
  });
}

}  // namespace
KAIRO_REGISTER_COMMAND(devices, setup_devices);
}  // namespace kairo::tools
