#pragma once
// markupsafe's Markup as a chat template can see it. Hugging Face renders with autoescape off, so output is never
// escaped implicitly, but Markup's own operators still escape: `|safe` and `|escape` return Markup, and
//   Markup + str, str + Markup      escape the plain side        ('<a>'|safe + '<b>'  ->  <a>&lt;b&gt;)
//   Markup % args, Markup|format    escape the arguments' text   ('%s'|safe % '<'     ->  &lt;)
//   Markup * n                      stays Markup
//   x is escaped                    true for Markup
// With autoescape off `~`, join and {% set %} blocks build plain str, as here. Python's Markup also survives its
// str methods, the text filters and indexing ('<'|safe|upper); here those return a plain str, which only a later
// `+` with a plain str could tell apart.
#include <string>

#include "tokenizer/jinja/value.h"

namespace kairo::jinja {

// markupsafe.escape's replacements: & < > " ' -> &amp; &lt; &gt; &#34; &#39;.
std::string html_escape(const std::string& text);

// markupsafe.escape(v): Markup unchanged, anything else its str() escaped, as Markup.
Value escape_markup(const Value& v);

// a + b for two strings at least one of which is Markup: the plain one escaped, the result Markup.
Value concat_markup(Interp& in, const Value& a, const Value& b);

}  // namespace kairo::jinja
