// The split regexes of the models' Hugging Face pre-tokenizers (tokenizer.json), by `tokenizer.ggml.pre` name.
// Case-insensitive contraction groups are spelled out ('[sS]) as llama.cpp does, so Unicode case folding (e.g. the
// long s 'ſ' matching 's') cannot make the two disagree. Adding a pre-tokenizer = one line in kConfigs.
#include "tokenizer/pre_tokenizer.h"

#include <vector>

namespace kairo::tokenizer {
namespace {

#define KAIRO_GPT2_WORDS R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))"
#define KAIRO_CONTRACTIONS R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD]))"

const std::vector<const char*> kDefault = {R"([\p{P}\$\+<=>\^~\|]+)", KAIRO_GPT2_WORDS, R"(\p{N}+)",
                                           R"([0-9][0-9][0-9])"};
const std::vector<const char*> kGpt2 = {KAIRO_GPT2_WORDS};
const std::vector<const char*> kLlama3 = {
    KAIRO_CONTRACTIONS R"(|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"};
const std::vector<const char*> kQwen2 = {
    KAIRO_CONTRACTIONS R"(|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"};
const std::vector<const char*> kQwen35 = {
    KAIRO_CONTRACTIONS
    R"(|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"};
const std::vector<const char*> kDeepseekLlm = {
    "[\r\n]",
    "\\s?[A-Za-z\u00B5\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u01BA\u01BC-\u01BF\u01C4-\u0293\u0295-\u02AF\u0370-\u0373"
    "\u0376\u0377\u037B-\u037D\u037F\u0386\u0388-\u038A\u038C\u038E-\u03A1\u03A3-\u03F5\u03F7-\u0481\u048A-\u052F"
    "\u0531-\u0556\u10A0-\u10C5\u13A0-\u13F5\u13F8-\u13FD\u1C90-\u1CBA\u1CBD-\u1CBF\u1D00-\u1D2B\u1D6B-\u1D77"
    "\u1D79-\u1D9A\u1E00-\u1F15\u1F18-\u1F1D\u1F20-\u1F45\u1F48-\u1F4D\u1F50-\u1F57\u1F59\u1F5B\u1F5D\u1F5F-\u1F7D"
    "\u1F80-\u1FB4\u1FB6-\u1FBC\u1FBE\u1FC2-\u1FC4\u1FC6-\u1FCC\u1FD0-\u1FD3\u1FD6-\u1FDB\u1FE0-\u1FEC\u1FF2-\u1FF4"
    "\u1FF6-\u1FFC\u2102\u2107\u210A-\u2113\u2115\u2119-\u211D\u2124\u2126\u2128\u212A-\u212D\u212F-\u2134\u2139"
    "\u213C-\u213F\u2145-\u2149\u214E\u2183\u2184\u2C00-\u2C7B\u2C7E-\u2CE4\u2CEB-\u2CEE\u2CF2\u2CF3\uA640-\uA66D"
    "\uA680-\uA69B\uA722-\uA76F\uA771-\uA787\uA78B-\uA78E\uAB70-\uABBF\uFB00-\uFB06\uFB13-\uFB17\uFF21-\uFF3A"
    "\uFF41-\uFF5A\U00010400-\U0001044F\U000104B0-\U000104D3\U000104D8-\U000104FB\U00010C80-\U00010CB2"
    "\U00010CC0-\U00010CF2\U000118A0-\U000118DF\U0001E900-\U0001E943]+",
    "\\s?[!-/:-~\uFF01-\uFF0F\uFF1A-\uFF5E\u2018-\u201F\u3000-\u3002]+",
    "\\s+$",
    "[\u4E00-\u9FA5\u0800-\u4E00\uAC00-\uD7FF]+",
    "\\p{N}+",
};
const std::vector<const char*> kDeepseekCoder = {"[\r\n]", R"(\s?\p{L}+)", R"(\s?\p{P}+)",
                                                 "[\u4E00-\u9FA5\u0800-\u4E00\uAC00-\uD7FF]+", R"(\p{N})"};
const std::vector<const char*> kDeepseekV3 = {
    R"(\p{N}{1,3})",
    "[\u4E00-\u9FA5\u3040-\u309F\u30A0-\u30FF]+",
    R"([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
};
const std::vector<const char*> kFalcon = {R"([\p{P}\$\+<=>\^~\|`]+)", KAIRO_GPT2_WORDS, R"([0-9][0-9][0-9])"};
const std::vector<const char*> kStarcoder = {R"(\p{N})", KAIRO_GPT2_WORDS};
const std::vector<const char*> kPoro = {" ?[^(\\s|.,!?\u2026\u3002\uFF0C\u3001\u0964\u06D4\u060C)]+"};
const std::vector<const char*> kViking = {" ?[^(\\s|.,!?\u2026\u3002\uFF0C\u3001\u0964\u06D4\u060C)]+", R"(\p{N})"};
const std::vector<const char*> kTekken = {
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)"};
const std::vector<const char*> kGpt4o = {
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+)" KAIRO_CONTRACTIONS
    R"(?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*)" KAIRO_CONTRACTIONS
    R"(?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)"};
const std::vector<const char*> kBailingMoe = {
    R"('(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+)"};
const std::vector<const char*> kSeedCoder = {
    KAIRO_CONTRACTIONS R"(|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+)"};

//                            name             regexes         clean  ignore_merges add_bos
const PreTokenizerConfig kConfigs[] = {
    {"default", &kDefault, true, false, false},
    {"gpt-2", &kGpt2, true, false, false},
    {"phi-2", &kGpt2, true, false, false},
    {"mpt", &kGpt2, true, false, false},
    {"olmo", &kGpt2, true, false, false},
    {"jais", &kGpt2, true, false, false},
    {"exaone4", &kGpt2, true, false, false},
    {"gigachat", &kGpt2, true, false, false},
    {"jina-es", &kGpt2, true, false, false},
    {"jina-de", &kGpt2, true, false, false},
    {"jina-v1-en", &kGpt2, true, false, false},
    {"jina-v2-es", &kGpt2, true, false, false},
    {"jina-v2-de", &kGpt2, true, false, false},
    {"jina-v2-code", &kGpt2, true, false, false},
    {"roberta-bpe", &kGpt2, true, false, false},
    {"trillion", &kGpt2, false, false, false},
    {"granite-docling", &kGpt2, false, false, false},
    {"llama3", &kLlama3, true, true, true},
    {"llama-v3", &kLlama3, true, true, true},
    {"llama-bpe", &kLlama3, true, true, true},
    {"falcon3", &kLlama3, true, true, true},
    {"falcon-h1", &kLlama3, true, true, true},
    {"pixtral", &kLlama3, true, true, true},
    {"dbrx", &kLlama3, true, false, false},
    {"smaug-bpe", &kLlama3, true, false, false},
    {"chatglm-bpe", &kLlama3, true, false, false},
    {"glm4", &kLlama3, true, false, false},
    {"qwen2", &kQwen2, false, false, false},
    {"deepseek-r1-qwen", &kQwen2, false, false, false},
    {"megrez", &kQwen2, true, false, false},
    {"stablelm2", &kQwen2, true, false, false},
    {"hunyuan", &kQwen2, false, false, false},
    {"qwen35", &kQwen35, false, false, false},
    {"deepseek-llm", &kDeepseekLlm, false, false, false},
    {"deepseek-coder", &kDeepseekCoder, false, false, false},
    {"deepseek-v3", &kDeepseekV3, false, false, false},
    {"falcon", &kFalcon, true, false, false},
    {"starcoder", &kStarcoder, true, false, false},
    {"refact", &kStarcoder, true, false, false},
    {"command-r", &kStarcoder, false, false, false},
    {"smollm", &kStarcoder, false, false, false},
    {"codeshell", &kStarcoder, true, false, false},
    {"exaone", &kStarcoder, true, false, false},
    {"minerva-7b", &kStarcoder, true, false, false},
    {"poro-chat", &kPoro, false, false, false},
    {"bloom", &kPoro, true, false, false},
    {"gpt3-finnish", &kPoro, true, false, false},
    {"viking", &kViking, false, false, false},
    {"tekken", &kTekken, false, true, true},
    {"gpt-4o", &kGpt4o, false, false, false},
    {"llama4", &kGpt4o, false, false, false},
    {"bailingmoe", &kBailingMoe, false, false, false},
    {"bailingmoe2", &kBailingMoe, false, false, false},
    {"llada-moe", &kBailingMoe, false, false, false},
    {"seed-coder", &kSeedCoder, false, false, false},
};

}  // namespace

std::span<const PreTokenizerConfig> pre_tokenizer_configs() { return kConfigs; }

}  // namespace kairo::tokenizer
