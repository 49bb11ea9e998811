#include "model/model.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

#include "model/decoder.h"

namespace kairo::model {
namespace {

// fn(0) .. fn(n - 1), on as many threads as the process may use (items taken one at a time). The first exception
// stops the others after their current item and is rethrown here.
template <typename Fn>
void for_each_on_every_core(size_t n, Fn&& fn) {
  std::atomic<size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto worker = [&] {
    try {
      for (size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) fn(i);
    } catch (...) {
      std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
      next.store(n);
    }
  };
  const size_t n_threads = std::min<size_t>(static_cast<size_t>(ThreadPool::available_cores()), n);
  std::vector<std::thread> helpers;
  for (size_t i = 1; i < n_threads; ++i) helpers.emplace_back(worker);
  worker();
  for (auto& h : helpers) h.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace

struct Model::Scratch {
  DecoderScratch decoder;
};

Result<std::unique_ptr<Model>> Model::load(const std::string& path, const kernels::Backend* backend) {
  KAIRO_TRY_ASSIGN(gguf::File file, gguf::File::open(path));
  return from_file(std::move(file), backend);
}

Result<std::unique_ptr<Model>> Model::from_file(gguf::File file, const kernels::Backend* backend) {
  std::unique_ptr<Model> m(new Model());
  m->file_ = std::move(file);
  KAIRO_TRY_ASSIGN(m->config_, read_config(m->file_));
  KAIRO_TRY_ASSIGN(m->weights_, bind_weights(m->file_, m->config_));
  m->backend_ = backend ? backend : &kernels::best_cpu_backend();
  m->pack_weights();
  m->scratch_ = std::make_shared<Scratch>();
  return m;
}

void Model::pack_weights() {
  if (!backend_->pack_weights) return;
  // The embedding table keeps its GGUF layout for get_row; only the matmul views are replaced.
  // A repacked weight's file pages are released: resident memory then holds each weight once.
  struct Task {
    kernels::MatrixView* view;
    bool release_original;
    kernels::PackedMatrix packed;
  };
  std::vector<Task> tasks;
  kernels::MatrixView tied_output = weights_.output;
  const bool tied = weights_.output.data == weights_.token_embd.data;
  if (tied) {
    // tied: pack a copy, keep token_embd as it is (get_row reads it)
    tasks.push_back({&tied_output, false, {}});
  } else {
    tasks.push_back({&weights_.output, true, {}});
  }
  for (LayerWeights& L : weights_.layers) {
    for (kernels::MatrixView* v : {&L.wq, &L.wk, &L.wv, &L.wo, &L.w_gate, &L.w_up, &L.w_down})
      tasks.push_back({v, true, {}});
  }
  // Packing is the first write to every page of the packed copy, and page population (the kernel zeroing fresh
  // pages; on a VM, the host backing them) dominated load time on one thread, so every core packs at once.
  for_each_on_every_core(tasks.size(), [&](size_t i) {
    Task& t = tasks[i];
    t.packed = backend_->pack_weights(*t.view);
    if (t.packed.view.data != nullptr && t.release_original)
      file_.release_pages(t.view->data, t.view->row_bytes * static_cast<size_t>(t.view->n_rows));
  });
  for (Task& t : tasks) {
    if (t.packed.view.data == nullptr) continue;
    *t.view = t.packed.view;
    packed_storage_.push_back(std::move(t.packed.storage));
  }
  if (tied) weights_.output = tied_output;
}

void Model::forward(const Batch& batch, KvStorage& kv, std::vector<float>& logits, ThreadPool& pool) {
  decoder_forward(config_, weights_, *backend_, batch, kv, scratch_->decoder, logits, pool);
}

}  // namespace kairo::model
