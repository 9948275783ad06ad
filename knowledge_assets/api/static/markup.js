// Text from the store made into HTML for the page: escaped, notes' addresses and sources,
// snippets with the query's terms highlighted, and tag links.
export function escape(text) {
  return String(text ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

// A note is its path and, since several sources may hold one path, its source: a/b.md?source=books.
// The vault's source names (no declared source may take them): a note of any other source shows
// its source beside its path, and a vault note's address is its path alone.
const VAULT_SOURCES = new Set(["local", "github"]);

// Each segment of the path is encoded on its own; a "." or ".." segment is refused, since the
// browser would resolve it (even written %2E%2E) and fetch another address than the note's:
// /notes/..%2F..%2Fetc%2Fpasswd asked for /etc/passwd.
export function noteRef(id, source) {
  const segments = String(id).split("/");
  if (segments.some((s) => s === "." || s === "..")) throw new Error("このパスのノートはありません（. や .. は使えません）: " + id);
  const named = source && !VAULT_SOURCES.has(source);
  return segments.map(encodeURIComponent).join("/") + (named ? "?source=" + encodeURIComponent(source) : "");
}

export function noteUrl(id, source, heading) {
  // With a heading, the note view opens at that section (note.js finds it by its text).
  const at = heading ? "#" + encodeURIComponent(heading) : "";
  try { return "/notes/" + noteRef(id, source) + at; } catch { return "#"; }
}

export function sourceLabel(source) {
  return source && !VAULT_SOURCES.has(source) ? ` <span class="source">${escape(source)}</span>` : "";
}

// Snippets and previews: code fences, HTML tags, code spans' backticks, bold's ** and the markers of
// quotes, callouts (> [!tip], :::tip), highlights (==text==) and block ids (^id) dropped, links
// and images (Markdown's and wikilinks) shown as their text, whitespace folded. The text of
// <script> and <style> elements, which the note view never shows, is left out too.
export function cleanText(text) {
  return withoutHidden(String(text || ""))
    .replace(/^#{1,6}\s+/gm, "").replace(/^```.*$/gm, "")
    .replace(/!?\[\[([^\]|\n]*)\|([^\]\n]*)\]\]/g, "$2").replace(/!?\[\[([^\]\n]*)\]\]/g, "$1")
    .replace(/!?\[([^\]\n]*)\]\([^)\n]*\)/g, "$1").replace(/<\/?[A-Za-z][^<>\n]*>/g, " ").replace(/`+/g, "").replace(/\*\*/g, "")
    .replace(/^[ \t]*(?:>[ \t]?)+(?:\[![^\]\s]+\][+-]?[ \t]*)?/gm, "").replace(/^[ \t]*:::.*$/gm, "")
    .replace(/==([^\s=](?:[^=\n]*[^\s=])?)==/g, "$1").replace(/[ \t]\^[A-Za-z0-9-]+[ \t]*$/gm, "")
    .replace(/\s+/g, " ").trim();
}

// "<style/>" opens nothing; in a code fence, or right after a code span's backtick, a tag is
// code shown as written (core/plain_text.py reads a note's text the same way).
const HIDDEN_OPEN = /<(script|style)(?:[ \t][^<>]*)?(?<!\/)>/gi;

function withoutHidden(text) {
  let fence = "", hidden = "";
  return text.split("\n").map((line) => {
    if (!hidden) {
      const opened = line.match(/^[ \t]*(```|~~~)/);
      if (fence || opened) {
        if (!fence) fence = opened[1];
        else if (opened && opened[1] === fence) fence = "";
        return line;
      }
      if (!line.includes("<")) return line;
    }
    [line, hidden] = unhidden(line, hidden);
    return line;
  }).join("\n");
}

// The line without the elements' text, and the tag still open at its end ("" for none).
function unhidden(line, hidden) {
  let out = "", at = 0;
  for (;;) {
    if (hidden) {
      const close = new RegExp(`</${hidden}[ \t]*>`, "gi");
      close.lastIndex = at;
      const closed = close.exec(line);
      if (!closed) return [out, hidden];
      at = closed.index + closed[0].length;
      hidden = "";
    }
    HIDDEN_OPEN.lastIndex = at;
    let opener;
    while ((opener = HIDDEN_OPEN.exec(line)) && line[opener.index - 1] === "`");
    if (!opener) return [out + line.slice(at), ""];
    out += line.slice(at, opener.index);
    at = opener.index + opener[0].length;
    hidden = opener[1].toLowerCase();
  }
}

function highlight(text, terms) {
  const words = [...new Set(terms)].filter((t) => t.length > 0).sort((a, b) => b.length - a.length);
  if (!words.length) return escape(text);
  const pattern = new RegExp("(" + words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|") + ")", "i");
  // The terms are found in the text before it is escaped: in the escaped text "39" matched the
  // &#39; of an apostrophe (and "amp" R&D's &amp;), and the split entity showed as text.
  // split() with the pattern's group puts the matches at the odd places.
  const html = String(text ?? "").split(pattern).map((part, i) => (i % 2 ? "<mark>" + escape(part) + "</mark>" : escape(part))).join("");
  // Terms that meet (ラー + メン) are one highlight, not two with a gap between.
  return html.replace(/<\/mark><mark>/g, "");
}

export function snippet(text, terms, size = 160) {
  const flat = cleanText(text);
  const lower = flat.toLowerCase();
  const at = Math.max(0, Math.min(...terms.map((t) => lower.indexOf(t.toLowerCase())).filter((i) => i >= 0).concat([0])) - 40);
  const cut = flat.slice(at, at + size);
  return (at > 0 ? "…" : "") + highlight(cut, terms) + (at + size < flat.length ? "…" : "");
}

// A note in a list of results: its title, linking to it, then its path (and source).
export function noteHeading(note) {
  return `<h3>${noteLink(note)}<span class="path">${escape(note.id)}${sourceLabel(note.source)}</span></h3>`;
}

// A link to a note by its title (its path when it has none).
export function noteLink(note) {
  return `<a href="${noteUrl(note.id, note.source)}">${escape(note.title || note.id)}</a>`;
}

// A tag links to the list of notes carrying it (the search page with ?tag= and no query).
export function tagChips(tags) {
  return (tags || []).map((t) => `<a class="tag" href="/?tag=${encodeURIComponent(t)}">#${escape(t)}</a>`).join("");
}
