#pragma once
// Small string helpers shared by error messages and printers.
#include <cstdarg>
#include <cstdint>
#include <string>

namespace kairo {

// printf-style formatting into a std::string.
std::string strprintf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// "1.23 GiB", "512 KiB", "17 B".
std::string human_bytes(uint64_t n_bytes);

// Quote a possibly-binary string for an error message: printable ASCII kept, other bytes as \xNN, cut at max_len.
std::string quote_for_error(const std::string& s, size_t max_len = 64);

}  // namespace kairo
