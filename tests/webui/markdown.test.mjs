// The web UI's markdown renderer (web/markdown.js): what it renders, and that model output can never become markup
// of its own: every test of the second kind checks the exact HTML, so an escape that goes missing fails here.
//   node --test tests/webui/markdown.test.mjs
import assert from "node:assert/strict";
import { test } from "node:test";

import { escapeHtml, isSafeUrl, renderMarkdown } from "../../web/markdown.js";

const md = renderMarkdown;

test("paragraphs, line breaks, emphasis and inline code", () => {
  assert.equal(md("Hello **bold** and *it* and _it2_ and __b2__ and ~~gone~~"),
    "<p>Hello <strong>bold</strong> and <em>it</em> and <em>it2</em> and <strong>b2</strong> and <del>gone</del></p>");
  assert.equal(md("one\ntwo\n\nthree"), "<p>one<br>two</p><p>three</p>");
  assert.equal(md("use `a **b** <c>` here"), "<p>use <code>a **b** &lt;c&gt;</code> here</p>");
  assert.equal(md("snake_case_name stays"), "<p>snake_case_name stays</p>");
  assert.equal(md("2 * 3 * 4"), "<p>2 * 3 * 4</p>");
});

test("headings, rules, quotes", () => {
  assert.equal(md("# Title\n### Sub ###"), "<h1>Title</h1><h3>Sub</h3>");
  assert.equal(md("---"), "<hr>");
  assert.equal(md("> quoted\n> more"), "<blockquote><p>quoted<br>more</p></blockquote>");
  assert.equal(md("#nospace"), "<p>#nospace</p>");
});

test("fenced code keeps its text verbatim, escaped, and an unclosed fence runs to the end", () => {
  const copy = '<button type="button" class="copy-code">Copy</button>';
  assert.equal(md("```js\nif (a < b && c) { x = '**'; }\n```\nafter"),
    `<div class="code-block"><div class="code-head"><span>js</span>${copy}</div>` +
    `<pre><code class="language-js">if (a &lt; b &amp;&amp; c) { x = &#39;**&#39;; }</code></pre></div><p>after</p>`);
  assert.equal(md("```\nstill streaming\n<b>"),
    `<div class="code-block"><div class="code-head"><span>code</span>${copy}</div>` +
    "<pre><code>still streaming\n&lt;b&gt;</code></pre></div>");
  // A language name that is not a plain word is dropped, not put in the attribute.
  assert.match(md('```x"onclick="alert(1)\ncode\n```'), /<pre><code>code<\/code><\/pre>/);
});

test("lists, ordered and nested", () => {
  assert.equal(md("- a\n- b\n\n1. one\n2. two"), "<ul><li>a</li><li>b</li></ul><ol><li>one</li><li>two</li></ol>");
  assert.equal(md("3. three\n4. four"), '<ol start="3"><li>three</li><li>four</li></ol>');
  assert.equal(md("- outer\n  - inner\n- next"),
    "<ul><li><p>outer</p><ul><li>inner</li></ul></li><li>next</li></ul>");
  assert.equal(md("text\n- item"), "<p>text</p><ul><li>item</li></ul>");
});

test("tables", () => {
  assert.equal(md("| a | b |\n|:--|--:|\n| 1 | **2** |"),
    '<div class="table-wrap"><table><thead><tr><th class="align-left">a</th><th class="align-right">b</th></tr></thead>' +
    '<tbody><tr><td class="align-left">1</td><td class="align-right"><strong>2</strong></td></tr></tbody></table></div>');
});

test("links only for http(s) and mailto", () => {
  const a = (href) => `<a href="${href}" target="_blank" rel="noopener noreferrer">`;
  assert.equal(md("[site](https://example.com/a?b=1&c=2)"), `<p>${a("https://example.com/a?b=1&amp;c=2")}site</a></p>`);
  assert.equal(md("see https://example.com."), `<p>see ${a("https://example.com")}https://example.com</a>.</p>`);
  assert.equal(md("[mail](mailto:x@example.com)"), `<p>${a("mailto:x@example.com")}mail</a></p>`);
  assert.equal(md("[x](javascript:alert(1))"), "<p>[x](javascript:alert(1))</p>");
  assert.equal(md("[x](javascript:alert)"), "<p>x</p>");
  assert.equal(md("[x](JaVaScRiPt:alert)"), "<p>x</p>");
  assert.equal(md("[x](data:text/html,hi)"), "<p>x</p>");
  assert.equal(md("[x](&#106;avascript:alert)"), "<p>x</p>");
  assert.equal(md("[x](vbscript:msgbox)"), "<p>x</p>");
  assert.equal(md("[x](//evil.example)"), "<p>x</p>");
});

test("model output cannot inject markup", () => {
  assert.equal(md("<script>alert(1)</script>"), "<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>");
  assert.equal(md('<img src=x onerror="alert(1)">'), "<p>&lt;img src=x onerror=&quot;alert(1)&quot;&gt;</p>");
  // A quote in a URL cannot end the href attribute.
  assert.equal(md('[x](https://a.example/"onmouseover="alert)'),
    '<p><a href="https://a.example/&quot;onmouseover=&quot;alert" target="_blank" rel="noopener noreferrer">x</a></p>');
  assert.equal(md('https://a.example/"><img src=x>'),
    '<p><a href="https://a.example/" target="_blank" rel="noopener noreferrer">https://a.example/</a>' +
    "&quot;&gt;&lt;img src=x&gt;</p>");
  // Placeholders of the renderer's own are not reachable from the input.
  assert.equal(md("\u00000\u0000 `c`"), "<p>0 <code>c</code></p>");
  assert.equal(md("# <b>h</b>\n- <i>l</i>\n> <u>q</u>"),
    "<h1>&lt;b&gt;h&lt;/b&gt;</h1><ul><li>&lt;i&gt;l&lt;/i&gt;</li></ul><blockquote><p>&lt;u&gt;q&lt;/u&gt;</p></blockquote>");
  assert.equal(md("| <a> |\n|---|\n| <b> |"),
    '<div class="table-wrap"><table><thead><tr><th>&lt;a&gt;</th></tr></thead><tbody><tr><td>&lt;b&gt;</td></tr></tbody>' +
    "</table></div>");
});

test("random input never yields a tag outside the renderer's own", () => {
  const allowed = new Set(["p", "br", "strong", "em", "del", "code", "pre", "div", "span", "button", "a", "h1", "h2",
    "h3", "h4", "h5", "h6", "hr", "blockquote", "ul", "ol", "li", "table", "thead", "tbody", "tr", "th", "td"]);
  const alphabet = ["<", ">", "&", '"', "'", "`", "*", "_", "~", "[", "]", "(", ")", "#", "-", "|", ":", "\n", " ",
    "a", "1", ".", "https://", "javascript:", "<img src=x onerror=alert(1)>", "<script>", "\u0000", "```"];
  let seed = 12345;
  const rand = (n) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  for (let k = 0; k < 3000; k++) {
    let s = "";
    for (let n = rand(40); n > 0; n--) s += alphabet[rand(alphabet.length)];
    const html = md(s);
    for (const m of html.matchAll(/<\/?([a-zA-Z][a-zA-Z0-9]*)([^>]*)>/g)) {
      assert.ok(allowed.has(m[1]), `tag ${m[0]} from ${JSON.stringify(s)}`);
      assert.doesNotMatch(m[2], /\son\w+=/i, `handler in ${m[0]} from ${JSON.stringify(s)}`);
      if (m[1] === "a" && m[2]) assert.match(m[2], /^ href="(https?:\/\/|mailto:)[^"<>]*" target/, m[0]);
    }
  }
});

test("escapeHtml and isSafeUrl", () => {
  assert.equal(escapeHtml(`<a href="x">'&'</a>`), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  assert.ok(isSafeUrl("https://x"));
  assert.ok(!isSafeUrl(" javascript:x"));
  assert.ok(!isSafeUrl("ftp://x"));
});
