// The engine's speculative decoding (docs/speculative-decoding.md): proposing before a step, verifying after it.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <stdexcept>

#include "core/out_of_memory.h"
#include "engine/engine.h"

namespace kairo::engine {

void Engine::propose_drafts() {
  if (!proposer_) return;
  const int max_batch = config_.speculative.max_batch;
  const bool speculate = max_batch == 0 || scheduler_.n_running() < max_batch;
  int n_decode = 0;
  std::vector<ProposalSlot> slots;
  for (auto& [id, seq] : seqs_) {
    seq->draft.clear();
    seq->draft_q.clear();
    if (seq->status != SeqStatus::Running || seq->n_uncomputed() != 1 || seq->n_generated() == 0) continue;
    ++n_decode;
    if (!speculate || !seq->request.speculative) continue;
    // Guesses past max_tokens or the context could never be emitted.
    const int room = std::min(seq->request.stop.max_tokens - seq->n_generated() - 1,
                              config_.max_model_len - static_cast<int>(seq->tokens.size()));
    const int k = std::min(seq->spec_k, room);
    if (k <= 0) continue;
    ProposalSlot slot{id, seq->tokens, seq->n_prompt, k, &seq->draft};
    if (seq->draft_filters) {
      slot.filters = seq->draft_filters.get();
      slot.rng = &seq->spec_rng;
      slot.q = &seq->draft_q;
    }
    slots.push_back(slot);
  }
  if (slots.empty()) return;
  // Decided before proposing, on the most that could be proposed: a declined step must not pay for a draft model's
  // guesses either (and its measured time is then a plain step's).
  int n_wanted = 0;
  for (const ProposalSlot& s : slots) n_wanted += s.k;
  if (config_.speculative.adaptive && !speculation_gate_.worth_it(n_decode, n_wanted)) return;
  // Guesses only save time: a draft model that runs out of memory for its step (kernel scratch, batch arrays: a
  // std::bad_alloc; its step buffers: the device's error as a std::runtime_error) proposes nothing this step, and
  // forgets these requests' draft state, which the failed step left half-written. The target's step goes on; if
  // memory is short for it as well, it fails with the step's message.
  std::string failure;
  try {
    proposer_->propose_all(slots);
  } catch (const kernels::DeviceLost&) {
    throw;
  } catch (const std::bad_alloc& e) {
    failure = describe_allocation_failure(e) + address_space_limit_note();
  } catch (const std::runtime_error& e) {
    failure = e.what();
  }
  if (!failure.empty()) {
    static std::atomic<bool> warned{false};  // once: a shortage that lasts would otherwise print every step
    if (!warned.exchange(true)) {
      std::fprintf(stderr, "kairo engine: proposing failed (%s): such steps run without speculation\n",
                   failure.c_str());
    }
    for (const ProposalSlot& s : slots) {
      s.out->clear();
      if (s.q) s.q->clear();
      proposer_->release(s.request);
    }
    return;
  }
  const int n_vocab = model_.config().n_vocab;
  for (const ProposalSlot& s : slots) {
    if (static_cast<int>(s.out->size()) > s.k) s.out->resize(static_cast<size_t>(s.k));
    // A guess outside the vocabulary (a faulty proposer) ends the guesses: the model cannot embed it.
    const auto bad = std::find_if(s.out->begin(), s.out->end(), [n_vocab](int32_t t) { return t < 0 || t >= n_vocab; });
    s.out->erase(bad, s.out->end());
    // Drawn guesses carry their distributions, one each; without them the guesses count as deterministic.
    if (s.q && s.q->size() != s.out->size()) {
      if (s.q->size() > s.out->size()) {
        s.q->resize(s.out->size());
      } else {
        s.q->clear();
      }
    }
  }
}

void Engine::verify_draft(Sequence& seq, const ScheduledChunk& chunk, size_t first_row) {
  // The counters move before each token is emitted, so a client that sees its request finish sees them counted.
  ++spec_drafts_;
  spec_draft_tokens_ += chunk.n_draft;
  if (spec_accepted_per_pos_.size() < static_cast<size_t>(chunk.n_draft))
    spec_accepted_per_pos_.resize(static_cast<size_t>(chunk.n_draft), 0);
  int n_accepted = 0;
  const bool drawn = !seq.draft_q.empty();  // guesses drawn from a draft's distribution, one q each
  for (int i = 0; i <= chunk.n_draft; ++i) {
    const float* logits = runner_.logits_row(first_row + static_cast<size_t>(i));
    bool matched = false;
    int32_t token = -1;
    if (drawn && i < chunk.n_draft) {
      token = verify_drawn_guess(seq, logits, static_cast<size_t>(i), matched);
    } else {
      token = choose_token(seq, logits);
      matched = i < chunk.n_draft && token == seq.draft[static_cast<size_t>(i)];
    }
    if (token < 0) break;  // the request ended (its grammar)
    if (matched) {
      ++n_accepted;
      ++spec_accepted_;
      ++spec_accepted_per_pos_[static_cast<size_t>(i)];
    }
    emit_token(seq, token, logits);
    if (!matched || seq.status == SeqStatus::Finished) break;
  }
  speculation_gate_.observe_verification(chunk.n_draft, n_accepted);
  // Propose more after a fully accepted guess, fewer after a rejection (a wrong guess costs compute).
  seq.spec_k = n_accepted == chunk.n_draft ? std::min(seq.spec_k + 1, config_.speculative.num_tokens)
                                           : n_accepted + 1;
  seq.draft.clear();
  seq.draft_q.clear();
  if (seq.status != SeqStatus::Finished) scheduler_.reject_draft(seq, chunk.n_draft - n_accepted);
}

int32_t Engine::verify_drawn_guess(Sequence& seq, const float* logits, size_t i, bool& accepted) {
  const float* sample_from = sampling_logits(seq, logits);
  if (!sample_from) return -1;
  // p: what the request's chain would draw from here (its penalties see the tokens accepted before this row).
  const sampling::SparseDistribution p = seq.sampler.distribution(sample_from, model_.config().n_vocab);
  const double u_accept = sampling::uniform01(seq.spec_rng);
  const double u_resample = sampling::uniform01(seq.spec_rng);
  const sampling::GuessVerdict v = sampling::verify_guess(p, seq.draft_q[i], seq.draft[i], u_accept, u_resample);
  accepted = v.accepted;
  // An empty p cannot happen (a softmax leaves some mass); were it to, the plain draw decides.
  if (v.token < 0) return commit_token(seq, seq.sampler.sample(sample_from, model_.config().n_vocab));
  return commit_token(seq, v.token);
}

}  // namespace kairo::engine
