#include "server/web_ui.h"

#include <string>

namespace kairo::server {

namespace {

constexpr std::string_view kPrefix = "/ui/";

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// If-None-Match (RFC 9110 §13.1.2): "*" or a list of entity tags, compared weakly (a W/ prefix is ignored).
bool etag_matches(std::string_view if_none_match, const std::string& quoted_etag) {
  while (!if_none_match.empty()) {
    const size_t comma = if_none_match.find(',');
    std::string_view tag = trim(if_none_match.substr(0, comma));
    if (tag == "*") return true;
    if (tag.substr(0, 2) == "W/") tag.remove_prefix(2);
    if (tag == quoted_etag) return true;
    if (comma == std::string_view::npos) break;
    if_none_match.remove_prefix(comma + 1);
  }
  return false;
}

}  // namespace

bool is_web_ui_path(std::string_view path) { return path == "/" || path.substr(0, kPrefix.size()) == kPrefix; }

const EmbeddedFile* find_web_ui_file(std::string_view path) {
  std::string_view name;
  if (path == "/") {
    name = "index.html";
  } else if (path.substr(0, kPrefix.size()) == kPrefix) {
    name = path.substr(kPrefix.size());
  } else {
    return nullptr;
  }
  // Names are matched exactly against the embedded list, so "..", "%2e" or a second "/" can only miss.
  for (const EmbeddedFile& f : embedded_web_files()) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

std::string_view web_content_type(std::string_view file_name) {
  if (ends_with(file_name, ".html")) return "text/html; charset=utf-8";
  if (ends_with(file_name, ".js")) return "text/javascript; charset=utf-8";
  if (ends_with(file_name, ".css")) return "text/css; charset=utf-8";
  if (ends_with(file_name, ".svg")) return "image/svg+xml";
  if (ends_with(file_name, ".png")) return "image/png";
  if (ends_with(file_name, ".json")) return "application/json";
  return "application/octet-stream";
}

HttpResponse web_ui_response(const EmbeddedFile& file, std::string_view if_none_match) {
  std::string etag = "\"";  // appended, not `"\"" + ...`: GCC 12 warns falsely (-Wrestrict) on that form
  etag.append(file.etag).push_back('"');
  HttpResponse resp;
  resp.headers = {{"ETag", etag},
                  {"Cache-Control", "no-cache"},
                  {"Content-Security-Policy", std::string(kWebUiContentSecurityPolicy)},
                  {"X-Content-Type-Options", "nosniff"},
                  {"X-Frame-Options", "DENY"},
                  {"Referrer-Policy", "no-referrer"}};
  if (etag_matches(if_none_match, etag)) {
    resp.status = 304;
    resp.content_type.clear();
    return resp;
  }
  resp.content_type = std::string(web_content_type(file.name));
  resp.body = std::string(file.bytes);
  return resp;
}

}  // namespace kairo::server
