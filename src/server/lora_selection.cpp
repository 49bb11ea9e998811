#include "server/lora_selection.h"

#include <algorithm>

#include "core/format.h"
#include "server/endpoints.h"

namespace kairo::server {
namespace {

// llama-server's id of an adapter: its place among the adapters, from 0.
int llama_id(const ServedAdapter& a) { return a.id - 1; }

std::string adapter_text(const ServedAdapter& a) {
  return strprintf("%d (%s)", llama_id(a), quote_for_error(a.name, 64).c_str());
}

std::string loaded_adapters_text(const LoraRegistry& loras) {
  std::vector<ServedAdapter> all = loras.list();
  if (all.empty()) return "this server has no LoRA adapters loaded";
  std::sort(all.begin(), all.end(), [](const ServedAdapter& x, const ServedAdapter& y) { return x.id < y.id; });
  std::string out = "the adapters' ids are ";
  for (size_t i = 0; i < all.size(); ++i) out += (i ? ", " : "") + adapter_text(all[i]);
  return out;
}

AdapterChoice choice_of(const ServedAdapter& a, std::optional<float> scale) {
  if (scale && *scale == 0.0f) return {};  // off: the base model exactly
  return AdapterChoice{a.name, a.id, a.generation, scale};
}

}  // namespace

bool is_base_model_name(const ModelInfo& model, const std::string& name) {
  return name.empty() || name == model.id ||
         std::find(model.aliases.begin(), model.aliases.end(), name) != model.aliases.end();
}

ApiError unknown_model_error(const ModelInfo& model, const std::string& name) {
  ApiError e = api_error(404, strprintf("The model %s does not exist; this server serves %s",
                                        quote_for_error(name, 64).c_str(), quote_for_error(model.id).c_str()),
                         "model_not_found");
  e.type = "invalid_request_error";
  e.param = "model";
  return e;
}

ApiResult<AdapterChoice> choose_adapter(const ModelInfo& model, const LoraRegistry& loras,
                                        const GenerationParams& params) {
  std::optional<ServedAdapter> by_model;
  if (!is_base_model_name(model, params.model)) {
    by_model = loras.find(params.model);
    if (!by_model) return unknown_model_error(model, params.model);
  }
  if (!params.lora) return by_model ? choice_of(*by_model, std::nullopt) : AdapterChoice{};

  // Each entry's adapter; the one with a scale other than 0, if any; the entry for `model`'s adapter, if any.
  const std::vector<LoraScale>& entries = *params.lora;
  std::optional<std::pair<ServedAdapter, float>> on, for_model;
  for (size_t i = 0; i < entries.size(); ++i) {
    std::optional<ServedAdapter> a = loras.find_id(entries[i].id + 1);
    if (!a) {
      return invalid_param(strprintf("lora[%zu].id", i),
                           strprintf("'lora[%zu].id' is %d, which is no loaded LoRA adapter; %s", i, entries[i].id,
                                     loaded_adapters_text(loras).c_str()));
    }
    if (by_model && a->id == by_model->id) for_model = {{*a, entries[i].scale}};
    if (entries[i].scale == 0.0f) continue;
    if (on) {
      return invalid_param("lora", strprintf("'lora' turns on two adapters, %s and %s; kairo applies one adapter per "
                                             "request: give the others scale 0 (or leave them out)",
                                             adapter_text(on->first).c_str(), adapter_text(*a).c_str()));
    }
    on = {{*a, entries[i].scale}};
  }
  if (!by_model) return on ? choice_of(on->first, on->second) : AdapterChoice{};
  if (!for_model) {
    return invalid_param("lora", strprintf("'model' is the LoRA adapter %s, which 'lora' does not list; list it "
                                           "(\"lora\": [{\"id\": %d, \"scale\": 1}]), or set 'model' to the base "
                                           "model %s",
                                           quote_for_error(by_model->name, 64).c_str(), llama_id(*by_model),
                                           quote_for_error(model.id).c_str()));
  }
  if (on && on->first.id != by_model->id) {
    return invalid_param("lora", strprintf("'model' is the LoRA adapter %s but 'lora' turns on %s; name the same "
                                           "adapter in both, or set 'model' to the base model %s",
                                           quote_for_error(by_model->name, 64).c_str(), adapter_text(on->first).c_str(),
                                           quote_for_error(model.id).c_str()));
  }
  return choice_of(for_model->first, for_model->second);
}

ApiResult<AdapterChoice> choose_permitted_adapter(const ServerContext& ctx, const ServedModel& served,
                                                  const Caller& caller, const GenerationParams& params) {
  auto choice = choose_adapter(served.info, served.loras, params);
  if (!choice.ok()) return choice.error();
  const std::string& runs = !choice->name.empty()                           ? choice->name
                            : is_base_model_name(served.info, params.model) ? params.model
                                                                            : served.info.id;
  if (auto e = check_tenant_model(ctx, served, caller, runs)) return *e;
  return choice;
}

}  // namespace kairo::server
