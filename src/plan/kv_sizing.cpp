#include "plan/kv_sizing.h"

#include <algorithm>
#include <cmath>

#include "core/format.h"
#include "kv/kv_cache_manager.h"

namespace kairo::plan {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// One decimal in the largest unit that keeps the number >= 1 ("12.0 GiB", "2.2 MiB"): precise enough to act on.
std::string gib(uint64_t n_bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(n_bytes);
  int u = 0;
  while (v >= 1024.0 && u < 4) { v /= 1024.0; ++u; }
  return u == 0 ? strprintf("%llu B", static_cast<unsigned long long>(n_bytes)) : strprintf("%.1f %s", v, units[u]);
}

// What is left for KV once weights, activations and overhead are placed (negative when they do not fit).
int64_t kv_room(const KvPoolRequest& r) {
  return static_cast<int64_t>(r.budget_bytes) - static_cast<int64_t>(r.weights_bytes) -
         static_cast<int64_t>(r.activation_bytes) - static_cast<int64_t>(r.overhead_bytes) -
         static_cast<int64_t>(r.adapter_bytes) - static_cast<int64_t>(r.window_kv_bytes);
}

std::string after_what(const KvPoolRequest& r) {
  std::string s = gib(r.weights_bytes) + " of weights";
  if (r.adapter_bytes > 0) s += ", " + gib(r.adapter_bytes) + " of LoRA adapters";
  if (r.activation_bytes + r.overhead_bytes > 0) {
    s += ", " + gib(r.activation_bytes) + " of activations and " + gib(r.overhead_bytes) + " of runtime overhead";
  }
  if (r.window_kv_bytes > 0) s += ", " + gib(r.window_kv_bytes) + " of sliding-window KV";
  return s + " in a budget of " + gib(r.budget_bytes);
}

Error refusal(const model::ModelConfig& config, const KvPoolRequest& r, uint64_t bytes_per_block,
              int64_t blocks_per_seq) {
  const int64_t room = kv_room(r);
  const uint64_t need = static_cast<uint64_t>(r.min_concurrency) * static_cast<uint64_t>(blocks_per_seq) *
                        bytes_per_block;
  const uint64_t fixed =
      r.weights_bytes + r.activation_bytes + r.overhead_bytes + r.adapter_bytes + r.window_kv_bytes;
  std::string msg;
  if (room <= 0) {
    const std::string adapters =
        r.adapter_bytes > 0 ? strprintf(", LoRA adapters (%s)", gib(r.adapter_bytes).c_str()) : std::string();
    msg = strprintf("the weights (%s), activations (%s)%s and runtime overhead (%s) need %s, more than the budget of "
                    "%s, leaving nothing for the KV cache",
                    gib(r.weights_bytes).c_str(), gib(r.activation_bytes).c_str(), adapters.c_str(),
                    gib(r.overhead_bytes).c_str(), gib(fixed).c_str(), gib(r.budget_bytes).c_str());
  } else if (fixed == r.window_kv_bytes) {  // a budget for the KV cache alone (`kairo serve --kv-cache-memory`)
    const std::string window = r.window_kv_bytes == 0
                                   ? std::string()
                                   : " (and " + gib(r.window_kv_bytes) + " of sliding-window KV beside it)";
    msg = strprintf("context %d × concurrency %d needs %s of KV cache%s but the KV cache budget is %s", r.max_model_len,
                    r.min_concurrency, gib(need).c_str(), window.c_str(), gib(r.budget_bytes).c_str());
  } else {
    msg = strprintf("context %d × concurrency %d needs %s of KV cache but only %s is left after %s",
                    r.max_model_len, r.min_concurrency, gib(need).c_str(), gib(static_cast<uint64_t>(room)).c_str(),
                    after_what(r).c_str());
  }
  std::vector<std::string> fixes;
  if (room > 0) {
    const int64_t blocks_total = room / static_cast<int64_t>(bytes_per_block);
    const int64_t len_blocks = blocks_total / r.min_concurrency;
    if (len_blocks >= 1) {
      fixes.push_back(strprintf("lower %s to %lld", r.knobs.max_model_len.c_str(),
                                static_cast<long long>(std::min<int64_t>(len_blocks * r.block_size,
                                                                         r.max_model_len))));
    }
    const int64_t conc = blocks_total / blocks_per_seq;
    if (r.min_concurrency > 1 && conc >= 1) {
      fixes.push_back(strprintf("lower %s to %lld", r.knobs.concurrency.c_str(), static_cast<long long>(conc)));
    }
    if (r.kv_dtype != DType::Q8_0 && config.head_dim % 32 == 0) {
      const auto q8 = kv_bytes_per_token(config, DType::Q8_0);
      const uint64_t q8_full = q8.ok() ? q8.value() - window_kv_bytes_per_token(config, q8.value()) : 0;
      const uint64_t need_q8 = q8.ok() ? static_cast<uint64_t>(r.min_concurrency) * blocks_per_seq * r.block_size *
                                             q8_full
                                       : 0;
      if (q8.ok() && need_q8 <= static_cast<uint64_t>(room)) {
        fixes.push_back(strprintf("use %s q8_0 (%s of KV cache)", r.knobs.kv_dtype.c_str(), gib(need_q8).c_str()));
      }
    }
  }
  if (!r.adapter_fix.empty()) fixes.push_back(r.adapter_fix);
  const double scale = r.knobs.budget_scale > 0 ? r.knobs.budget_scale : 1.0;
  fixes.push_back(strprintf("raise %s to at least %s", r.knobs.budget.c_str(),
                            gib(static_cast<uint64_t>(std::ceil(static_cast<double>(fixed + need) / scale))).c_str()));
  // A smaller quantization helps only if weights that leave room for this KV cache are possible at all.
  const int64_t weights_room = static_cast<int64_t>(r.budget_bytes) - static_cast<int64_t>(r.activation_bytes) -
                               static_cast<int64_t>(r.overhead_bytes) - static_cast<int64_t>(r.adapter_bytes) -
                               static_cast<int64_t>(need);
  if (room <= 0 && weights_room > 0) {
    fixes.push_back(strprintf("quantize the model so its weights take at most %s (now %s; q8_0 is ~8.5 bits a "
                              "weight, q4_k ~4.5)",
                              gib(static_cast<uint64_t>(weights_room)).c_str(), gib(r.weights_bytes).c_str()));
  }
  msg += "; ";
  for (size_t i = 0; i < fixes.size(); ++i) msg += (i == 0 ? "" : ", or ") + fixes[i];
  return Error{msg};
}

}  // namespace

Result<uint64_t> kv_bytes_per_token(const model::ModelConfig& c, DType kv_dtype) {
  const DTypeInfo& info = dtype_info(kv_dtype);
  if (c.head_dim % info.block_size != 0) {
    return Error{strprintf("--kv-dtype %s stores blocks of %lld values but this model's head size is %d; use f16 or "
                           "bf16",
                           std::string(info.name).c_str(), static_cast<long long>(info.block_size), c.head_dim)};
  }
  return 2ull * static_cast<uint64_t>(c.n_layers) * static_cast<uint64_t>(c.n_kv_heads) *
         row_bytes(kv_dtype, c.head_dim);
}

uint64_t window_kv_bytes_per_token(const model::ModelConfig& c, uint64_t kv_bytes_per_token) {
  if (c.n_layers <= 0) return 0;
  return kv_bytes_per_token / static_cast<uint64_t>(c.n_layers) * static_cast<uint64_t>(c.n_windowed_layers());
}

Result<KvSizing> size_kv_pool(const model::ModelConfig& config, const KvPoolRequest& request) {
  if (request.block_size <= 0 || request.max_model_len <= 0 || request.min_concurrency <= 0) {
    return Error{strprintf("KV pool request needs a positive block size (%d), max model length (%d) and concurrency "
                           "(%d)",
                           request.block_size, request.max_model_len, request.min_concurrency)};
  }
  KAIRO_TRY_ASSIGN(const uint64_t per_token, kv_bytes_per_token(config, request.kv_dtype));
  KvSizing s;
  KvPoolRequest r = request;
  // The windowed layers' pool is the same size whatever the context: placed first, like the weights.
  const uint64_t window_per_token = window_kv_bytes_per_token(config, per_token);
  int64_t window_blocks = 0;
  if (window_per_token > 0) {
    s.window_bytes_per_block = window_per_token * static_cast<uint64_t>(r.block_size);
    window_blocks = kv::window_group_blocks(config.sliding_window, r.block_size, std::max(1, r.max_num_seqs),
                                            std::max(1, r.max_batch_tokens));
    r.window_kv_bytes = static_cast<uint64_t>(window_blocks) * s.window_bytes_per_block;
  }
  s.bytes_per_block = (per_token - window_per_token + r.extra_bytes_per_token) * static_cast<uint64_t>(r.block_size);
  s.blocks_per_sequence = ceil_div(r.max_model_len, r.block_size);
  const int64_t room = kv_room(r);
  s.n_blocks = room > 0 ? room / static_cast<int64_t>(s.bytes_per_block) : 0;
  if (s.n_blocks < s.blocks_per_sequence * r.min_concurrency) {
    return refusal(config, r, s.bytes_per_block, s.blocks_per_sequence);
  }
  if (r.max_sequences > 0) s.n_blocks = std::min<int64_t>(s.n_blocks, s.blocks_per_sequence * r.max_sequences);
  s.n_window_blocks = std::min(window_blocks, s.n_blocks);  // what the engine allocates for these knobs
  s.kv_bytes = static_cast<uint64_t>(s.n_blocks) * s.bytes_per_block +
               static_cast<uint64_t>(s.n_window_blocks) * s.window_bytes_per_block;
  s.n_token_slots = s.n_blocks * r.block_size;
  s.max_concurrency_at_max_len = s.n_blocks / s.blocks_per_sequence;
  return s;
}

}  // namespace kairo::plan
