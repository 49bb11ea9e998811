#include "model/model.h"

#include "model/decoder.h"

namespace kairo::model {

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
  auto pack = [this](kernels::MatrixView& view, bool release_original) {
    kernels::PackedMatrix packed = backend_->pack_weights(view);
    if (packed.view.data == nullptr) return;
    if (release_original) file_.release_pages(view.data, view.row_bytes * static_cast<size_t>(view.n_rows));
    view = packed.view;
    packed_storage_.push_back(std::move(packed.storage));
  };
  if (weights_.output.data == weights_.token_embd.data) {
    kernels::MatrixView output = weights_.output;  // tied: pack a copy, keep token_embd as it is (get_row reads it)
    pack(output, /*release_original=*/false);
    weights_.output = output;
  } else {
    pack(weights_.output, true);
  }
  for (LayerWeights& L : weights_.layers) {
    for (kernels::MatrixView* v : {&L.wq, &L.wk, &L.wv, &L.wo, &L.w_gate, &L.w_up, &L.w_down}) pack(*v, true);
  }
}

void Model::forward(const Batch& batch, KvStorage& kv, std::vector<float>& logits, ThreadPool& pool) {
  decoder_forward(config_, weights_, *backend_, batch, kv, scratch_->decoder, logits, pool);
}

}  // namespace kairo::model
