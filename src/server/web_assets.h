#pragma once
// The files of the browser chat UI (web/ in the source tree), compiled into the binary by
// cmake/embed_web_assets.cmake so `kairo serve` needs nothing beside it and works offline.
#include <span>
#include <string_view>

namespace kairo::server {

struct EmbeddedFile {
  std::string_view name;  // the file's name under web/ ("app.js")
  std::string_view etag;  // 16 hex digits of its SHA-256 (unquoted)
  std::string_view bytes;
};

// Every file under web/, in name order (generated source).
std::span<const EmbeddedFile> embedded_web_files();

}  // namespace kairo::server
