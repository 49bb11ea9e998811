#pragma once
// The --device flag shared by run, serve, bench and plan, and loading a model onto the device it names.
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <memory>
#include <string>

#include "devices/open_device.h"
#include "model/model.h"
#include "terminal/notes.h"
#include "terminal/progress_bar.h"

namespace kairo::tools {

inline CLI::Option* add_device_option(CLI::App* cmd, std::string& device) {
  // The CUDA device reads KAIRO_CUDA_GRAPHS when it opens (kernels/cuda/step_graphs.h): the flag sets it.
  cmd->add_flag_callback("--no-cuda-graphs", [] { ::setenv("KAIRO_CUDA_GRAPHS", "0", 1); },
                         "With --device cuda: launch every kernel eagerly instead of replaying repeated steps as "
                         "CUDA graphs (for debugging and profiling)");
  return cmd->add_option("--device", device, "Device to run on: cpu, vulkan[:N] or cuda[:N] (`kairo devices` lists them)")
      ->capture_default_str();
}

// With a progress bar (bytes of weights on the device, rate, ETA) when the load takes over half a second.
inline Result<std::unique_ptr<model::Model>> load_model_on(const std::string& path, const std::string& device) {
  KAIRO_TRY_ASSIGN(std::shared_ptr<kernels::Device> dev, devices::open_device(device));
  const std::string name = path.substr(path.find_last_of('/') + 1);
  ProgressBar bar("loading " + name, 0, ProgressUnit::Bytes, progress_wanted(quiet()), stderr, 0.5);
  auto loaded = model::Model::load(path, std::move(dev), [&](uint64_t done, uint64_t total) {
    bar.set_total(total);
    bar.update(done);
  });
  bar.finish();
  return loaded;
}

}  // namespace kairo::tools
