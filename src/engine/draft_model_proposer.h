#pragma once
// A draft model's proposals: a smaller model with the target's vocabulary decodes each request's continuation
// greedily, k tokens ahead, for all requests of a step together (one batched draft step per proposed position).
//
// It keeps its own paged KV (its own block pool, no prefix cache). Before each proposal it reconciles a request's
// draft KV with the request's tokens: the longest common prefix stays, the rest (rejected guesses) is rolled back,
// and the tokens the draft has not seen (the prompt on the first call, then the accepted guesses' successor) are
// computed in the first batched step. A greedy request's guesses are the draft's argmax (q one-hot: the engine's
// sample-then-compare verification is the exact rejection rule for it); a sampled request's are drawn from the
// draft's distribution through the request's filters (ProposalSlot::filters), verified by the general min(1, p/q)
// rule, which accepts more of them when the target is sampled.
#include <memory>
#include <unordered_map>
#include <vector>

#include "core/thread_pool.h"
#include "engine/proposer.h"
#include "kv/kv_cache_manager.h"
#include "model/batch.h"
#include "model/decoder.h"
#include "model/kv_storage.h"
#include "model/model.h"

namespace kairo::engine {

class DraftModelProposer final : public Proposer {
 public:
  // storage: the draft's KV pool (model::KvStorage::create for the draft model; block 0 is the reserved null block).
  DraftModelProposer(model::Model& draft, model::KvStorage storage, ThreadPool& pool);

  void propose(std::span<const int32_t> tokens, int n_prompt, int k, std::vector<int32_t>& out) override;
  void propose_all(std::span<const ProposalSlot> slots) override;
  void release(uint64_t request) override;

  double kv_usage() const { return kv_.usage(); }
  uint64_t kv_bytes() const { return storage_.n_bytes(); }
  int64_t kv_tokens() const { return (storage_.n_blocks() - 1) * storage_.block_size(); }
  // Most prompt tokens one request catches up in one call: a longer prompt is computed over several steps (and
  // proposes nothing until it is), so the draft's step stays bounded.
  static constexpr int kMaxCatchUp = 512;

 private:
  struct Row {
    uint64_t request;
    std::span<const int32_t> tokens;  // covers [from, to)
    int from, to;
    std::vector<int32_t>* out;        // null: the row only computes KV (catching up)
    const ProposalSlot* slot;         // how to choose the guess (sampled or argmax)
  };
  // One batched draft step over the rows (their KV slots allocated), appending each out's guess.
  void run(const std::vector<Row>& rows);

  model::Model& draft_;
  model::KvStorage storage_;
  kv::KVCacheManager kv_;
  ThreadPool& pool_;
  model::Batch batch_;
  model::StepBuffers buffers_;
  std::vector<float> logits_;
  std::unordered_map<uint64_t, std::vector<int32_t>> seen_;  // per request: the tokens whose draft KV exists
};

}  // namespace kairo::engine
