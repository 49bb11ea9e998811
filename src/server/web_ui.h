#pragma once
// The browser chat UI: GET / is web/index.html and GET /ui/<name> the other files under web/ (script, style, icon).
// Public, like /health: the files hold no data, and the API calls the page makes carry the key the user gives it.
// `kairo serve --no-webui` turns both off (404).
#include <optional>
#include <string_view>

#include "server/http/http_types.h"
#include "server/web_assets.h"

namespace kairo::server {

// Sent with every UI file. No inline script or style anywhere; scripts, styles, images and API calls from this
// origin only; innerHTML only through the one Trusted Types policy (the markdown renderer's, which escapes first);
// no framing, no <base>, no form posts.
inline constexpr std::string_view kWebUiContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'; require-trusted-types-for 'script'; "
    "trusted-types kairo-markdown";

// True when the path belongs to the UI ("/" or "/ui/..."), whether or not such a file exists.
bool is_web_ui_path(std::string_view path);

// The embedded file served at this URL path, or null.
const EmbeddedFile* find_web_ui_file(std::string_view path);

// The Content-Type for a file name, by its extension; "application/octet-stream" for an unknown one.
std::string_view web_content_type(std::string_view file_name);

// 200 with the file, or 304 (no body) when the request's If-None-Match names its ETag. Browsers revalidate every
// time (Cache-Control: no-cache), so a new binary's UI is never mixed with an old cached script.
HttpResponse web_ui_response(const EmbeddedFile& file, std::string_view if_none_match);

}  // namespace kairo::server
