// kv_write (bit-exact against the reference) and paged attention (against the reference, and batch-invariant).
#include <algorithm>
#include <numeric>
#include <random>

#include "kernels/kernel_test_util.h"
#include "kernels/ref/ref_ops.h"
#include "device_ops/device_ops_util.h"

namespace kairo::kernels::device_ops {
namespace {

using kernels::testing::random_floats;
using testing::from_device;
using testing::rel_error;
using testing::to_device;

constexpr int kBlockSize = 16;

size_t kv_elem_bytes(DType t) { return t == DType::F32 ? 4 : 2; }

// A paged KV cache held twice: host bytes for the reference, device buffers for the device; sequences own
// shuffled blocks so block tables are not the identity.
struct Cache {
  DType dtype;
  int n_kv_heads, head_dim, n_blocks, max_blocks;
  std::vector<uint8_t> k_host, v_host;
  DeviceSpan k_dev, v_dev;
  std::vector<int32_t> tables;  // [n_seqs, max_blocks]

  int64_t row() const { return static_cast<int64_t>(n_kv_heads) * head_dim; }
  KvLayerView host_view() { return KvLayerView{k_host.data(), v_host.data(), dtype, n_kv_heads, head_dim, kBlockSize}; }
  DeviceKvLayer device_view() const { return DeviceKvLayer{k_dev, v_dev, dtype, n_kv_heads, head_dim, kBlockSize}; }
  int64_t slot(int seq, int pos) const {
    return static_cast<int64_t>(tables[static_cast<size_t>(seq * max_blocks + pos / kBlockSize)]) * kBlockSize +
           pos % kBlockSize;
  }
};

Cache make_cache(Device& d, std::mt19937& rng, DType dtype, int n_kv_heads, int head_dim, int n_seqs, int max_ctx) {
  Cache c{dtype, n_kv_heads, head_dim, 0, (max_ctx + kBlockSize - 1) / kBlockSize, {}, {}, {}, {}, {}};
  c.n_blocks = n_seqs * c.max_blocks + 3;
  const size_t bytes = static_cast<size_t>(c.n_blocks) * kBlockSize * c.row() * kv_elem_bytes(dtype);
  c.k_host.assign(bytes, 0);
  c.v_host.assign(bytes, 0);
  c.k_dev = testing::zeros(d, bytes);
  c.v_dev = testing::zeros(d, bytes);
  std::vector<int32_t> blocks(static_cast<size_t>(c.n_blocks));
  std::iota(blocks.begin(), blocks.end(), 0);
  std::shuffle(blocks.begin(), blocks.end(), rng);
  c.tables.assign(blocks.begin(), blocks.begin() + n_seqs * c.max_blocks);
  return c;
}

// Writes K/V [n_tokens, row] of `tokens` (seq, pos) to both copies, the device one through kv_write.
void write_kv_values(Device& d, Cache& c, const std::vector<std::pair<int, int>>& tokens, const std::vector<float>& k,
                     const std::vector<float>& v) {
  const auto n = static_cast<int64_t>(tokens.size());
  std::vector<int64_t> slots;
  for (const auto& [seq, pos] : tokens) slots.push_back(c.slot(seq, pos));
  ref::kv_write(c.host_view(), slots.data(), k.data(), v.data(), n);
  DeviceSpan ks = to_device(d, k), vs = to_device(d, v), ss = to_device(d, slots);
  d.kv_write(c.device_view(), ss, ks, vs, n);
  for (DeviceSpan s : {ks, vs, ss}) d.free(s);
}

// Random K/V for `tokens`, written as above; returns them.
std::pair<std::vector<float>, std::vector<float>> write_kv(Device& d, Cache& c, std::mt19937& rng,
                                                           const std::vector<std::pair<int, int>>& tokens) {
  const size_t n = tokens.size() * static_cast<size_t>(c.row());
  std::pair<std::vector<float>, std::vector<float>> kv{random_floats(rng, n), random_floats(rng, n)};
  write_kv_values(d, c, tokens, kv.first, kv.second);
  return kv;
}

struct Queries {
  std::vector<int32_t> positions, seq_idx;
  std::vector<float> q;
};

Queries make_queries(std::mt19937& rng, const std::vector<std::pair<int, int>>& tokens, int n_heads, int head_dim) {
  Queries qs;
  for (const auto& [seq, pos] : tokens) {
    qs.seq_idx.push_back(seq);
    qs.positions.push_back(pos);
  }
  qs.q = random_floats(rng, tokens.size() * static_cast<size_t>(n_heads * head_dim), 0.5f);
  return qs;
}

std::vector<float> device_attention(Device& d, const Cache& c, const Queries& qs, int n_heads, float scale,
                                    int window = 0, float softcap = 0, const std::vector<float>& sinks = {},
                                    Numerics numerics = Numerics::Exact) {
  const auto n = static_cast<int64_t>(qs.positions.size());
  DeviceSpan q = to_device(d, qs.q), out = testing::zeros(d, qs.q.size() * 4);
  DeviceSpan pos = to_device(d, qs.positions), seq = to_device(d, qs.seq_idx), bt = to_device(d, c.tables);
  DeviceSpan sk = sinks.empty() ? DeviceSpan{} : to_device(d, sinks);
  DeviceAttentionBatch batch{n, pos, seq, bt, c.max_blocks, window, softcap, sk};
  batch.numerics = numerics;
  d.attention(q, out, c.device_view(), batch, n_heads, scale);
  std::vector<float> o = from_device<float>(d, out, qs.q.size());
  for (DeviceSpan s : {q, out, pos, seq, bt}) d.free(s);
  if (!sinks.empty()) d.free(sk);
  return o;
}

std::vector<float> ref_attention(Cache& c, const Queries& qs, int n_heads, float scale, int window = 0,
                                 float softcap = 0, const std::vector<float>& sinks = {}) {
  ThreadPool pool(1);
  std::vector<float> o(qs.q.size());
  const AttentionBatch b{static_cast<int64_t>(qs.positions.size()), qs.positions.data(), qs.seq_idx.data(),
                         c.tables.data(), c.max_blocks, window, softcap, sinks.empty() ? nullptr : sinks.data()};
  ref::attention(qs.q.data(), o.data(), c.host_view(), b, n_heads, scale, pool);
  return o;
}

std::vector<std::pair<int, int>> all_positions(int seq, int from, int to) {
  std::vector<std::pair<int, int>> t;
  for (int p = from; p < to; ++p) t.emplace_back(seq, p);
  return t;
}

struct Shape {
  int head_dim, n_heads, n_kv_heads;
  DType dtype;
};

// Tolerances: the reference accumulates in double; both it and the shader round the normalized probabilities to the
// KV dtype before P.V. F32 KV: f32 rounding of ~head_dim-term scores and ~64-term chunk sums, ~1e-6 relative, 2e-5
// leaves room. F16 / BF16 KV: where our f32 p and the reference's double p fall on different sides of a rounding
// boundary, that p moves by one ulp, 2^-11 (f16) / 2^-8 (bf16) of itself; for the largest p (up to 1) that moves
// the output by up to ~5e-4 / 4e-3 of the vector's max: 1e-3 / 8e-3. (Observed: below 2e-4 / 2e-3.)
double tolerance(DType t) { return t == DType::F32 ? 2e-5 : t == DType::F16 ? 1e-3 : 8e-3; }

class DeviceAttention : public ::testing::TestWithParam<Shape> {};

TEST_P(DeviceAttention, KvWriteIsExactAndAttentionMatchesReference) {
  KAIRO_TEST_DEVICE(d);
  const Shape s = GetParam();
  std::mt19937 rng(static_cast<unsigned>(s.head_dim * 31 + s.n_heads));
  const std::vector<int> lens = {37, 130, 5};  // 130: three 64-position chunks, the last one ragged
  Cache c = make_cache(*d, rng, s.dtype, s.n_kv_heads, s.head_dim, 3, 130);
  std::vector<std::pair<int, int>> tokens;
  for (int seq = 0; seq < 3; ++seq) {
    const auto t = all_positions(seq, 0, lens[static_cast<size_t>(seq)]);
    tokens.insert(tokens.end(), t.begin(), t.end());
  }
  (void)write_kv(*d, c, rng, tokens);
  EXPECT_TRUE(from_device<uint8_t>(*d, c.k_dev, c.k_host.size()) == c.k_host) << "K bytes differ from ref::kv_write";
  EXPECT_TRUE(from_device<uint8_t>(*d, c.v_dev, c.v_host.size()) == c.v_host) << "V bytes differ from ref::kv_write";

  const float scale = 1.0f / std::sqrt(static_cast<float>(s.head_dim));
  // Prefill of every sequence at once (33 + 17 + 3 query tokens, ragged) and a decode batch (one token each).
  std::vector<std::pair<int, int>> prefill = all_positions(0, 4, 37);
  const auto p1 = all_positions(1, 113, 130), p2 = all_positions(2, 2, 5);
  prefill.insert(prefill.end(), p1.begin(), p1.end());
  prefill.insert(prefill.end(), p2.begin(), p2.end());
  const std::vector<std::pair<int, int>> decode = {{1, 129}, {0, 36}, {2, 4}};
  for (const auto& batch : {prefill, decode}) {
    const Queries qs = make_queries(rng, batch, s.n_heads, s.head_dim);
    const std::vector<float> got = device_attention(*d, c, qs, s.n_heads, scale);
    EXPECT_LE(rel_error(got, ref_attention(c, qs, s.n_heads, scale)), tolerance(s.dtype))
        << "head_dim " << s.head_dim << " tokens " << batch.size();
  }
  d->free(c.k_dev);
  d->free(c.v_dev);
}

INSTANTIATE_TEST_SUITE_P(Shapes, DeviceAttention,
                         ::testing::Values(Shape{32, 4, 4, DType::F16}, Shape{40, 6, 2, DType::F16},
                                           Shape{64, 8, 1, DType::F16}, Shape{80, 4, 2, DType::F16},
                                           Shape{128, 4, 4, DType::F16}, Shape{256, 2, 1, DType::F16},
                                           Shape{64, 4, 2, DType::F32}, Shape{128, 4, 2, DType::BF16}),
                         [](const ::testing::TestParamInfo<Shape>& info) {
                           return "d" + std::to_string(info.param.head_dim) + "_h" +
                                  std::to_string(info.param.n_heads) + "_kv" + std::to_string(info.param.n_kv_heads) +
                                  "_" + std::string(dtype_name(info.param.dtype));
                         });

// Sliding windows (inside one chunk, across chunks, longer than the context), soft-capped scores and attention
// sinks, against the reference; and a windowed sequence's outputs alone equal its outputs in a batch, bit for bit.
TEST(DeviceAttentionWindow, SlidingWindowAndSoftcapMatchReference) {
  KAIRO_TEST_DEVICE(d);
  const int n_heads = 8, n_kv = 2, head_dim = 64, len = 200;
  const float scale = 0.125f;
  std::mt19937 rng(12);
  Cache c = make_cache(*d, rng, DType::F16, n_kv, head_dim, 2, len);
  std::vector<std::pair<int, int>> all = all_positions(0, 0, len);
  const auto s1 = all_positions(1, 0, 90);
  all.insert(all.end(), s1.begin(), s1.end());
  (void)write_kv(*d, c, rng, all);
  std::vector<std::pair<int, int>> tokens = all_positions(0, 150, 200);
  const auto t1 = all_positions(1, 0, 90);
  tokens.insert(tokens.end(), t1.begin(), t1.end());
  const Queries qs = make_queries(rng, tokens, n_heads, head_dim);
  const std::vector<float> sink_logits = random_floats(rng, n_heads, 3.0f);
  for (auto [window, softcap] : {std::pair{8, 0.0f}, {1, 0.0f}, {70, 0.0f}, {1000, 0.0f}, {0, 1.5f}, {8, 2.0f}}) {
    SCOPED_TRACE("window " + std::to_string(window) + " softcap " + std::to_string(softcap));
    const std::vector<float> got = device_attention(*d, c, qs, n_heads, scale, window, softcap);
    EXPECT_LE(rel_error(got, ref_attention(c, qs, n_heads, scale, window, softcap)), tolerance(DType::F16));
    // With attention sinks (gpt-oss).
    const std::vector<float> got_sinks = device_attention(*d, c, qs, n_heads, scale, window, softcap, sink_logits);
    EXPECT_LE(rel_error(got_sinks, ref_attention(c, qs, n_heads, scale, window, softcap, sink_logits)),
              tolerance(DType::F16));
    const Queries one = make_queries(rng, {{0, 180}}, n_heads, head_dim);
    Queries with_it = qs;
    with_it.positions.push_back(180);
    with_it.seq_idx.push_back(0);
    with_it.q.insert(with_it.q.end(), one.q.begin(), one.q.end());
    const std::vector<float> alone = device_attention(*d, c, one, n_heads, scale, window, softcap);
    const std::vector<float> batched = device_attention(*d, c, with_it, n_heads, scale, window, softcap);
    EXPECT_TRUE(testing::bitwise_equal(batched.data() + qs.q.size(), alone.data(), alone.size()));
  }
  d->free(c.k_dev);
  d->free(c.v_dev);
}

// Relaxed numerics let a device split long contexts across workgroups (CUDA's flash-decoding for few tokens):
// decode tokens over 1500 keys, with windows that leave most splits empty, sinks and soft-capping, still match.
TEST(DeviceAttentionWindow, RelaxedLongContextDecodeMatchesReference) {
  KAIRO_TEST_DEVICE(d);
  const int n_heads = 8, n_kv = 2, head_dim = 64, len = 1500;
  const float scale = 0.125f;
  std::mt19937 rng(13);
  Cache c = make_cache(*d, rng, DType::F16, n_kv, head_dim, 2, len);
  std::vector<std::pair<int, int>> all = all_positions(0, 0, len);
  const auto s1 = all_positions(1, 0, 700);
  all.insert(all.end(), s1.begin(), s1.end());
  (void)write_kv(*d, c, rng, all);
  const Queries qs = make_queries(rng, {{0, len - 1}, {1, 699}}, n_heads, head_dim);
  const std::vector<float> sink_logits = random_floats(rng, n_heads, 3.0f);
  for (auto [window, softcap] : {std::pair{0, 0.0f}, {128, 0.0f}, {700, 0.0f}, {128, 2.0f}}) {
    SCOPED_TRACE("window " + std::to_string(window) + " softcap " + std::to_string(softcap));
    for (const bool with_sinks : {false, true}) {
      const std::vector<float> sinks = with_sinks ? sink_logits : std::vector<float>{};
      const std::vector<float> got =
          device_attention(*d, c, qs, n_heads, scale, window, softcap, sinks, Numerics::Relaxed);
      EXPECT_LE(rel_error(got, ref_attention(c, qs, n_heads, scale, window, softcap, sinks)), tolerance(DType::F16))
          << (with_sinks ? "with sinks" : "");
    }
  }
  d->free(c.k_dev);
  d->free(c.v_dev);
}

// The contract for attention: a sequence's outputs are bit for bit the same alone or batched with other sequences,
// and whether its prompt was prefilled in one call or in chunks with the KV written between them.
TEST(DeviceAttentionInvariance, AloneVersusBatchedAndOneChunkVersusSeveral) {
  KAIRO_TEST_DEVICE(d);
  const int n_heads = 8, n_kv = 2, head_dim = 64, len = 150;
  const float scale = 0.125f;
  std::mt19937 rng(11);
  Cache c = make_cache(*d, rng, DType::F16, n_kv, head_dim, 3, len);
  std::vector<std::pair<int, int>> all;
  for (int seq = 0; seq < 3; ++seq) {
    const auto t = all_positions(seq, 0, len);
    all.insert(all.end(), t.begin(), t.end());
  }
  const auto kv_all = write_kv(*d, c, rng, all);

  // Sequence 0's whole prompt alone, then batched between sequences 1 and 2.
  const Queries alone = make_queries(rng, all_positions(0, 0, len), n_heads, head_dim);
  const std::vector<float> out_alone = device_attention(*d, c, alone, n_heads, scale);
  Queries batched = make_queries(rng, all_positions(1, 60, 100), n_heads, head_dim);
  const size_t a0 = batched.q.size();
  batched.positions.insert(batched.positions.end(), alone.positions.begin(), alone.positions.end());
  batched.seq_idx.insert(batched.seq_idx.end(), alone.seq_idx.begin(), alone.seq_idx.end());
  batched.q.insert(batched.q.end(), alone.q.begin(), alone.q.end());
  const Queries tail = make_queries(rng, all_positions(2, 140, 150), n_heads, head_dim);
  batched.positions.insert(batched.positions.end(), tail.positions.begin(), tail.positions.end());
  batched.seq_idx.insert(batched.seq_idx.end(), tail.seq_idx.begin(), tail.seq_idx.end());
  batched.q.insert(batched.q.end(), tail.q.begin(), tail.q.end());
  const std::vector<float> out_batched = device_attention(*d, c, batched, n_heads, scale);
  EXPECT_TRUE(testing::bitwise_equal(out_batched.data() + a0, out_alone.data(), out_alone.size()));

  // The same prompt in chunks of 50, 1, 63, 36 positions: a fresh cache with the same block table gets each
  // chunk's K/V by its own kv_write, then the chunk's queries attend.
  Cache c2 = make_cache(*d, rng, DType::F16, n_kv, head_dim, 3, len);
  c2.tables = c.tables;
  const size_t row = static_cast<size_t>(c.row());
  std::vector<float> chunked;
  int from = 0;
  for (int n : {50, 1, 63, 36}) {
    const auto rows_of = [&](const std::vector<float>& src) {  // sequence 0 comes first in `all`
      return std::vector<float>(src.begin() + static_cast<int64_t>(from * row),
                                src.begin() + static_cast<int64_t>((from + n) * row));
    };
    write_kv_values(*d, c2, all_positions(0, from, from + n), rows_of(kv_all.first), rows_of(kv_all.second));
    Queries part;
    part.positions.assign(alone.positions.begin() + from, alone.positions.begin() + from + n);
    part.seq_idx.assign(static_cast<size_t>(n), 0);
    part.q.assign(alone.q.begin() + static_cast<int64_t>(from) * n_heads * head_dim,
                  alone.q.begin() + static_cast<int64_t>(from + n) * n_heads * head_dim);
    const std::vector<float> o = device_attention(*d, c2, part, n_heads, scale);
    chunked.insert(chunked.end(), o.begin(), o.end());
    from += n;
  }
  ASSERT_EQ(chunked.size(), out_alone.size());
  EXPECT_TRUE(testing::bitwise_equal(chunked.data(), out_alone.data(), out_alone.size()));
  for (DeviceSpan s : {c.k_dev, c.v_dev, c2.k_dev, c2.v_dev}) d->free(s);
}

}  // namespace
}  // namespace kairo::kernels::device_ops
