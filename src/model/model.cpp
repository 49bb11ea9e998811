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
  m->scratch_ = std::make_shared<Scratch>();
  return m;
}

void Model::forward(const Batch& batch, KvStorage& kv, std::vector<float>& logits, ThreadPool& pool) {
  decoder_forward(config_, weights_, *backend_, batch, kv, scratch_->decoder, logits, pool);
}

}  // namespace kairo::model
