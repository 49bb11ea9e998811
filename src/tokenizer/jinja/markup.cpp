#include "tokenizer/jinja/markup.h"

#include "tokenizer/jinja/interp.h"

namespace kairo::jinja {

std::string html_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

Value escape_markup(const Value& v) {
  if (v.is_markup()) return v;
  return Value::markup(html_escape(to_str(v)));
}

Value concat_markup(Interp& in, const Value& a, const Value& b) {
  const std::string sa = a.is_markup() ? a.str() : html_escape(a.str());
  const std::string sb = b.is_markup() ? b.str() : html_escape(b.str());
  in.check_string_size(sa.size() + sb.size());
  return Value::markup(sa + sb);
}

}  // namespace kairo::jinja
