#pragma once
// The --device flag shared by run, serve, bench and plan, and loading a model onto the device it names.
#include <CLI/CLI.hpp>

#include <memory>
#include <string>

#include "devices/open_device.h"
#include "model/model.h"

namespace kairo::tools {

inline CLI::Option* add_device_option(CLI::App* cmd, std::string& device) {
  return cmd->add_option("--device", device, "Device to run on: cpu, vulkan[:N] or cuda[:N] (`kairo devices` lists them)")
      ->capture_default_str();
}

inline Result<std::unique_ptr<model::Model>> load_model_on(const std::string& path, const std::string& device) {
  KAIRO_TRY_ASSIGN(std::shared_ptr<kernels::Device> dev, devices::open_device(device));
  return model::Model::load(path, std::move(dev));
}

}  // namespace kairo::tools
