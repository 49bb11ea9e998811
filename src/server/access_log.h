#pragma once
// The structured access log: one JSON object per request, one line, on stderr (written whole under a lock, so lines
// from concurrent requests never interleave).
#include <cstdint>
#include <cstdio>
#include <string>

namespace kairo::server {

struct AccessLogEntry {
  std::string request_id;
  std::string remote;
  std::string method;
  std::string path;
  int status = 0;
  double duration_ms = 0;
  bool stream = false;
  bool client_disconnected = false;
  int prompt_tokens = -1;       // -1: not a generation request
  int completion_tokens = -1;
  std::string error;            // the error message when status >= 400
};

std::string format_access_log(const AccessLogEntry& entry, int64_t unix_ms);
void write_access_log(const AccessLogEntry& entry, std::FILE* out = stderr);

}  // namespace kairo::server
