// A small markdown renderer for model output: fenced code, inline code, bold, italic, strikethrough, headings,
// lists, block quotes, tables, rules and links. Safe by construction: every piece of the input is HTML-escaped
// before anything else looks at it, the only tags in the output are the fixed ones written here, and a link is made
// only for http(s) and mailto URLs. The page applies the result through its one Trusted Types policy.
// Pure functions of strings, so tests/webui/markdown.test.mjs runs them under node.

const ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

// On escaped text: the scheme is still readable (escaping leaves letters and ':' alone), and an encoded scheme
// such as "&#106;avascript:" starts with "&" and is refused.
export function isSafeUrl(escapedUrl) {
  return /^(https?:\/\/|mailto:)/i.test(escapedUrl);
}

const MAX_DEPTH = 8;  // nested quotes and lists beyond this render as text

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)[^`]*$/;
const HEADING = /^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/;
const RULE = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const QUOTE = /^ {0,3}> ?(.*)$/;
const LIST_ITEM = /^( *)([-*+]|\d{1,9}[.)])[ \t]+(.*)$/;
const TABLE_DIVIDER = /^ *\|? *:?-+:? *(\| *:?-+:? *)*\|? *$/;

// Placeholders for finished inline pieces (code spans, links) so later patterns never look inside them. NUL never
// survives into the text: renderMarkdown removes it from the input.
const HOLE = "\u0000";

function renderInline(raw) {
  const holes = [];
  const hold = (html) => `${HOLE}${holes.push(html) - 1}${HOLE}`;
  let out = "";
  let rest = raw;
  // Code spans first, on the raw text: their content is only escaped.
  const code = /(`+)([\s\S]*?[^`])\1(?!`)/;
  for (let m = code.exec(rest); m; m = code.exec(rest)) {
    out += escapeHtml(rest.slice(0, m.index));
    out += hold(`<code>${escapeHtml(m[2].trim() || m[2])}</code>`);
    rest = rest.slice(m.index + m[0].length);
  }
  out += escapeHtml(rest);

  out = out.replace(/\[([^\]\n]+)\]\(([^\s()\u0000]+)\)/g, (whole, label, url) =>
    isSafeUrl(url) ? hold(`<a href="${url}" target="_blank" rel="noopener noreferrer">`) + label + hold("</a>") : label);
  // A bare URL ends at a space or at an escaped quote or bracket (&amp; is the only entity a URL keeps).
  out = out.replace(/(^|[\s(])(https?:\/\/(?:&amp;|[^\s&\u0000])*(?:&amp;|[^\s&\u0000.,:;!?)]))/g, (whole, before, url) =>
    before + hold(`<a href="${url}" target="_blank" rel="noopener noreferrer">${url}</a>`));
  out = out
    .replace(/\*\*(?=\S)([\s\S]*?\S)\*\*/g, "<strong>$1</strong>")
    .replace(/(^|[^\w])__(?=\S)([\s\S]*?\S)__(?![\w])/g, "$1<strong>$2</strong>")
    .replace(/\*(?=[^\s*])([^*\n]*?[^\s*])\*/g, "<em>$1</em>")
    .replace(/(^|[^\w])_(?=[^\s_])([^_\n]*?[^\s_])_(?![\w])/g, "$1<em>$2</em>")
    .replace(/~~(?=\S)([^~\n]*?\S)~~/g, "<del>$1</del>")
    .replace(/\n/g, "<br>");
  return out.replace(/\u0000(\d+)\u0000/g, (whole, i) => holes[Number(i)]);
}

function codeBlock(lang, body) {
  const name = /^[\w+#.-]{1,24}$/.test(lang) ? lang : "";
  const cls = name ? ` class="language-${escapeHtml(name)}"` : "";
  return `<div class="code-block"><div class="code-head"><span>${escapeHtml(name || "code")}</span>` +
    `<button type="button" class="copy-code">Copy</button></div><pre><code${cls}>${escapeHtml(body)}</code></pre></div>`;
}

function splitRow(line) {
  let s = line.trim();
  if (s.startsWith("|")) s = s.slice(1);
  if (s.endsWith("|") && !s.endsWith("\\|")) s = s.slice(0, -1);
  return s.split(/(?<!\\)\|/).map((cell) => cell.trim().replace(/\\\|/g, "|"));
}

function table(header, divider, rows) {
  const aligns = splitRow(divider).map((d) =>
    d.startsWith(":") && d.endsWith(":") ? "center" : d.endsWith(":") ? "right" : d.startsWith(":") ? "left" : "");
  const cell = (tag, text, i) => `<${tag}${aligns[i] ? ` class="align-${aligns[i]}"` : ""}>${renderInline(text)}</${tag}>`;
  const head = splitRow(header).map((c, i) => cell("th", c, i)).join("");
  const body = rows.map((r) => `<tr>${splitRow(r).slice(0, aligns.length).map((c, i) => cell("td", c, i)).join("")}</tr>`);
  return `<div class="table-wrap"><table><thead><tr>${head}</tr></thead><tbody>${body.join("")}</tbody></table></div>`;
}

function isBlockStart(line, next) {
  return FENCE.test(line) || HEADING.test(line) || RULE.test(line) || QUOTE.test(line) || LIST_ITEM.test(line) ||
    (line.includes("|") && next !== undefined && TABLE_DIVIDER.test(next) && next.includes("-"));
}

function renderBlocks(lines, depth) {
  const out = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (/^\s*$/.test(line)) {
      i++;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      // An unclosed fence (a reply still streaming) runs to the end.
      const marker = fence[1];
      const close = new RegExp(`^ {0,3}${marker[0] === "`" ? "`" : "~"}{${marker.length},}\\s*$`);
      const body = [];
      for (i++; i < lines.length && !close.test(lines[i]); i++) body.push(lines[i]);
      i++;
      out.push(codeBlock(fence[2], body.join("\n")));
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      const level = heading[1].length;
      out.push(`<h${level}>${renderInline(heading[2])}</h${level}>`);
      i++;
      continue;
    }
    if (RULE.test(line)) {
      out.push("<hr>");
      i++;
      continue;
    }
    if (depth < MAX_DEPTH && QUOTE.test(line)) {
      const inner = [];
      for (; i < lines.length && QUOTE.test(lines[i]); i++) inner.push(QUOTE.exec(lines[i])[1]);
      out.push(`<blockquote>${renderBlocks(inner, depth + 1)}</blockquote>`);
      continue;
    }
    const item = LIST_ITEM.exec(line);
    if (depth < MAX_DEPTH && item) {
      const indent = item[1].length;
      const ordered = /\d/.test(item[2]);
      const items = [];
      while (i < lines.length) {
        const m = LIST_ITEM.exec(lines[i]);
        if (!m || m[1].length !== indent || /\d/.test(m[2]) !== ordered) break;
        const body = [m[3]];
        // Continuation: more-indented lines (a nested list among them), or blank lines followed by one.
        for (i++; i < lines.length; i++) {
          const l = lines[i];
          const indented = /^\s*$/.test(l) ? false : l.length - l.trimStart().length > indent;
          if (indented) {
            body.push(l.slice(Math.min(indent + 2, l.length - l.trimStart().length)));
          } else if (/^\s*$/.test(l) && i + 1 < lines.length &&
                     lines[i + 1].length - lines[i + 1].trimStart().length > indent && !/^\s*$/.test(lines[i + 1])) {
            body.push("");
          } else {
            break;
          }
        }
        items.push(body);
      }
      const start = ordered ? parseInt(item[2], 10) : 1;
      const open = ordered ? (start !== 1 ? `<ol start="${start}">` : "<ol>") : "<ul>";
      const lis = items.map((body) =>
        body.length === 1 ? `<li>${renderInline(body[0])}</li>` : `<li>${renderBlocks(body, depth + 1)}</li>`);
      out.push(`${open}${lis.join("")}${ordered ? "</ol>" : "</ul>"}`);
      continue;
    }
    if (line.includes("|") && i + 1 < lines.length && TABLE_DIVIDER.test(lines[i + 1]) && lines[i + 1].includes("-")) {
      const header = line;
      const divider = lines[i + 1];
      const rows = [];
      for (i += 2; i < lines.length && lines[i].includes("|") && !/^\s*$/.test(lines[i]); i++) rows.push(lines[i]);
      out.push(table(header, divider, rows));
      continue;
    }
    const para = [line];
    for (i++; i < lines.length && !/^\s*$/.test(lines[i]) && !isBlockStart(lines[i], lines[i + 1]); i++) {
      para.push(lines[i]);
    }
    out.push(`<p>${renderInline(para.map((l) => l.trim()).join("\n"))}</p>`);
  }
  return out.join("");
}

// Markdown text to HTML that is safe to assign to innerHTML.
export function renderMarkdown(text) {
  const lines = String(text ?? "").replace(/\u0000/g, "").replace(/\r\n?/g, "\n").split("\n");
  return renderBlocks(lines, 0);
}
