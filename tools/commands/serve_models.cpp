// `kairo serve --model A --model B ...` or `--models-dir DIR`: several models behind one server, routed by the
// request's `model`. Every model is planned from its GGUF header before any loads (weights, KV cache for
// --max-num-seqs sequences of --max-model-len, activations, overhead: its footprint), those that fit the memory
// budget and --max-loaded-models are loaded at startup in the order given, the rest when a request names one; the
// server unloads the least-recently-used idle model to make room (server/model_registry.h). A model whose footprint
// alone exceeds the budget is refused at startup, with the planner's numbers.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>

#include "core/format.h"
#include "device_option.h"
#include "devices/open_device.h"
#include "model/config.h"
#include "serve_args.h"
#include "server/chat_template_loader.h"
#include "server/server.h"
#include "terminal/notes.h"

namespace kairo::tools {

namespace {

// Everything a loaded model is. Members go in reverse order: the engine first (it runs on the weights and the
// tokenizer), the weights last.
struct LoadedParts {
  std::unique_ptr<model::Model> model;
  std::unique_ptr<tokenizer::Tokenizer> tokenizer;
  EngineHolder engine;
};

Result<server::LoadedModel> load_served_model(const ModelSource& source, const ServeArgs& a, const KvPlan& kv) {
  const auto start = std::chrono::steady_clock::now();
  auto parts = std::make_shared<LoadedParts>();
  KAIRO_TRY_ASSIGN(parts->model, load_model_on(source.path, a.device));
  KAIRO_TRY_ASSIGN(parts->tokenizer, tokenizer::Tokenizer::from_gguf(parts->model->file()));
  KAIRO_TRY_ASSIGN(server::LoadedChatTemplate chat_template,
                   server::load_chat_template(parts->model->file(), *parts->tokenizer, ""));
  KAIRO_TRY_ASSIGN(parts->engine, make_engine(*parts->model, *parts->tokenizer, a, kv, nullptr));
  server::LoadedModel loaded;
  loaded.engine = parts->engine.engine.get();
  loaded.tokenizer = parts->tokenizer.get();
  loaded.chat_template = std::move(chat_template.render);
  loaded.template_traits = chat_template.traits;
  loaded.owner = parts;
  note("kairo serve: loaded %s in %.2f s (%s)\n", source.name.c_str(),
       std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
       parts->engine.engine->memory_summary().c_str());
  return loaded;
}

// What one flag or another gives for one model only, refused with several.
Status check_single_model_flags(const ServeArgs& a) {
  auto refuse = [](const char* flag, const char* instead) {
    return Status{
        Error{strprintf("%s applies to one model, and this server serves several (--model given more than "
                        "once, or --models-dir); %s",
                        flag, instead)}};
  };
  if (!a.served_names.empty()) return refuse("--served-model-name", "name each model with --model NAME=FILE");
  if (!a.loras.empty()) return refuse("--lora", "serve the adapter's base model alone to use adapters");
  if (a.server.allow_runtime_lora) return refuse("--allow-runtime-lora", "serve one model to load adapters");
  if (!a.speculative.draft_model.empty()) return refuse("--draft-model", "serve one model to use a draft model");
  if (!a.chat_template_file.empty()) return refuse("--chat-template-file", "serve one model to replace its template");
  if (a.kv_cache_mib > 0) return refuse("--kv-cache-memory", "size the models' KV caches with --mem-budget-gb");
  return Status::success();
}

}  // namespace

Result<std::vector<ModelSource>> model_sources(const ServeArgs& a) {
  std::vector<ModelSource> out;
  for (const std::string& arg : a.model_args) {
    ModelSource s{"", arg};
    const size_t eq = arg.find('=');
    // NAME=FILE, unless the whole argument is a file (a path may hold an '=').
    if (eq != std::string::npos && eq > 0 && arg.find('/') > eq && !std::filesystem::exists(arg)) {
      s.name = arg.substr(0, eq);
      s.path = arg.substr(eq + 1);
    }
    if (s.name.empty()) s.name = std::filesystem::path(s.path).stem().string();
    out.push_back(std::move(s));
  }
  if (!a.models_dir.empty()) {
    std::vector<std::filesystem::path> files;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(a.models_dir, ec)) {
      if (entry.is_regular_file() && entry.path().extension() == ".gguf") files.push_back(entry.path());
    }
    if (ec) return Error{"--models-dir " + a.models_dir + ": " + ec.message()};
    std::sort(files.begin(), files.end());
    if (files.empty() && out.empty()) {
      return Error{"--models-dir " + a.models_dir + " holds no .gguf file; put models there or give --model FILE"};
    }
    for (const auto& f : files) out.push_back({f.stem().string(), f.string()});
  }
  if (out.empty()) out.push_back({std::filesystem::path(a.model).stem().string(), a.model});
  std::set<std::string> names;
  for (const ModelSource& s : out) {
    if (!names.insert(s.name).second) {
      return Error{"two models are named " + s.name + "; name one with --model NAME=FILE"};
    }
  }
  return out;
}

int run_serve_models(const ServeArgs& args, const std::vector<ModelSource>& sources) {
  auto fail = [](const std::string& msg) {
    std::fprintf(stderr, "error: %s\n", msg.c_str());
    return 1;
  };
  if (auto s = check_single_model_flags(args); !s.ok()) return fail(s.error().message);
  auto a = std::make_shared<const ServeArgs>(args);
  auto device = devices::open_device(a->device);  // for the plans: its memory and largest buffer
  if (!device.ok()) return fail(device.error().message);

  std::vector<server::ModelEntry> entries;
  std::vector<uint64_t> footprints;
  uint64_t budget = 0;
  std::string budget_source;
  const int64_t created =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  for (const ModelSource& source : sources) {
    auto header = gguf::File::open(source.path);
    if (!header.ok()) return fail("model " + source.name + ": " + header.error().message);
    auto config = model::read_config(*header);
    if (!config.ok()) return fail("model " + source.name + " (" + source.path + "): " + config.error().message);
    ServeArgs own = *a;  // --max-model-len beyond a model's context: its own context
    if (own.max_model_len > config->context_length) own.max_model_len = config->context_length;
    auto kv = plan_kv_pool(*config, *header, **device, own, nullptr, 0);
    if (!kv.ok()) return fail("model " + source.name + " (" + source.path + "): " + kv.error().message);
    const plan::KvPoolRequest& r = kv->request;
    const uint64_t footprint = r.weights_bytes + r.activation_bytes + r.overhead_bytes + kv->sizing.kv_bytes;
    budget = r.budget_bytes;
    budget_source = kv->budget_source;
    note(
        "kairo serve: model %s = %s: needs %s (weights %s, KV cache %s for %lld tokens, activations %s, overhead "
        "%s)\n",
        source.name.c_str(), source.path.c_str(), human_bytes(footprint).c_str(), human_bytes(r.weights_bytes).c_str(),
        human_bytes(kv->sizing.kv_bytes).c_str(), static_cast<long long>(kv->sizing.n_token_slots),
        human_bytes(r.activation_bytes).c_str(), human_bytes(r.overhead_bytes).c_str());
    server::ModelEntry e;
    e.info.id = source.name;
    e.info.created = created;
    e.info.context_length = r.max_model_len;
    describe_embeddings(source.path, e.info);
    e.footprint_bytes = footprint;
    e.loader = [source, plan = std::make_shared<const KvPlan>(std::move(*kv)),
                own = std::make_shared<ServeArgs>(own)] { return load_served_model(source, *own, *plan); };
    footprints.push_back(footprint);
    entries.push_back(std::move(e));
  }
  server::ModelLimits limits;
  limits.max_loaded = a->max_loaded_models;
  limits.budget_bytes = budget;
  limits.wait_s = a->model_switch_wait_s;
  note(
      "kairo serve: %zu models; memory budget %s (%s)%s; models load when a request names them and the least "
      "recently used idle one is unloaded when they do not fit\n",
      sources.size(), human_bytes(budget).c_str(), budget_source.c_str(),
      a->max_loaded_models > 0 ? strprintf(", at most %d loaded at once", a->max_loaded_models).c_str() : "");

  const server::ServerConfig& config = a->server;
  server::Server srv(config, std::move(entries), limits);
  if (auto s = srv.start(); !s.ok()) return fail(s.error().message);
  note("kairo serve: listening on %s://%s:%d\n", config.ssl_certfile.empty() ? "http" : "https", config.host.c_str(),
       srv.port());
  // Startup loads: in the order given, while they fit; the rest wait for a request.
  uint64_t used = 0;
  int n_loaded = 0;
  for (size_t i = 0; i < sources.size(); ++i) {
    const bool fits = (limits.max_loaded == 0 || n_loaded < limits.max_loaded) && used + footprints[i] <= budget;
    if (!fits) continue;
    if (auto s = srv.load(sources[i].name); !s.ok()) return fail(s.error().message);
    used += footprints[i];
    ++n_loaded;
  }
  srv.mark_ready();
  const bool drained = srv.run_until_signal([&] {
    note("kairo serve: ready: %d of %zu models loaded (%s of %s)\n", n_loaded, sources.size(),
         human_bytes(used).c_str(), human_bytes(budget).c_str());
  });
  note("kairo serve: stopped (%s)\n",
       drained ? "all requests finished" : "requests still running at --shutdown-timeout were cancelled");
  return 0;
}

}  // namespace kairo::tools
