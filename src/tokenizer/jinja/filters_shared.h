#pragma once
// What the filter files share: the argument readers every group uses and the hook through which each group
// (filters_text.cpp, filters_sequence.cpp, filters_value.cpp) adds its filters to the table in filters.cpp.
#include <cstdint>
#include <string>
#include <unordered_map>

#include "tokenizer/jinja/interp.h"

namespace kairo::jinja::detail {

using FilterTable = std::unordered_map<std::string, FilterFn>;

// An optional integer argument: `fallback` when absent, undefined or none; `what` names it in the error.
int64_t int_arg(const Value* v, int64_t fallback, const char* what);
// An optional argument as text (Python str()); `fallback` when absent or undefined.
std::string str_arg(const Value* v, const std::string& fallback);

void add_text_filters(FilterTable& table);
void add_sequence_filters(FilterTable& table);
void add_value_filters(FilterTable& table);

}  // namespace kairo::jinja::detail
