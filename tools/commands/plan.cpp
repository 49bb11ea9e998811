// `kairo plan`: will this model fit this device at this context and concurrency, and how fast can it possibly go?
// Reads only the GGUF header (or a shape preset); the numbers come from src/plan/, the same code the server uses to
// size its KV pool.
#include <cctype>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "bench/roofline.h"
#include "command_registry.h"
#include "core/format.h"
#include "gguf/gguf_file.h"
#include "model/config.h"
#include "model/lora/adapter_format.h"
#include "devices/open_device.h"
#include "plan/device_catalog.h"
#include "plan/memory_plan.h"
#include "plan/model_presets.h"
#include "plan/model_shapes.h"
#include "plan/system_memory.h"

namespace kairo::tools {
namespace {

struct PlanArgs {
  std::string model, preset, device, weights_dtype, kv_dtype = "f16", draft_model;
  int context = 0, concurrency = 1, max_batch_tokens = 512;
  std::vector<std::string> loras;  // --lora PATH: adapters given at startup
  int max_loras = 0;               // > the --lora count: runtime slots (`kairo serve --allow-runtime-lora`)
  int max_lora_rank = model::lora::kDefaultMaxRank;
  double mem_gb = 0, bandwidth_gbs = 0, tflops = 0, tops = 0, usable_fraction = 0;
  bool json = false, list = false;
};

std::string gib(uint64_t b) { return human_bytes(b); }

std::string lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

Result<plan::DeviceSpec> resolve_device(const PlanArgs& a) {
  const bool custom_numbers = a.mem_gb > 0 || a.bandwidth_gbs > 0 || a.tflops > 0 || a.tops > 0;
  std::string name = a.device.empty() ? (a.mem_gb > 0 ? "custom" : "cpu") : a.device;
  plan::DeviceSpec d;
  if (name == "custom") {
    if (!(a.mem_gb > 0) || !(a.bandwidth_gbs > 0)) {
      return Error{"a custom device needs at least --mem-gb and --bandwidth-gbs (and --tflops / --tops for the "
                   "compute bounds)"};
    }
    d.name = "custom";
    d.description = "custom device";
    d.usable_fraction = 0.9;
  } else if (name == "cpu") {
    KAIRO_TRY_ASSIGN(const plan::MemoryHeadroom headroom, plan::read_memory_headroom());
    const uint64_t avail = headroom.bytes;
    plan::CpuMeasurement m;
    m.mem_available_bytes = avail;
    if (!(a.bandwidth_gbs > 0 && (a.tflops > 0 || a.tops > 0))) {
      std::fprintf(stderr, "measuring this CPU as `kairo bench roofline` does (a few seconds)...\n");
      bench::RooflineOptions o;
      o.seconds_per_test = 0.1;
      m = bench::measure_cpu(o, avail);
    }
    m.memory_limited_by = headroom.limited_by;
    d = plan::cpu_device(m);
  } else if (name.rfind("vulkan", 0) == 0 || name.rfind("cuda", 0) == 0) {
    // A device on this machine: its memory from the driver, its read bandwidth measured by a streaming kernel.
    KAIRO_TRY_ASSIGN(std::shared_ptr<kernels::Device> dev, devices::open_device(name));
    const kernels::DeviceMemoryInfo mem = dev->memory_info();
    d.name = name;
    d.description = dev->name();
    d.memory_bytes = mem.total_bytes;
    d.usable_fraction = 0.9;
    d.measured = true;
    if (!(a.bandwidth_gbs > 0)) {
      std::fprintf(stderr, "measuring %s's read bandwidth (a few seconds)...\n", dev->name().c_str());
      KAIRO_TRY_ASSIGN(d.bandwidth_gbs, devices::measure_device_read_bandwidth(*dev, 256ull << 20));
    }
  } else {
    KAIRO_TRY_ASSIGN(d, plan::find_device(name));
  }
  if (a.mem_gb > 0) d.memory_bytes = static_cast<uint64_t>(a.mem_gb * (1ull << 30));
  if (a.bandwidth_gbs > 0) d.bandwidth_gbs = a.bandwidth_gbs;
  if (a.tflops > 0) d.bf16_tflops = a.tflops;
  if (a.tops > 0) d.int8_tops = a.tops;
  if (name == "custom" && d.int8_tops == 0) d.int8_tops = d.bf16_tflops;
  if (a.usable_fraction > 0) {
    if (a.usable_fraction > 1) return Error{"--usable-fraction must be in (0, 1]"};
    d.usable_fraction = a.usable_fraction;
  }
  if (custom_numbers && name != "custom") d.description += " (with values from the command line)";
  return d;
}

struct Model {
  model::ModelConfig config;
  std::vector<plan::TensorSpec> tensors;
  std::string source;
};

Result<Model> resolve_model(const PlanArgs& a) {
  Model m;
  std::optional<DType> wtype;
  if (!a.weights_dtype.empty()) {
    KAIRO_TRY_ASSIGN(const DType t, plan::parse_weights_dtype(a.weights_dtype));
    wtype = t;
  }
  if (!a.model.empty()) {
    KAIRO_TRY_ASSIGN(const gguf::File file, gguf::File::open(a.model));
    KAIRO_TRY_ASSIGN(m.config, model::read_config(file));
    m.tensors = plan::tensors_from_file(file);
    if (wtype) m.tensors = plan::retype_matrices(m.tensors, *wtype);
    m.source = a.model;
  } else {
    KAIRO_TRY_ASSIGN(const plan::ModelPreset p, plan::find_preset(a.preset));
    m.config = p.config;
    m.tensors = plan::standard_tensors(p.config, wtype.value_or(DType::BF16));
    m.source = "preset " + p.name;
  }
  return m;
}

// --draft-model: read from its header like the model; refused as `kairo serve` refuses it (the same words).
Result<plan::DraftModelSpec> resolve_draft(const PlanArgs& a, const model::ModelConfig& target, int context,
                                           DType kv_dtype) {
  KAIRO_TRY_ASSIGN(const gguf::File file, gguf::File::open(a.draft_model));
  KAIRO_TRY_ASSIGN(const model::ModelConfig c, model::read_config(file));
  if (c.n_vocab != target.n_vocab) {
    return Error{strprintf("the draft model's vocabulary has %d tokens but the model's %d: a draft model must share "
                           "the model's tokenizer",
                           c.n_vocab, target.n_vocab)};
  }
  const int ctx = context > 0 ? context : target.context_length;
  if (c.context_length < ctx) {
    return Error{strprintf("the draft model's context is %d tokens, shorter than --context %d; lower --context or "
                           "use another draft model",
                           c.context_length, ctx)};
  }
  KAIRO_TRY_ASSIGN(plan::DraftModelSpec d, plan::draft_model_spec(c, plan::tensors_from_file(file), kv_dtype));
  d.source = a.draft_model;
  return d;
}

// --lora / --max-loras / --max-lora-rank: the adapter memory `kairo serve` with the same flags (and
// --allow-runtime-lora when --max-loras is given) reserves (plan/adapter_memory.h).
Result<plan::AdapterMemory> resolve_adapters(const PlanArgs& a, const model::ModelConfig& config) {
  plan::AdapterMemoryRequest r;
  for (const std::string& path : a.loras) {
    auto file = gguf::File::open(path);
    if (!file.ok()) return Error{"--lora " + path + ": " + file.error().message};
    r.loaded.push_back(plan::adapter_size(plan::tensors_from_file(*file)));
  }
  r.runtime_loads = a.max_loras > 0;
  r.max_loras = a.max_loras;
  r.max_lora_rank = a.max_lora_rank;
  r.max_batch_tokens = a.max_batch_tokens;
  return plan::adapter_memory(config, r);
}

// The draft model's part of the KV pool `kairo serve` sizes: as many token slots as the model's.
uint64_t draft_pool_bytes(const plan::Plan& p) {
  return p.request.draft && p.kv_pool.ok()
             ? static_cast<uint64_t>(p.kv_pool->n_token_slots) * p.request.draft->kv_bytes_per_token
             : 0;
}

nlohmann::json to_json(const plan::Plan& p, const std::string& source) {
  using nlohmann::json;
  const auto& c = p.config;
  json j;
  j["model"] = {{"source", source},     {"arch", c.arch},         {"name", c.name},
                {"n_layers", c.n_layers}, {"dim", c.dim},         {"n_heads", c.n_heads},
                {"n_kv_heads", c.n_kv_heads}, {"head_dim", c.head_dim}, {"ffn_dim", c.ffn_dim},
                {"n_vocab", c.n_vocab}, {"context_length", c.context_length}, {"tied_embeddings", c.tied_embeddings}};
  const auto& d = p.device;
  j["device"] = {{"name", d.name}, {"description", d.description}, {"memory_bytes", d.memory_bytes},
                 {"bandwidth_gbs", d.bandwidth_gbs}, {"bf16_tflops", d.bf16_tflops}, {"int8_tops", d.int8_tops},
                 {"unified_memory", d.unified_memory}, {"usable_fraction", d.usable_fraction},
                 {"runtime_overhead_bytes", d.runtime_overhead_bytes}, {"measured", d.measured}};
  j["request"] = {{"context_length", p.request.context_length}, {"concurrency", p.request.concurrency},
                  {"kv_dtype", std::string(dtype_name(p.request.kv_dtype))},
                  {"kv_block_size", p.request.kv_block_size}, {"max_batch_tokens", p.request.max_batch_tokens}};
  json by_type = json::array();
  for (const auto& t : p.weights.by_type) {
    by_type.push_back({{"type", std::string(dtype_name(t.type))}, {"n_tensors", t.n_tensors},
                       {"n_elements", t.n_elements}, {"bytes", t.n_bytes}});
  }
  j["weights"] = {{"bytes", p.weights.total_bytes}, {"n_params", p.weights.n_params},
                  {"n_matmul_params", p.weights.n_matmul_params},
                  {"bytes_read_per_token", p.weights.bytes_read_per_token}, {"quantized", p.weights.quantized},
                  {"by_type", by_type}};
  const auto& m = p.memory;
  j["memory"] = {{"weights_bytes", m.weights_bytes}, {"kv_bytes", m.kv_bytes},
                 {"kv_bytes_per_token", p.kv_bytes_per_token}, {"activation_bytes", m.activation_bytes},
                 {"overhead_bytes", m.overhead_bytes}, {"total_bytes", m.total_bytes},
                 {"usable_bytes", m.usable_bytes}, {"fits", m.fits}};
  if (p.request.draft) {
    const auto& dw = p.request.draft->weights;
    j["draft_model"] = {{"source", p.request.draft->source}, {"weights_bytes", dw.total_bytes},
                        {"n_params", dw.n_params}, {"kv_bytes_per_token", p.request.draft->kv_bytes_per_token}};
    j["memory"]["draft_weights_bytes"] = m.draft_weights_bytes;
    j["memory"]["draft_kv_bytes"] = m.draft_kv_bytes;
  }
  if (m.adapter_bytes > 0) {
    const plan::AdapterMemory& ad = p.request.adapters;
    j["memory"]["adapter_bytes"] = m.adapter_bytes;
    j["adapters"] = {{"n_loaded", ad.n_loaded},
                     {"loaded_bytes", ad.loaded_bytes},
                     {"n_runtime_slots", ad.n_runtime_slots},
                     {"runtime_slot_rank", ad.runtime_rank},
                     {"runtime_slot_bytes", ad.runtime_slot_bytes},
                     {"scratch_bytes", ad.scratch_bytes}};
  }
  const auto& t = p.trained_context;
  j["context"] = {{"requested", t.requested}, {"trained", t.trained}, {"rope_scaling", t.rope_scaling},
                  {"fits", t.fits}};
  if (!t.fits) j["context"]["advice"] = t.advice;
  j["limits"] = {{"max_context_at_concurrency", p.max_context_at_concurrency},
                 {"max_concurrency_at_context", p.max_concurrency_at_context}};
  if (p.kv_pool.ok()) {
    j["kv_pool"] = {{"n_blocks", p.kv_pool->n_blocks}, {"bytes", p.kv_pool->kv_bytes},
                    {"n_token_slots", p.kv_pool->n_token_slots},
                    {"n_window_blocks", p.kv_pool->n_window_blocks},
                    {"max_concurrency_at_context", p.kv_pool->max_concurrency_at_max_len}};
    // kv_pool.bytes counts both pools, as the budget does; these are the draft's part.
    if (p.request.draft) {
      j["kv_pool"]["draft_n_token_slots"] = p.kv_pool->n_token_slots;
      j["kv_pool"]["draft_bytes"] = draft_pool_bytes(p);
    }
  } else {
    j["kv_pool"] = {{"error", p.kv_pool.error().message}};
  }
  if (!p.to_fit.empty()) j["to_fit"] = p.to_fit;
  const auto& b = p.bounds;
  j["bounds"] = {{"decode_tps_per_stream", b.decode_tps_per_stream}, {"decode_tps_aggregate", b.decode_tps_aggregate},
                 {"decode_tps_single_stream", b.decode_tps_single}, {"decode_step_bytes", b.decode_step_bytes},
                 {"decode_compute_bound", b.decode_compute_bound}, {"prefill_seconds", b.prefill_seconds},
                 {"prefill_tps", b.prefill_tps}, {"prefill_compute_bound", b.prefill_compute_bound},
                 {"ops_per_second", b.ops_per_second}};
  return j;
}

void print_human(const plan::Plan& p, const std::string& source) {
  const auto& c = p.config;
  const auto& d = p.device;
  const auto& r = p.request;
  const auto& m = p.memory;
  std::printf("# kairo plan: %s on %s\n\n", c.name.empty() ? source.c_str() : c.name.c_str(), d.name.c_str());
  std::printf("model:   %s (%s): %s\n", source.c_str(), c.arch.c_str(), model::describe_shape(c).c_str());
  std::printf("device:  %s: %s, %.0f GB/s, %.1f TFLOP/s bf16, %.1f TOP/s int8%s, usable %.0f %%\n",
              d.description.c_str(), gib(d.memory_bytes).c_str(), d.bandwidth_gbs, d.bf16_tflops, d.int8_tops,
              d.unified_memory ? ", unified memory" : "", d.usable_fraction * 100);
  std::printf("request: context %d × concurrency %d, KV %s in blocks of %d, up to %d tokens per step\n\n",
              r.context_length, r.concurrency, std::string(dtype_name(r.kv_dtype)).c_str(), r.kv_block_size,
              r.max_batch_tokens);
  if (!p.trained_context.fits) std::printf("context: TOO LONG FOR THE MODEL. %s\n\n", p.trained_context.advice.c_str());

  std::printf("## memory\n\n| part | size | detail |\n| --- | ---: | --- |\n");
  std::string types;
  for (const auto& t : p.weights.by_type) {
    types += strprintf("%s%s %s (%d)", types.empty() ? "" : ", ", std::string(dtype_name(t.type)).c_str(),
                       human_bytes(t.n_bytes).c_str(), t.n_tensors);
  }
  std::printf("| weights | %s | %.3f B params: %s |\n", gib(m.weights_bytes).c_str(), p.weights.n_params / 1e9,
              types.c_str());
  std::printf("| KV cache | %s | %s per token × %d tokens × %d sequences |\n", gib(m.kv_bytes).c_str(),
              human_bytes(p.kv_bytes_per_token).c_str(), r.context_length, r.concurrency);
  if (r.draft) {
    std::printf("| draft model weights | %s | %s: %.3f B params |\n", gib(m.draft_weights_bytes).c_str(),
                r.draft->source.c_str(), r.draft->weights.n_params / 1e9);
    std::printf("| draft model KV cache | %s | %s per token × %d tokens × %d sequences (its own pool, as many token "
                "slots as the model's) |\n",
                gib(m.draft_kv_bytes).c_str(), human_bytes(r.draft->kv_bytes_per_token).c_str(), r.context_length,
                r.concurrency);
  }
  if (m.adapter_bytes > 0) {
    std::printf("| LoRA adapters | %s | %s |\n", gib(m.adapter_bytes).c_str(), r.adapters.describe().c_str());
  }
  std::printf("| activations | %s | %d tokens per step, %d logit rows |\n", gib(m.activation_bytes).c_str(),
              r.max_batch_tokens, std::min(r.max_batch_tokens, r.concurrency));
  std::printf("| runtime overhead | %s | |\n", gib(m.overhead_bytes).c_str());
  const char* verdict = !m.fits                      ? "DOES NOT FIT"
                        : !p.trained_context.fits    ? "fits in memory, but the context is beyond the model's (above)"
                                                     : "fits";
  std::printf("| **total** | **%s** | of %s usable: %s |\n\n", gib(m.total_bytes).c_str(), gib(m.usable_bytes).c_str(),
              verdict);
  if (!p.to_fit.empty()) std::printf("to fit: %s\n\n", p.to_fit.c_str());
  if (p.max_context_at_concurrency > 0) {
    std::printf("largest context at concurrency %d: %d%s\n", r.concurrency, p.max_context_at_concurrency,
                p.max_context_at_concurrency == c.context_length ? " (the model's limit)" : "");
  } else {
    std::printf("largest context at concurrency %d: none fits\n", r.concurrency);
  }
  std::printf("largest concurrency at context %d: %d\n", r.context_length, p.max_concurrency_at_context);
  // The same sizing `kairo serve` runs at startup (its "KV cache: N tokens" line prints this N).
  std::string serve = strprintf("kairo serve --max-model-len %d --max-num-seqs %d --kv-dtype %s", r.context_length,
                                r.concurrency, lower(std::string(dtype_name(r.kv_dtype))).c_str());
  if (r.draft) serve += " --draft-model " + r.draft->source;
  if (p.kv_pool.ok()) {
    const uint64_t draft_kv = draft_pool_bytes(p);
    std::printf("%s on this budget: KV cache of %lld tokens (%lld blocks of %d, %s), %lld sequences of %d at once\n",
                serve.c_str(), static_cast<long long>(p.kv_pool->n_token_slots),
                static_cast<long long>(p.kv_pool->n_blocks), r.kv_block_size,
                gib(p.kv_pool->kv_bytes - draft_kv).c_str(),
                static_cast<long long>(p.kv_pool->max_concurrency_at_max_len), r.context_length);
    if (r.draft) {
      std::printf("  and the draft model's KV of %lld tokens (%s)\n", static_cast<long long>(p.kv_pool->n_token_slots),
                  gib(draft_kv).c_str());
    }
    if (p.kv_pool->n_window_blocks > 0) {
      std::printf("  of which the %d sliding-window layers (window %d) hold %lld blocks (%s) whatever the context: "
                  "what falls behind the window is freed\n",
                  p.config.n_windowed_layers(), p.config.sliding_window,
                  static_cast<long long>(p.kv_pool->n_window_blocks),
                  gib(static_cast<uint64_t>(p.kv_pool->n_window_blocks) * p.kv_pool->window_bytes_per_block).c_str());
    }
  } else if (!p.trained_context.fits) {
    std::printf("%s: refuses to start (%s)\n", serve.c_str(), p.kv_pool.error().message.c_str());
  } else {
    std::printf("%s on this budget: refuses to start, not even one sequence fits\n", serve.c_str());
  }
  const auto& b = p.bounds;
  std::printf("\n## roofline bounds\n\n");
  std::printf("decode: ≤ %.1f tokens/s per stream, %.1f tokens/s aggregate at concurrency %d and context %d "
              "(%s-bound: %s read per step)\n",
              b.decode_tps_per_stream, b.decode_tps_aggregate, r.concurrency, r.context_length,
              b.decode_compute_bound ? "compute" : "bandwidth", human_bytes(static_cast<uint64_t>(b.decode_step_bytes)).c_str());
  std::printf("decode, one stream at context %d: ≤ %.1f tokens/s\n", r.context_length, b.decode_tps_single);
  std::printf("prefill of %d tokens: ≥ %.3f s, ≤ %.0f tokens/s (%s-bound at %.2f %s)\n", r.context_length,
              b.prefill_seconds, b.prefill_tps, b.prefill_compute_bound ? "compute" : "bandwidth",
              b.ops_per_second / 1e12, p.weights.quantized ? "TOP/s int8" : "TFLOP/s bf16");
}

int list_catalog() {
  std::printf("devices:\n  %-10s this machine's CPU, measured when used\n", "cpu");
  for (const auto& d : plan::device_catalog()) {
    std::printf("  %-10s %s: %.0f GB/s, %.0f TFLOP/s bf16, %.0f TOP/s int8\n", d.name.c_str(), d.description.c_str(),
                d.bandwidth_gbs, d.bf16_tflops, d.int8_tops);
  }
  std::printf("presets:\n");
  for (const auto& p : plan::model_presets()) std::printf("  %-15s %s\n", p.name.c_str(), p.description.c_str());
  return 0;
}

int run_plan(const PlanArgs& a) {
  if (a.list) return list_catalog();
  if (a.model.empty() == a.preset.empty()) {
    std::fprintf(stderr, "error: give exactly one of --model FILE.gguf or --preset NAME (see --list)\n");
    return 1;
  }
  auto model = resolve_model(a);
  if (!model.ok()) {
    std::fprintf(stderr, "error: %s\n", model.error().message.c_str());
    return 1;
  }
  auto kv = plan::parse_kv_dtype(a.kv_dtype);
  if (!kv.ok()) {
    std::fprintf(stderr, "error: %s\n", kv.error().message.c_str());
    return 1;
  }
  auto device = resolve_device(a);
  if (!device.ok()) {
    std::fprintf(stderr, "error: %s\n", device.error().message.c_str());
    return 1;
  }
  plan::PlanRequest req;
  req.context_length = a.context;
  req.concurrency = a.concurrency;
  req.kv_dtype = *kv;
  req.max_batch_tokens = a.max_batch_tokens;
  if (!a.draft_model.empty()) {
    auto draft = resolve_draft(a, model->config, a.context, *kv);
    if (!draft.ok()) {
      std::fprintf(stderr, "error: --draft-model %s: %s\n", a.draft_model.c_str(), draft.error().message.c_str());
      return 1;
    }
    req.draft = std::move(draft).value();
  }
  auto adapters = resolve_adapters(a, model->config);
  if (!adapters.ok()) {
    std::fprintf(stderr, "error: %s\n", adapters.error().message.c_str());
    return 1;
  }
  req.adapters = *adapters;
  auto p = plan::make_plan(model->config, model->tensors, *device, req);
  if (!p.ok()) {
    std::fprintf(stderr, "error: %s\n", p.error().message.c_str());
    return 1;
  }
  if (a.json) {
    std::printf("%s\n", to_json(*p, model->source).dump(2).c_str());
  } else {
    print_human(*p, model->source);
  }
  return 0;
}

void setup_plan(CLI::App& app) {
  auto a = std::make_shared<PlanArgs>();
  CLI::App* cmd = app.add_subcommand("plan", "Memory and speed bounds of a model on a device, before running it");
  cmd->add_option("--model", a->model, "GGUF file (only its header is read)");
  cmd->add_option("--preset", a->preset, "Model shape preset instead of a file (see --list)");
  cmd->add_option("--device", a->device, "Device from the catalog (see --list), cpu, vulkan[:N] or cuda[:N] (measured here), or custom");
  cmd->add_option("--context", a->context, "Tokens per sequence (default: the model's context length)");
  cmd->add_option("--concurrency", a->concurrency, "Sequences served at once")->capture_default_str();
  cmd->add_option("--kv-dtype", a->kv_dtype, "KV cache type: f16, bf16 or q8_0")->capture_default_str();
  cmd->add_option("--weights-dtype", a->weights_dtype,
                  "Weight type for a preset (default bf16), or to re-type a file's matrices (e.g. q4_k)");
  cmd->add_option("--max-batch-tokens", a->max_batch_tokens, "Tokens per forward step")->capture_default_str();
  cmd->add_option("--draft-model", a->draft_model,
                  "A speculative draft model (GGUF, header only): its weights and its KV pool (as many token slots as "
                  "the model's, as `kairo serve --draft-model` keeps) come out of the same memory");
  cmd->add_option("--lora", a->loras,
                  "A LoRA adapter served from startup (GGUF, header only; repeatable): its device bytes come out of "
                  "the same memory");
  cmd->add_option("--max-loras", a->max_loras,
                  "Adapters resident at once, --lora ones included; the rest are reserved as runtime slots of "
                  "--max-lora-rank, as `kairo serve --allow-runtime-lora` reserves them (0 = no runtime slots)")
      ->check(CLI::Range(0, 4096));
  cmd->add_option("--max-lora-rank", a->max_lora_rank, "Rank of a runtime slot (F16 on q, k, v, o, gate, up, down)")
      ->capture_default_str()->check(CLI::Range(1, 1 << 16));
  cmd->add_option("--mem-gb", a->mem_gb, "Device memory in GiB (custom device, or override)");
  cmd->add_option("--bandwidth-gbs", a->bandwidth_gbs, "Memory bandwidth in GB/s (custom device, or override)");
  cmd->add_option("--tflops", a->tflops, "Dense bf16 TFLOP/s (custom device, or override)");
  cmd->add_option("--tops", a->tops, "Dense int8 TOP/s (custom device, or override; default: --tflops)");
  cmd->add_option("--usable-fraction", a->usable_fraction, "Fraction of memory one process may use");
  cmd->add_flag("--json", a->json, "Print JSON");
  cmd->add_flag("--list", a->list, "List the device catalog and model presets");
  cmd->callback([a] { set_exit_code(run_plan(*a)); });
}

}  // namespace

KAIRO_REGISTER_COMMAND(plan, setup_plan);

}  // namespace kairo::tools
