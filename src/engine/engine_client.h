#pragma once
// The engine as its clients (server, CLI, benchmarks) see it: submit a request with a callback, abort it, read
// counters. Callbacks run on the engine thread: they must be quick and must not call back into the engine
// synchronously (post to your own executor instead).
#include <cstdint>
#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "core/result.h"
#include "engine/request.h"

namespace kairo::engine {

using OutputCallback = std::function<void(const RequestOutput&)>;

struct EngineStats {
  int n_running = 0;
  int n_waiting = 0;
  double kv_usage = 0.0;            // used blocks / total blocks, 0..1
  int64_t n_kv_blocks_total = 0;
  int64_t n_kv_blocks_used = 0;
  // The sliding-window layers' own pool (0 / 0 when they have none): bounded by their window, not the context.
  int64_t n_window_kv_blocks_total = 0;
  int64_t n_window_kv_blocks_used = 0;
  int64_t n_preemptions = 0;
  int64_t prefix_cache_queries = 0; // tokens looked up
  int64_t prefix_cache_hits = 0;    // tokens found
  int64_t prompt_tokens = 0;        // computed prompt tokens, total
  int64_t generation_tokens = 0;
  double weight_read_gbps = 0.0;    // achieved weight-read bandwidth over the last steps
  // Speculative decoding (vLLM's spec_decode_* counters): requests' proposals verified, tokens proposed, tokens
  // accepted, and accepted tokens by position in the proposal ([i]: proposals whose first i + 1 were accepted).
  int64_t spec_num_drafts = 0;
  int64_t spec_num_draft_tokens = 0;
  int64_t spec_num_accepted_tokens = 0;
  std::vector<int64_t> spec_num_accepted_tokens_per_pos;
  double draft_kv_usage = 0.0;      // a draft model's own KV pool, 0..1 (0 without one)
};

// Why an engine stopped running requests for good. Each kind is its own /health status (failure_status()), so an
// operator can tell a lost device from memory that ran out from a bug in the engine's own bookkeeping.
enum class FailureKind {
  None,
  DeviceLost,       // the device failed mid-step (or a step failed on it for another reason)
  OutOfMemory,      // a step could not allocate its memory
  BrokenInvariant,  // a KAIRO_CHECK of the KV/scheduler bookkeeping failed (core/check.h): a bug, never the input's
};

struct EngineFailure {
  FailureKind kind = FailureKind::None;
  std::string message;  // empty for None
};

// The /health status of an engine that failed this way: "device_failed", "out_of_memory", "invariant_failed";
// "ok" for None.
constexpr const char* failure_status(FailureKind kind) {
  switch (kind) {
    case FailureKind::None: return "ok";
    case FailureKind::DeviceLost: return "device_failed";
    case FailureKind::OutOfMemory: return "out_of_memory";
    case FailureKind::BrokenInvariant: return "invariant_failed";
  }
  return "device_failed";
}

enum class SubmitError { QueueFull, TooLong, Invalid, ShuttingDown, DeviceFailed };

struct SubmitRejection {
  SubmitError kind;
  std::string message;
};

// LoRA adapters loaded and unloaded while serving (EngineClient::load_adapter / unload_adapter).
struct LoadedAdapter {
  int id = 0;               // Request::adapter
  uint64_t generation = 0;  // Request::adapter_generation
};

enum class AdapterError {
  Invalid,      // the file is not an adapter for this model (the loader's message) -> HTTP 400
  Full,         // max_loras adapters are loaded already -> 409
  NotLoaded,    // unload: no such adapter (or it was unloaded already) -> 404
  Unavailable,  // the engine takes no adapters at run time, is shutting down or has failed -> 503
};

struct AdapterRefusal {
  AdapterError kind;
  std::string message;
};

class EngineClient {
 public:
  virtual ~EngineClient() = default;
  // Either the new request's id, or why it was refused (QueueFull -> HTTP 429, TooLong/Invalid -> 400,
  // ShuttingDown/DeviceFailed -> 503).
  virtual std::variant<RequestId, SubmitRejection> submit(Request request, OutputCallback on_output) = 0;
  // Aborts a running or waiting request; its blocks are freed within one engine step and its callback receives a
  // final output with FinishReason::Abort. Unknown or finished ids are ignored.
  virtual void abort(RequestId id) = 0;
  virtual EngineStats stats() const = 0;
  virtual int context_length() const = 0;
  virtual int n_vocab() const = 0;
  // Empty while the engine can run requests; otherwise why it cannot any more (the device was lost). /health
  // reports it and new requests are refused with it.
  virtual std::string failure() const { return {}; }
  // Reads the LoRA adapter file at `path`, checks it against the model as at startup, and makes it servable at
  // `scale`; returns its id and generation once requests may use them. An id freed by unload_adapter is reused.
  virtual std::variant<LoadedAdapter, AdapterRefusal> load_adapter(const std::string& path, float scale) {
    (void)path, (void)scale;
    return AdapterRefusal{AdapterError::Unavailable, "this engine cannot load LoRA adapters while it serves"};
  }
  // New requests may no longer use adapter `id` (of that generation); it is freed once the requests already submitted
  // with it have finished, which run to their end under it. Returns how many such requests there were.
  virtual std::variant<int, AdapterRefusal> unload_adapter(int id, uint64_t generation) {
    (void)id, (void)generation;
    return AdapterRefusal{AdapterError::Unavailable, "this engine cannot unload LoRA adapters while it serves"};
  }
  // failure() and what kind of failure it is. An engine that only reports failure() has lost its device.
  virtual EngineFailure failure_state() const {
    std::string message = failure();
    return {message.empty() ? FailureKind::None : FailureKind::DeviceLost, std::move(message)};
  }
};

}  // namespace kairo::engine
