#pragma once
// `kairo serve`'s flags and the pieces both of its paths use: one model attached at startup (serve.cpp), or several
// loaded on demand (serve_models.cpp).
#include <memory>
#include <string>
#include <vector>

#include "core/result.h"
#include "engine/engine.h"
#include "gguf/gguf_file.h"
#include "lora_options.h"
#include "model/model.h"
#include "plan/adapter_memory.h"
#include "plan/kv_sizing.h"
#include "server/server_config.h"
#include "speculative_options.h"
#include "tokenizer/tokenizer.h"

namespace kairo::tools {

struct ServeArgs {
  std::string model = "models/aidreams260K.gguf";  // the one model (run_serve sets it from model_args)
  std::vector<std::string> model_args;             // --model [NAME=]PATH, repeatable
  std::string models_dir;                          // --models-dir: every .gguf there, by its file's stem
  int max_loaded_models = 0;                       // 0 = as many as the memory budget holds
  double model_switch_wait_s = 60;                 // a load waits this long for a busy model to become idle
  std::vector<std::string> served_names;           // first = the id in /v1/models; the rest are aliases
  std::vector<std::string> loras;                  // --lora NAME=PATH[:SCALE]
  int max_lora_rank = model::lora::kDefaultMaxRank;
  int max_loras = 16;  // adapters resident at once: --lora ones and runtime loads together
  std::string api_key_file;
  std::string reasoning_format = "auto";  // auto | deepseek | none (ServerConfig::reasoning_format)
  std::string chat_template_file;         // a Jinja chat template used instead of the model's
  server::ServerConfig server;
  // Engine.
  int threads = 0;
  int max_num_seqs = 64;
  int max_num_batched_tokens = 512;
  int fair_min_chunk = 16;
  int fair_solo_tokens = -1;  // -1: a quarter of max_num_batched_tokens with --api-keys-file, off without
  int block_size = 16;
  int max_model_len = 0;  // 0 = the model's context length
  std::string kv_dtype = "f16";
  double kv_cache_mib = 0;   // a budget for the KV cache alone; 0 = size it from the memory budget
  double mem_budget_gb = 0;  // weights + KV + activations + overhead; 0 = the `cpu` device's usable memory
  int max_waiting = 1024;
  bool no_prefix_caching = false;
  bool exact_numerics = false;
  SpeculativeArgs speculative;
  std::string device = "cpu";
};

// The engine that serves requests. Everything engine-specific lives here, so the server sees only EngineClient.
struct EngineHolder {
  std::unique_ptr<engine::Engine> engine;
};

// The KV pool, sized by the planner's code with the planner's inputs (`kairo plan --device cpu`): the weights from
// the GGUF header, the activations of one step, the device's overhead, and a budget of 90 % of MemAvailable (or
// --mem-budget-gb, or --kv-cache-memory for the KV cache alone). A configuration that cannot fit is refused with
// the planner's message, which names the knob to change and the value that fits.
struct KvPlan {
  plan::KvPoolRequest request;
  plan::KvSizing sizing;
  std::string budget_source;
  plan::AdapterMemory adapters;
};

// Plans the KV pool from the model's header, config and the device it goes to (before or after its load: several
// models are planned before any is loaded). already_mapped: bytes of it this process has mapped (system_memory.h).
Result<KvPlan> plan_kv_pool(const model::ModelConfig& c, const gguf::File& file, const kernels::Device& dev,
                            const ServeArgs& a, const model::Model* draft, uint64_t already_mapped);
Result<EngineHolder> make_engine(model::Model& model, const tokenizer::Tokenizer& tok, const ServeArgs& a,
                                 const KvPlan& kv, model::Model* draft);
// Whether the model serves /v1/embeddings, from its header.
void describe_embeddings(const std::string& path, server::ModelInfo& info);

// A served model's name and file, from --model [NAME=]PATH and --models-dir.
struct ModelSource {
  std::string name;
  std::string path;
};
Result<std::vector<ModelSource>> model_sources(const ServeArgs& a);
// The several-model server (serve_models.cpp); returns the exit code.
int run_serve_models(const ServeArgs& a, const std::vector<ModelSource>& sources);

}  // namespace kairo::tools
