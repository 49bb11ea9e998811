// Element access to a KV cache buffer `name` (uint[]) in the dtype chosen by KV_F32 / KV_F16 / KV_BF16.
#if defined(KV_F32)
#define KV_LOAD(buf, e) uintBitsToFloat(buf[e])
#elif defined(KV_F16)
#define KV_LOAD(buf, e) f16_bits_to_f32((buf[(e) >> 1] >> (((e) & 1u) << 4)) & 0xffffu)
#elif defined(KV_BF16)
#define KV_LOAD(buf, e) bf16_bits_to_f32((buf[(e) >> 1] >> (((e) & 1u) << 4)) & 0xffffu)
#else
#error "define one KV_*"
#endif

// An activation rounded to the KV dtype (as the reference does before it meets the cache).
float round_like_kv(float x) {
#if defined(KV_F16)
  return f16_bits_to_f32(f32_to_f16_bits(x));
#elif defined(KV_BF16)
  return bf16_bits_to_f32(f32_to_bf16_bits(x));
#else
  return x;
#endif
}
