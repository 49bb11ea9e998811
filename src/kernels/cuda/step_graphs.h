#pragma once
// Replaying a device step's launches as a CUDA graph. A decode step is ~10 launches per layer, a few microseconds
// of launch overhead each: for a small model that is a large part of the step, and a replayed graph pays it once.
//
// CudaDevice records each launch as (signature, closure) instead of enqueuing it. The next point that needs the
// work on the stream (a download, a synchronize, the end of the step) flushes the segment:
//  - a segment whose exact launch sequence (every argument, device addresses included) was captured before is
//    replayed as one graph launch;
//  - one seen for the second time runs under stream capture and is kept (at most kMaxGraphs; then all are dropped);
//  - anything else runs launch by launch, as with graphs off.
// A graph replays only launches identical to the ones it captured, so it is correct by construction. What repeats
// is steady decode: the same batch size, the staged inputs at the same arena offsets, the same block-table width
// (16 tokens at a time). A segment with a launch that may allocate (cuBLAS's workspaces) is never captured, and a
// capture the runtime refuses turns graphs off for the device (the segment then runs launch by launch).
//
// Unlike vLLM this does not pad batches to buckets (graph_buckets.h): the decoder's batch description would have to
// be padded too. Set KAIRO_CUDA_GRAPHS=0 (or pass --no-cuda-graphs) to run every launch eagerly.
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace kairo::kernels::cuda {

// What capturing needs from the runtime: the CUDA implementation is in cuda_device.cu, the host tests use a fake.
class GraphRuntime {
 public:
  virtual ~GraphRuntime() = default;
  virtual void begin_capture() = 0;
  // The instantiated graph of what was enqueued since begin_capture, or null when the runtime refused the capture
  // (nothing of it ran).
  virtual void* end_capture() = 0;
  virtual void launch(void* graph) = 0;
  virtual void destroy(void* graph) = 0;
};

// FNV-1a over the bytes of each argument: plain values only (pointers, integers, floats, enums), so no struct
// padding of unknown content reaches the hash.
class Signature {
 public:
  template <typename... Args>
  explicit Signature(int op, const Args&... args) {
    add(op);
    (add(args), ...);
  }
  uint64_t value() const { return h_; }

 private:
  template <typename T>
  void add(const T& v) {
    static_assert(std::is_scalar_v<T>, "hash plain values, not structs (their padding is indeterminate)");
    unsigned char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    for (unsigned char c : b) h_ = (h_ ^ c) * 0x100000001b3ull;
  }
  uint64_t h_ = 0xcbf29ce484222325ull;
};

class StepGraphs {
 public:
  static constexpr size_t kMaxGraphs = 64;
  static constexpr size_t kMaxRemembered = 4096;  // segments seen once, waiting for a second sighting

  StepGraphs(std::unique_ptr<GraphRuntime> runtime, bool enabled);
  ~StepGraphs();
  StepGraphs(const StepGraphs&) = delete;
  StepGraphs& operator=(const StepGraphs&) = delete;

  bool enabled() const { return enabled_; }
  // Adds a launch to the current segment; with graphs off, runs it now.
  void record(const Signature& signature, std::function<void()> launch, bool capturable = true);
  // Puts the segment's work on the stream (replayed, captured or launch by launch).
  void flush();

  struct Stats {
    int64_t replayed = 0;  // segments run as one graph launch
    int64_t captured = 0;
    int64_t eager = 0;     // segments run launch by launch
  };
  const Stats& stats() const { return stats_; }

 private:
  void run_eagerly();
  void drop_graphs();

  std::unique_ptr<GraphRuntime> runtime_;
  bool enabled_;
  std::vector<uint64_t> signatures_;  // the current segment
  std::vector<std::function<void()>> launches_;
  bool capturable_ = true;
  struct Graph {
    std::vector<uint64_t> signatures;  // compared in full on a hash hit
    void* exec = nullptr;
  };
  std::unordered_map<uint64_t, Graph> graphs_;
  std::unordered_map<uint64_t, int> seen_;
  Stats stats_;
};

}  // namespace kairo::kernels::cuda
