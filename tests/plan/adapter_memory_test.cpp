// LoRA adapter memory (plan/adapter_memory.h): the bytes of an adapter of a given rank from the base's shapes, checked
// by hand on llama-3-8b; an adapter file's bytes from its header, equal to what the loader puts on the device
// (model::lora::prepare_adapter) for each file type; the runtime reservation and the step scratch; and the KV pool
// shrinking by exactly the adapters' bytes.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include <unistd.h>

#include "convert/lora/synth_adapter.h"
#include "gguf/gguf_file.h"
#include "model/config.h"
#include "model/lora/adapter.h"
#include "model/lora/lora_set.h"
#include "plan/adapter_memory.h"
#include "plan/kv_sizing.h"
#include "plan/model_presets.h"

namespace kairo::plan {
namespace {

const std::string kBase = std::string(KAIRO_SHARED_DIR) + "/models/synth-llama-gqa.Q8_0.gguf";

TEST(AdapterMemory, FullAdapterBytesOfLlama3_8bByHand) {
  const model::ModelConfig c = find_preset("llama-3-8b")->config;
  // Per layer, (n_in + n_out) of q 4096+4096, k 4096+1024, v 4096+1024, o 4096+4096, gate and up 4096+14336, down
  // 14336+4096 = 81920; × rank 16 × 32 layers = 41.9 M parameters, × 2 bytes in F16.
  EXPECT_EQ(full_adapter_bytes(c, 16), 81920ull * 16 * 32 * 2);
  EXPECT_EQ(full_adapter_bytes(c, 16, DType::F32), 81920ull * 16 * 32 * 4);
  EXPECT_EQ(full_adapter_bytes(c, 64), 4 * full_adapter_bytes(c, 16));
}

// A synth adapter of every projection, written in `type`; removed with the fixture (a per-process name: ctest runs
// two test processes at once).
struct AdapterFile {
  std::string path;
  explicit AdapterFile(DType type, int rank) {
    path = ::testing::TempDir() + "/kairo_adapter_memory_" + std::to_string(::getpid()) + "_" +
           std::string(dtype_name(type)) + "_" + std::to_string(rank) + ".gguf";
    convert::AdapterSynthOptions o;
    o.rank = rank;
    o.type = type;
    const auto r = convert::write_synth_adapter(kBase, path, o);
    EXPECT_TRUE(r.ok()) << r.error().message;
  }
  ~AdapterFile() { std::remove(path.c_str()); }
};

TEST(AdapterMemory, AFilesBytesAreWhatTheLoaderPutsOnTheDevice) {
  auto base = gguf::File::open(kBase);
  ASSERT_TRUE(base.ok()) << base.error().message;
  auto config = model::read_config(*base);
  ASSERT_TRUE(config.ok());
  for (const DType type : {DType::F16, DType::BF16, DType::F32, DType::Q8_0}) {
    const AdapterFile file(type, 32);  // rank 32: Q8_0 lora_b rows split into blocks, nothing falls back to F16
    auto header = gguf::File::open(file.path);
    ASSERT_TRUE(header.ok()) << header.error().message;
    const AdapterSize size = adapter_size(tensors_from_file(*header));
    EXPECT_EQ(size.max_rank, 32);
    // F16 and BF16 stay as stored; F32 and Q8_0 are kept in f32 on the device.
    const DType kept = type == DType::F16 || type == DType::BF16 ? type : DType::F32;
    EXPECT_EQ(size.bytes, full_adapter_bytes(*config, 32, kept)) << dtype_name(type);

    auto adapter = model::lora::load_adapter(file.path, *base, *config);
    ASSERT_TRUE(adapter.ok()) << adapter.error().message;
    auto prepared = model::lora::prepare_adapter(*adapter, *config);
    ASSERT_TRUE(prepared.ok()) << prepared.error().message;
    EXPECT_EQ(prepared->matrices->device_bytes, size.bytes) << dtype_name(type);
  }
}

TEST(AdapterMemory, LoadedAdaptersRuntimeSlotsAndScratch) {
  const model::ModelConfig c = find_preset("llama-3-8b")->config;
  AdapterMemoryRequest r;
  r.loaded = {{1000, 8}, {3000, 16}};
  r.max_loras = 6;
  r.max_lora_rank = 32;
  r.max_batch_tokens = 256;

  AdapterMemory without_runtime = adapter_memory(c, r);
  EXPECT_EQ(without_runtime.loaded_bytes, 4000u);
  EXPECT_EQ(without_runtime.n_runtime_slots, 0);
  EXPECT_EQ(without_runtime.adapters_bytes(), 4000u);
  // Gathered inputs and expands of the widest projection (ffn 14336), shrinks of three projections at rank 16.
  EXPECT_EQ(without_runtime.scratch_bytes, 4ull * (2 * 256 * 14336 + 3 * 256 * 16));
  EXPECT_EQ(without_runtime.scratch_bytes, lora_scratch_bytes(c, 256, 16));

  r.runtime_loads = true;
  const AdapterMemory m = adapter_memory(c, r);
  EXPECT_EQ(m.n_runtime_slots, 4);  // --max-loras 6, two given at startup
  EXPECT_EQ(m.runtime_slot_bytes, full_adapter_bytes(c, 32));
  EXPECT_EQ(m.adapters_bytes(), 4000u + 4 * full_adapter_bytes(c, 32));
  EXPECT_EQ(m.scratch_bytes, lora_scratch_bytes(c, 256, 32));  // a runtime load may bring rank 32
  EXPECT_EQ(m.total_bytes(), m.adapters_bytes() + m.scratch_bytes);
  EXPECT_EQ(m.describe(), "2 adapters 3.91 KiB + 4 runtime slots of rank 32 × 160.00 MiB + step scratch 28.09 MiB");

  EXPECT_EQ(adapter_memory(c, AdapterMemoryRequest{}).total_bytes(), 0u);  // no adapters: nothing, not even scratch
}

// The KV pool is what is left after the adapters too: the blocks shrink by the adapters' bytes (rounded to blocks),
// and a budget the adapters eat up is refused naming them and the flags that size them.
TEST(AdapterMemory, TheKvPoolShrinksByTheAdaptersBytes) {
  const model::ModelConfig c = find_preset("llama-3-8b")->config;
  KvPoolRequest r;
  r.budget_bytes = 20ull << 30;
  r.weights_bytes = 16ull << 30;
  r.max_model_len = 4096;
  const auto without = size_kv_pool(c, r);
  ASSERT_TRUE(without.ok()) << without.error().message;
  r.adapter_bytes = 1ull << 30;
  const auto with = size_kv_pool(c, r);
  ASSERT_TRUE(with.ok()) << with.error().message;
  EXPECT_EQ(without->n_blocks - with->n_blocks, static_cast<int64_t>((1ull << 30) / with->bytes_per_block));

  r.adapter_bytes = 4ull << 30;
  r.adapter_fix = "lower --max-loras or --max-lora-rank";
  const auto refused = size_kv_pool(c, r);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message,
            "the weights (16.0 GiB), activations (0 B), LoRA adapters (4.0 GiB) and runtime overhead (0 B) need "
            "20.0 GiB, more than the budget of 20.0 GiB, leaving nothing for the KV cache; lower --max-loras or "
            "--max-lora-rank, or raise --mem-budget-gb to at least 20.5 GiB, or quantize the model so its weights "
            "take at most 15.5 GiB (now 16.0 GiB; q8_0 is ~8.5 bits a weight, q4_k ~4.5)");
}

}  // namespace
}  // namespace kairo::plan
