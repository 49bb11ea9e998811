#include "plan/memory_plan.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/format.h"
#include "kv/kv_cache_manager.h"

namespace kairo::plan {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

bool is_block_quantized(DType t) { return dtype_info(t).block_size > 1; }

struct Sizer {
  const model::ModelConfig& config;
  const PlanRequest& request;
  uint64_t weights_bytes;
  uint64_t kv_per_token;
  uint64_t overhead;
  uint64_t usable;
  uint64_t draft_weights = 0;
  uint64_t draft_kv_per_token = 0;  // in every block of the full-context pool, window layers or not

  // Sliding-window layers hold at most their window (and a step's chunk) per sequence, whatever the context.
  uint64_t kv_bytes(int64_t context, int64_t concurrency) const {
    const int64_t bs = request.kv_block_size;
    const int64_t blocks = concurrency * ceil_div(context, bs);
    const uint64_t window_per_token = window_kv_bytes_per_token(config, kv_per_token);
    const int64_t window_blocks =
        window_per_token == 0 ? 0
                              : std::min(blocks, kv::window_group_blocks(config.sliding_window, static_cast<int>(bs),
                                                                         static_cast<int>(concurrency),
                                                                         request.max_batch_tokens));
    return static_cast<uint64_t>(blocks * bs) * (kv_per_token - window_per_token) +
           static_cast<uint64_t>(window_blocks * bs) * window_per_token;
  }
  uint64_t draft_kv_bytes(int64_t context, int64_t concurrency) const {
    const int64_t bs = request.kv_block_size;
    return static_cast<uint64_t>(concurrency * ceil_div(context, bs) * bs) * draft_kv_per_token;
  }
  uint64_t activations(int64_t context, int64_t concurrency) const {
    const int64_t t = request.max_batch_tokens;
    return activation_bytes(config, t, std::min<int64_t>(t, concurrency), context);
  }
  uint64_t total(int64_t context, int64_t concurrency) const {
    return weights_bytes + kv_bytes(context, concurrency) + activations(context, concurrency) + overhead +
           draft_weights + draft_kv_bytes(context, concurrency) + request.adapters.total_bytes();
  }
  bool fits(int64_t context, int64_t concurrency) const { return total(context, concurrency) <= usable; }
};

// Largest x in [lo, hi] with pred(x) true, for a pred that is true then false; lo - 1 when pred(lo) is false.
template <typename Pred>
int64_t last_true(int64_t lo, int64_t hi, Pred pred) {
  if (!pred(lo)) return lo - 1;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo + 1) / 2;
    if (pred(mid)) lo = mid; else hi = mid - 1;
  }
  return lo;
}

Bounds roofline_bounds(const model::ModelConfig& c, const WeightsSummary& w, uint64_t kv_per_token,
                       const DeviceSpec& d, const PlanRequest& r) {
  Bounds b;
  const double bw = d.bandwidth_gbs * 1e9;
  double ops = (w.quantized ? d.int8_tops : d.bf16_tflops) * 1e12;
  if (ops <= 0) ops = std::max(d.int8_tops, d.bf16_tflops) * 1e12;
  b.ops_per_second = ops;
  const double L = r.context_length, C = r.concurrency;
  const double attn_flops_per_token = 4.0 * c.n_layers * c.q_dim() * L;  // QK^T and PV over L positions
  const double flops_per_token = 2.0 * static_cast<double>(w.n_matmul_params) + attn_flops_per_token;
  // KV bytes a decode step reads per stream: the windowed layers only their window.
  const double window_per_token = static_cast<double>(window_kv_bytes_per_token(c, kv_per_token));
  const double kv_read = (static_cast<double>(kv_per_token) - window_per_token) * L +
                         window_per_token * std::min<double>(L, c.sliding_window);
  auto step_time = [&](double n_streams, bool* compute_bound) {
    const double t_mem = bw > 0 ? (w.bytes_read_per_step(n_streams) + n_streams * kv_read) / bw : 0;
    const double t_ops = ops > 0 ? n_streams * flops_per_token / ops : 0;
    if (compute_bound) *compute_bound = t_ops > t_mem;
    return std::max(t_mem, t_ops);
  };
  b.decode_step_bytes = w.bytes_read_per_step(C) + C * kv_read;
  b.decode_step_flops = C * flops_per_token;
  const double t_step = step_time(C, &b.decode_compute_bound);
  if (t_step > 0) {
    b.decode_tps_per_stream = 1.0 / t_step;
    b.decode_tps_aggregate = C / t_step;
  }
  const double t_single = step_time(1, nullptr);
  if (t_single > 0) b.decode_tps_single = 1.0 / t_single;

  const double prefill_flops = 2.0 * static_cast<double>(w.n_matmul_params) * L + 2.0 * c.n_layers * c.q_dim() * L * L;
  const double n_chunks = static_cast<double>(ceil_div(r.context_length, r.max_batch_tokens));
  const double t_ops = ops > 0 ? prefill_flops / ops : 0;
  const double t_mem = bw > 0 ? w.bytes_read_per_step(std::min<double>(L, r.max_batch_tokens)) * n_chunks / bw : 0;
  b.prefill_compute_bound = t_ops >= t_mem;
  b.prefill_seconds = std::max(t_ops, t_mem);
  if (b.prefill_seconds > 0) b.prefill_tps = L / b.prefill_seconds;
  return b;
}

}  // namespace

double WeightsSummary::bytes_read_per_step(double n_tokens) const {
  const double one_token_experts = static_cast<double>(expert_stack_bytes) * expert_fraction;
  const double step_experts = static_cast<double>(expert_stack_bytes) *
                              (1.0 - std::pow(1.0 - expert_fraction, std::max(1.0, n_tokens)));
  return static_cast<double>(bytes_read_per_token) - one_token_experts + step_experts;
}

double expert_fraction(const model::ModelConfig& c) {
  return c.moe() ? static_cast<double>(c.n_experts_used) / c.n_experts : 1.0;
}

WeightsSummary summarize_weights(const std::vector<TensorSpec>& tensors, double expert_fraction) {
  WeightsSummary w;
  w.expert_fraction = expert_fraction;
  uint64_t unread_expert_bytes = 0;  // per token, of the experts a token does not choose
  std::map<DType, TypeBytes> by_type;
  const TensorSpec* embd = nullptr;
  bool has_output = false;
  uint64_t quantized_matmul_bytes = 0, matmul_bytes = 0;
  for (const auto& t : tensors) {
    const uint64_t bytes = t.n_bytes();
    TypeBytes& tb = by_type[t.type];
    tb.type = t.type;
    tb.n_tensors += 1;
    tb.n_elements += t.n_elements();
    tb.n_bytes += bytes;
    w.total_bytes += bytes;
    w.n_params += t.n_elements();
    if (t.name == "token_embd.weight") { embd = &t; continue; }
    if (t.name == "output.weight") has_output = true;
    if (t.dims.size() == 3) {  // an expert stack
      const auto read = static_cast<uint64_t>(static_cast<double>(bytes) * expert_fraction);
      unread_expert_bytes += bytes - read;
      w.expert_stack_bytes += bytes;
      w.n_matmul_params += static_cast<int64_t>(static_cast<double>(t.n_elements()) * expert_fraction);
      matmul_bytes += read;
      if (is_block_quantized(t.type)) quantized_matmul_bytes += read;
    } else if (t.dims.size() >= 2) {
      w.n_matmul_params += t.n_elements();
      matmul_bytes += bytes;
      if (is_block_quantized(t.type)) quantized_matmul_bytes += bytes;
    }
  }
  for (const auto& [type, tb] : by_type) w.by_type.push_back(tb);
  std::stable_sort(w.by_type.begin(), w.by_type.end(),
                   [](const TypeBytes& a, const TypeBytes& b) { return a.n_bytes > b.n_bytes; });
  w.bytes_read_per_token = w.total_bytes - unread_expert_bytes;
  if (embd) {
    const uint64_t embd_bytes = embd->n_bytes();
    const int64_t n_rows = embd->dims.size() >= 2 ? embd->n_elements() / embd->dims[0] : 1;
    const uint64_t row = n_rows > 0 ? embd_bytes / static_cast<uint64_t>(n_rows) : embd_bytes;
    // The lookup reads one row; a tied table is read whole again as the output projection.
    w.bytes_read_per_token += row + (has_output ? 0 : embd_bytes) - embd_bytes;
    if (!has_output) {
      w.n_matmul_params += embd->n_elements();
      matmul_bytes += embd_bytes;
      if (is_block_quantized(embd->type)) quantized_matmul_bytes += embd_bytes;
    }
  }
  w.quantized = quantized_matmul_bytes * 2 > matmul_bytes;
  return w;
}

uint64_t activation_bytes(const model::ModelConfig& c, int64_t batch_tokens, int64_t logit_rows,
                          int64_t context_length) {
  uint64_t per_token_f32 = 2ull * c.dim + 2ull * c.q_dim() + 2ull * c.kv_dim() + 2ull * c.ffn_dim;
  if (c.moe()) {  // one row per (token, chosen expert) of the projections, gate and up; the router; the gathered input
    const auto k = static_cast<uint64_t>(c.n_experts_used);
    per_token_f32 += k * c.dim + 2ull * k * c.expert_ffn_dim + static_cast<uint64_t>(c.n_experts) + c.dim;
  }
  const uint64_t widest = static_cast<uint64_t>(std::max(c.dim, c.ffn_dim));
  uint64_t per_token_q8 = ceil_div(static_cast<int64_t>(widest), 32) * 34;
  // A mixture of experts quantizes every (token, expert) row of the down projection's input at once.
  if (c.moe()) per_token_q8 += static_cast<uint64_t>(c.n_experts_used) * ceil_div(c.expert_ffn_dim, 32) * 34;
  return static_cast<uint64_t>(batch_tokens) * (4 * per_token_f32 + per_token_q8) +
         4ull * static_cast<uint64_t>(logit_rows) * static_cast<uint64_t>(c.n_vocab) +
         4ull * static_cast<uint64_t>(c.n_heads) * static_cast<uint64_t>(context_length);
}

Result<DraftModelSpec> draft_model_spec(const model::ModelConfig& config, const std::vector<TensorSpec>& tensors,
                                        DType kv_dtype) {
  DraftModelSpec d;
  d.weights = summarize_weights(tensors, expert_fraction(config));
  KAIRO_TRY_ASSIGN(d.kv_bytes_per_token, kv_bytes_per_token(config, kv_dtype));
  return d;
}

KvPoolRequest kv_pool_request(const model::ModelConfig& config, const WeightsSummary& weights,
                              const DeviceSpec& device, const PlanRequest& request) {
  KvPoolRequest r;
  r.budget_bytes = device.usable_bytes();
  r.weights_bytes = weights.total_bytes;
  const int64_t t = request.max_batch_tokens;
  r.activation_bytes = activation_bytes(config, t, std::min<int64_t>(t, request.concurrency), request.context_length);
  r.overhead_bytes = device.runtime_overhead_bytes;
  r.kv_dtype = request.kv_dtype;
  r.block_size = request.kv_block_size;
  r.max_model_len = request.context_length;
  r.min_concurrency = 1;
  r.max_sequences = request.concurrency;
  r.max_num_seqs = request.concurrency;
  r.max_batch_tokens = request.max_batch_tokens;
  r.knobs = request.knobs;
  r.knobs.budget_scale = device.usable_fraction;
  if (request.draft) {
    r.weights_bytes += request.draft->weights.total_bytes;
    r.extra_bytes_per_token = request.draft->kv_bytes_per_token;
  }
  r.adapter_bytes = request.adapters.total_bytes();
  if (request.adapters.n_runtime_slots > 0) {
    r.adapter_fix = strprintf("lower --max-loras or --max-lora-rank (%d runtime LoRA slots of rank %d reserve %s)",
                              request.adapters.n_runtime_slots, request.adapters.runtime_rank,
                              human_bytes(static_cast<uint64_t>(request.adapters.n_runtime_slots) *
                                          request.adapters.runtime_slot_bytes)
                                  .c_str());
  }
  return r;
}

KvPoolRequest kv_cache_budget_request(KvPoolRequest r, uint64_t kv_cache_bytes) {
  r.budget_bytes = kv_cache_bytes;
  r.weights_bytes = 0;
  r.activation_bytes = 0;
  r.overhead_bytes = 0;
  r.adapter_bytes = 0;  // the KV cache's budget alone: adapters are outside it, like the weights
  r.adapter_fix.clear();
  r.max_sequences = 0;
  return r;
}

Result<Plan> make_plan(const model::ModelConfig& config, const std::vector<TensorSpec>& tensors,
                       const DeviceSpec& device, const PlanRequest& request) {
  Plan p;
  p.config = config;
  p.device = device;
  p.request = request;
  PlanRequest& r = p.request;
  if (r.context_length == 0) r.context_length = config.context_length;
  if (r.context_length < 0 || r.concurrency <= 0 || r.max_batch_tokens <= 0 || r.kv_block_size <= 0) {
    return Error{strprintf("context (%d), concurrency (%d), max batch tokens (%d) and KV block size (%d) must be "
                           "positive",
                           r.context_length, r.concurrency, r.max_batch_tokens, r.kv_block_size)};
  }
  if (device.memory_bytes == 0) {
    return Error{strprintf("device '%s' has no memory capacity; give one with --mem-gb", device.name.c_str())};
  }
  p.weights = summarize_weights(tensors, expert_fraction(config));
  KAIRO_TRY_ASSIGN(p.kv_bytes_per_token, kv_bytes_per_token(config, r.kv_dtype));

  const Sizer s{config,
                r,
                p.weights.total_bytes,
                p.kv_bytes_per_token,
                device.runtime_overhead_bytes,
                device.usable_bytes(),
                r.draft ? r.draft->weights.total_bytes : 0,
                r.draft ? r.draft->kv_bytes_per_token : 0};
  MemoryBreakdown& m = p.memory;
  m.weights_bytes = p.weights.total_bytes;
  m.kv_bytes = s.kv_bytes(r.context_length, r.concurrency);
  m.draft_weights_bytes = s.draft_weights;
  m.draft_kv_bytes = s.draft_kv_bytes(r.context_length, r.concurrency);
  m.adapter_bytes = r.adapters.total_bytes();
  m.activation_bytes = s.activations(r.context_length, r.concurrency);
  m.overhead_bytes = device.runtime_overhead_bytes;
  m.total_bytes = s.total(r.context_length, r.concurrency);
  m.usable_bytes = device.usable_bytes();
  m.fits = s.fits(r.context_length, r.concurrency);

  const int64_t bs = r.kv_block_size;
  const int64_t max_blocks = ceil_div(config.context_length, bs);
  const int64_t best_blocks = last_true(1, max_blocks, [&](int64_t b) {
    return s.fits(std::min<int64_t>(b * bs, config.context_length), r.concurrency);
  });
  p.max_context_at_concurrency =
      best_blocks <= 0 ? 0 : static_cast<int>(std::min<int64_t>(best_blocks * bs, config.context_length));
  p.max_concurrency_at_context =
      static_cast<int>(std::max<int64_t>(0, last_true(1, 1 << 24, [&](int64_t c) { return s.fits(r.context_length, c); })));

  const KvPoolRequest server = kv_pool_request(config, p.weights, device, r);
  p.kv_pool = size_kv_pool(config, server);
  p.trained_context = check_trained_context(config, tensors, r.context_length, r.knobs.max_model_len);
  if (!p.trained_context.fits) {  // tools/commands/serve.cpp's refusal, before it sizes anything
    p.kv_pool = Error{strprintf("--max-model-len %d is larger than the model's context length of %d tokens; use at "
                                "most %d",
                                r.context_length, config.context_length, config.context_length)};
  }
  // The advice for the requested concurrency: the same sizing, asked to hold all C sequences of L at once.
  KvPoolRequest all = server;
  all.min_concurrency = r.concurrency;
  if (auto at_c = size_kv_pool(config, all); !at_c.ok()) p.to_fit = at_c.error().message;
  p.bounds = roofline_bounds(config, p.weights, p.kv_bytes_per_token, device, r);
  return p;
}

}  // namespace kairo::plan
