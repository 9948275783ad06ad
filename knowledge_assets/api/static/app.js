// The search page: search, ask (streamed answer with citations), past answers reopened from the
// history, and the note view.
// Plain DOM code; every text from the store goes through textContent or escape(), and a note's
// body arrives as HTML the server rendered safely (GET /api/notes/{id}, field html).
"use strict";

const params = new URLSearchParams(location.search);
if (params.get("token")) sessionStorage.setItem("ka-token", params.get("token"));
const token = sessionStorage.getItem("ka-token");
const $ = (id) => document.getElementById(id);
let tagsLoaded = Promise.resolve(); // the tag list, which a restored search may filter by

function headers() {
  const h = { "Content-Type": "application/json" };
  if (token) h.Authorization = "Bearer " + token;
  return h;
}

// What a failed request says: the API's own error, or FastAPI's validation details (a list of
// {loc, msg}), which used to show as "[object Object]".
function failure(data, res) {
  if (typeof data.error === "string") return data.error;
  if (Array.isArray(data.detail)) return data.detail.map((d) => [(d.loc || []).slice(1).join("."), d.msg].filter(Boolean).join(": ")).join("; ");
  if (typeof data.detail === "string") return data.detail;
  return res.statusText;
}

// What the page says of a failed request, in Japanese: the usual refusals in words of their
// own, anything else with the server's message.
function japanese(err) {
  if (err.status === 422 && /at most 2000 characters/.test(err.message)) return "検索語が長すぎます。2,000 文字までにしてください。";
  if (err.status === 401) return "このサーバーにはアクセス用のトークンが必要です（?token=… を付けて開いてください）。";
  if (err.status === 503) return "ノートの保存先に接続できません。サーバーを確認してから、もう一度試してください。";
  if (err instanceof TypeError) return "サーバーに接続できません。サーバーが動いているか確認してください。";
  return err.message;
}

async function api(path, body) {
  const res = await fetch(path, body === undefined ? { headers: headers() } : { method: "POST", headers: headers(), body: JSON.stringify(body) });
  const data = await res.json().catch(() => ({}));
  if (!res.ok) throw Object.assign(new Error(failure(data, res)), { status: res.status });
  return data;
}

function escape(text) {
  return String(text ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

// A note is its path and, since several sources may hold one path, its source: a/b.md?source=books.
// The vault's source names (no declared source may take them): a note of any other source shows
// its source beside its path, and a vault note's address is its path alone.
const VAULT_SOURCES = new Set(["local", "github"]);

// Each segment of the path is encoded on its own; a "." or ".." segment is refused, since the
// browser would resolve it (even written %2E%2E) and fetch another address than the note's:
// /notes/..%2F..%2Fetc%2Fpasswd asked for /etc/passwd.
function noteRef(id, source) {
  const segments = String(id).split("/");
  if (segments.some((s) => s === "." || s === "..")) throw new Error("このパスのノートはありません（. や .. は使えません）: " + id);
  const named = source && !VAULT_SOURCES.has(source);
  return segments.map(encodeURIComponent).join("/") + (named ? "?source=" + encodeURIComponent(source) : "");
}

function noteUrl(id, source) {
  try { return "/notes/" + noteRef(id, source); } catch { return "#"; }
}

function sourceLabel(source) {
  return source && !VAULT_SOURCES.has(source) ? ` <span class="source">${escape(source)}</span>` : "";
}

// Snippets and previews: code fences, HTML tags, code spans' backticks, bold's ** and the markers of
// quotes, callouts (> [!tip], :::tip), highlights (==text==) and block ids (^id) dropped, links
// and images (Markdown's and wikilinks) shown as their text, whitespace folded.
function cleanText(text) {
  return String(text || "")
    .replace(/^#{1,6}\s+/gm, "").replace(/^```.*$/gm, "")
    .replace(/!?\[\[([^\]|\n]*)\|([^\]\n]*)\]\]/g, "$2").replace(/!?\[\[([^\]\n]*)\]\]/g, "$1")
    .replace(/!?\[([^\]\n]*)\]\([^)\n]*\)/g, "$1").replace(/<\/?[A-Za-z][^<>\n]*>/g, " ").replace(/`+/g, "").replace(/\*\*/g, "")
    .replace(/^[ \t]*(?:>[ \t]?)+(?:\[![^\]\s]+\][+-]?[ \t]*)?/gm, "").replace(/^[ \t]*:::.*$/gm, "")
    .replace(/==([^\s=](?:[^=\n]*[^\s=])?)==/g, "$1").replace(/[ \t]\^[A-Za-z0-9-]+[ \t]*$/gm, "")
    .replace(/\s+/g, " ").trim();
}

function highlight(text, terms) {
  let html = escape(text);
  const words = [...new Set(terms)].filter((t) => t.length > 0).sort((a, b) => b.length - a.length).map(escape);
  if (!words.length) return html;
  const pattern = new RegExp("(" + words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|") + ")", "gi");
  // Terms that meet (ラー + メン) are one highlight, not two with a gap between.
  return html.replace(pattern, "<mark>$1</mark>").replace(/<\/mark><mark>/g, "");
}

function snippet(text, terms, size = 160) {
  const flat = cleanText(text);
  const lower = flat.toLowerCase();
  const at = Math.max(0, Math.min(...terms.map((t) => lower.indexOf(t.toLowerCase())).filter((i) => i >= 0).concat([0])) - 40);
  const cut = flat.slice(at, at + size);
  return (at > 0 ? "…" : "") + highlight(cut, terms) + (at + size < flat.length ? "…" : "");
}

// A note in a list of results: its title, linking to it, then its path (and source).
function noteHeading(note) {
  return `<h3><a href="${noteUrl(note.id, note.source)}">${escape(note.title || note.id)}</a><span class="path">${escape(note.id)}${sourceLabel(note.source)}</span></h3>`;
}

// A tag links to the list of notes carrying it (the search page with ?tag= and no query).
function tagChips(tags) {
  return (tags || []).map((t) => `<a class="tag" href="/?tag=${encodeURIComponent(t)}">#${escape(t)}</a>`).join("");
}

async function runSearch(event) {
  event?.preventDefault();
  const query = $("q").value.trim();
  const mode = document.querySelector("input[name=mode]:checked").value;
  const tag = $("tag").value;
  if (!query) {
    if (tag) { listTagged(tag); return; }
    // Nothing to search: a stale error or earlier results go.
    $("search-status").textContent = ""; $("results").innerHTML = "";
    setAddress({ q: "", mode: "" }, false);
    return;
  }
  $("search-status").textContent = "検索中…";
  rememberSearch(query, mode, tag);
  try {
    const body = { query, limit: 20, filters: tag ? { tags: [tag] } : undefined };
    const data = await api("/api/search/" + mode, body);
    renderResults(data, query);
  } catch (err) {
    $("results").innerHTML = "";
    $("search-status").textContent = "検索できませんでした: " + japanese(err);
  }
}

// The search lives in the address (?q=…&mode=…&tag=…): Back from a note, a reload or a shared
// link shows it again instead of an empty page.
function rememberSearch(query, mode, tag) {
  setAddress({ q: query, mode, tag }, false);
}

// Sets (or, given no value, removes) parameters of the address: pushed as a new entry of the
// browser's history (an answer opened), or in place of the current one (a search typed).
function setAddress(values, push) {
  const url = new URL(location.href);
  for (const [name, value] of Object.entries(values)) {
    if (value) url.searchParams.set(name, value); else url.searchParams.delete(name);
  }
  if (url.href !== location.href) history[push ? "pushState" : "replaceState"](null, "", url);
  sessionStorage.setItem("ka-search", url.pathname + url.search); // where a note's back link leads
}

async function restoreSearch() {
  const query = params.get("q");
  const tag = params.get("tag");
  if (!query && !tag) return;
  $("q").value = query || "";
  const mode = document.querySelector(`input[name=mode][value="${CSS.escape(params.get("mode") || "")}"]`);
  if (mode) mode.checked = true;
  if (tag) {
    await tagsLoaded;
    // The list names each tag in its most common spelling: a note's chip may spell it otherwise.
    const listed = [...$("tag").options].find((o) => o.value.toLowerCase() === tag.toLowerCase());
    $("tag").value = listed ? listed.value : "";
  }
  if (query) runSearch(); else listTagged(tag);
}

// The notes carrying a tag (or one nested under it), most recently updated first, 50 at a time.
async function listTagged(tag, offset = 0) {
  if (!offset) {
    setAddress({ q: "", mode: "", tag }, false); // the address a tag links to: no query, no mode
    $("search-status").textContent = "読み込み中…";
  }
  try {
    const data = await api(`/api/tags/${encodeURIComponent(tag)}/notes?limit=50&offset=${offset}`);
    const shown = offset + data.count;
    $("search-status").textContent = data.total
      ? `#${tag} のノート ${data.total} 件` + (data.total > shown ? `（新しい順に ${shown} 件を表示）` : "（新しい順）")
      : `#${tag} のノートはありません。`;
    const items = data.data.map((n) => `
      <div class="result">
        ${noteHeading(n)}
        <div class="tags">${tagChips(n.tags)}${n.updated || n.created ? `<span class="date">${escape(n.updated || n.created)}</span>` : ""}</div>
      </div>`).join("");
    $("results").querySelector(".more")?.remove();
    $("results").innerHTML = (offset ? $("results").innerHTML : "") + items
      + (data.total > shown ? `<button type="button" class="more">もっと見る</button>` : "");
    $("results").querySelector(".more")?.addEventListener("click", () => listTagged(tag, shown));
  } catch (err) {
    if (!offset) $("results").innerHTML = "";
    $("search-status").textContent = "ノートを読み込めませんでした: " + japanese(err);
  }
}

function renderResults(data, query) {
  const groups = new Map();
  for (const hit of data.data) {
    const key = JSON.stringify([hit.source, hit.id]);
    if (!groups.has(key)) groups.set(key, { id: hit.id, source: hit.source, title: hit.title, tags: hit.tags, hits: [] });
    groups.get(key).hits.push(hit);
  }
  const terms = data.terms.length ? data.terms : [query];
  $("search-status").textContent = groups.size
    ? `${groups.size} 件のノート（${data.count} 箇所）· ${Math.round(data.timing.total)} ms`
    : "一致するノートはありませんでした。別の言葉やモードで試してください。";
  $("results").innerHTML = [...groups.values()].map((g) => `
    <div class="result">
      ${noteHeading(g)}
      <div class="tags">${tagChips(g.tags)}</div>
      ${g.hits.slice(0, 3).map((h) => `
        <div class="section">
          <span class="score">${h.matchType} · ${h.score.toFixed(3)}</span>
          <div class="heading">${escape([h.parentHeading, h.heading].filter((x, i, a) => x && a.indexOf(x) === i).join(" › "))}</div>
          <p class="snippet">${snippet(h.content, terms)}</p>
        </div>`).join("")}
    </div>`).join("");
}

// Answers: Markdown quotes and paragraphs only; everything else is shown as text.
function renderAnswer(text) {
  return String(text).split(/\n{2,}/).map((block) => {
    if (/^>/.test(block)) return "<blockquote>" + block.split("\n").map((l) => escape(l.replace(/^>\s?/, ""))).join("<br>") + "</blockquote>";
    return "<p>" + escape(block).replace(/`([^`]+)`/g, "<code>$1</code>").replace(/\n/g, "<br>") + "</p>";
  }).join("");
}

const CONFIDENCE = { high: "確信度: 高", medium: "確信度: 中", low: "確信度: 低" };
let conversationId = null; // the next question follows up this conversation
let shownAnswer = null; // the history id of the answer in the panel
let answerTicket = 0; // the latest answer asked for: a slower earlier one must not replace it

// The answer panel emptied, saying what it waits for.
function startAnswer(question, waiting) {
  $("answer").hidden = false;
  $("answer-question").textContent = question;
  $("answer-text").innerHTML = "<p class='meta'>" + escape(waiting) + "</p>";
  $("citations").innerHTML = ""; $("no-citations").hidden = true;
  $("confidence").textContent = ""; $("confidence").className = "badge";
  $("answer-meta").textContent = ""; $("answer-warnings").textContent = "";
  $("answer-foot").hidden = true;
  return ++answerTicket;
}

function answerFailed(message) {
  $("answer-text").innerHTML = "<p class='warn'>" + escape(message) + "</p>";
}

async function ask(event) {
  event.preventDefault();
  const question = $("question").value.trim();
  if (!question) return;
  const button = $("ask-form").querySelector("button");
  button.disabled = true;
  const ticket = startAnswer(question, "ノートを探しています…");
  // The button is disabled while the answer comes: the focus goes to the answer, not to <body>.
  $("answer").focus({ preventScroll: true });
  $("answer-text").setAttribute("aria-busy", "true");
  let text = "";
  try {
    const res = await fetch("/api/ai/qa", { method: "POST", headers: headers(), body: JSON.stringify({ question, conversationId, options: { stream: true } }) });
    if (!res.ok) throw new Error(failure(await res.json().catch(() => ({})), res));
    await readEvents(res, (kind, data) => {
      if (ticket !== answerTicket) return; // a past answer was opened meanwhile
      if (kind === "delta") { text += data.text; $("answer-text").innerHTML = renderAnswer(text); }
      else if (kind === "done") { showAnswer(data); setAddress({ answer: data.id }, true); }
      else if (kind === "error") throw new Error(data.error);
    });
  } catch (err) {
    if (ticket !== answerTicket) return;
    answerFailed("答えられませんでした: " + japanese(err));
    $("answer-foot").hidden = !conversationId; // a failed follow-up leaves the conversation open
  } finally {
    button.disabled = false;
    $("answer-text").removeAttribute("aria-busy");
    loadHistory();
  }
}

async function readEvents(res, onEvent) {
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true }).replace(/\r\n/g, "\n");
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end); buffer = buffer.slice(end + 2);
      let kind = "message", data = "";
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) kind = line.slice(6).trim();
        else if (line.startsWith("data:")) data += line.slice(5).trim();
      }
      if (data) onEvent(kind, JSON.parse(data));
    }
  }
}

// An answer from the history may be older than some of its metadata: what it lacks is left out.
function answerMeta(m, createdAt) {
  return [
    createdAt && new Date(createdAt).toLocaleString("ja-JP") + " の回答",
    m.model,
    m.retrievedNotes != null && `ノート ${m.retrievedNotes} 件を検索`,
    m.responseTime != null && `${Math.round(m.responseTime)} ms`,
    m.tokensUsed && `${m.tokensUsed} トークン`,
  ].filter(Boolean).join(" · ");
}

// A fresh answer (its "done" event) or one reopened from the history (GET /api/ai/qa/history/{id}).
function showAnswer(data) {
  conversationId = data.conversationId;
  shownAnswer = data.id;
  $("answer").hidden = false;
  $("answer-question").textContent = data.question;
  $("answer-text").innerHTML = renderAnswer(data.answer);
  $("confidence").textContent = CONFIDENCE[data.confidence] || data.confidence;
  $("confidence").className = "badge " + data.confidence;
  $("answer-meta").textContent = answerMeta(data.metadata || {}, data.createdAt);
  $("no-citations").hidden = data.sources.length > 0;
  $("citations").innerHTML = data.sources.map((s) => `<li><a class="citation" href="${noteUrl(s.noteId, s.source)}">${escape(s.noteTitle)}</a> <span class="meta">${escape(s.noteId)}${sourceLabel(s.source)} · 関連度 ${({ high: "高", medium: "中", low: "低" })[s.relevance] || s.relevance}</span></li>`).join("");
  $("answer-warnings").textContent = (data.warnings || []).join(" / ");
  $("answer-foot").hidden = false;
  markShown();
}

// A past answer, shown as it was first given (no new LLM call); the next question follows it up.
async function openAnswer(id) {
  const ticket = startAnswer("", "回答を読み込んでいます…");
  try {
    const { data } = await api("/api/ai/qa/history/" + encodeURIComponent(id));
    if (ticket === answerTicket) showAnswer(data);
  } catch (err) {
    if (ticket !== answerTicket) return;
    conversationId = shownAnswer = null; // a question now starts a new conversation
    markShown();
    answerFailed(err.status === 404
      ? "この回答は見つかりませんでした。履歴から消えたか、リンクが正しくありません。"
      : "回答を開けませんでした: " + japanese(err));
  }
}

// No answer shown: the next question starts a new conversation.
function closeAnswer() {
  answerTicket++;
  conversationId = shownAnswer = null;
  $("answer").hidden = true;
  markShown();
}

function newConversation() {
  closeAnswer();
  setAddress({ answer: null }, true);
  $("question").value = "";
  $("question").focus();
}

// The address names the answer shown (?answer=<history id>): Back, Forward and a reload follow it.
function showAddressedAnswer() {
  const id = new URLSearchParams(location.search).get("answer");
  if (id && id !== shownAnswer) openAnswer(id);
  else if (!id && shownAnswer) closeAnswer();
}

function markShown() {
  for (const link of $("history").querySelectorAll("a.history-entry")) {
    if (link.dataset.id === shownAnswer) link.setAttribute("aria-current", "true");
    else link.removeAttribute("aria-current");
  }
}

function openHistoryEntry(event) {
  const link = event.target.closest("a.history-entry");
  // A modified click (a new tab, a new window) goes to the link's own address.
  if (!link || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  event.preventDefault();
  setAddress({ answer: link.dataset.id }, true);
  openAnswer(link.dataset.id);
  $("answer").focus({ preventScroll: true });
  $("answer").scrollIntoView({ block: "nearest" });
}

async function loadHistory() {
  try {
    const data = await api("/api/ai/qa/history?limit=8");
    $("history").innerHTML = data.data.length ? data.data.map((e) => `
      <li><a class="history-entry" href="/?answer=${encodeURIComponent(e.id)}" data-id="${escape(e.id)}">
      <div class="q">${escape(e.question)}</div><div class="a">${escape(cleanText(e.answer.replace(/^>\s?/gm, "")))}</div>
      <div class="meta">${new Date(e.createdAt).toLocaleString("ja-JP")} · ${escape(e.model)}</div></a></li>`).join("")
      : "<li class='meta'>まだ質問はありません。</li>";
    markShown();
  } catch (err) {
    $("history").innerHTML = "<li class='warn'>" + escape(japanese(err)) + "</li>";
  }
}

async function loadTags() {
  try {
    const data = await api("/api/tags");
    for (const { tag, count } of data.data) $("tag").add(new Option(`#${tag} (${count})`, tag));
  } catch (err) { /* the search still works without the tag list */ }
}

// The back link returns to the search the note was opened from: through the browser's history
// when the previous page is that search (as it was, answer and scroll included), else to this
// tab's last search, else home.
function setUpBack() {
  const back = $("back");
  back.href = sessionStorage.getItem("ka-search") || "/";
  const from = document.referrer ? new URL(document.referrer) : null;
  if (from && from.origin === location.origin && from.pathname === "/" && history.length > 1) {
    back.addEventListener("click", (event) => { event.preventDefault(); history.back(); });
  }
}

// The path in the address: a "%" that starts no escape (/notes/100%.md) is part of the name.
function addressPath() {
  return location.pathname.slice("/notes/".length).replace(/(%[0-9a-f]{2})+/gi, (m) => {
    try { return decodeURIComponent(m); } catch { return m; }
  });
}

// The note arrives after the page has loaded, so the browser cannot go to the heading the
// address names: #h-… as the note's links write it, or a heading's bare slug.
function showHeading() {
  let name = location.hash.slice(1);
  if (!name) return;
  try { name = decodeURIComponent(name); } catch { /* not an escape: the name as written */ }
  const heading = [name, "h-" + name].map((h) => document.getElementById(h)).find((e) => e && $("note-body").contains(e));
  heading?.scrollIntoView();
}

function showNoteHead(id, data) {
  document.title = (data.title || id) + " · ノート検索";
  $("note-title").textContent = data.title || id;
  $("note-meta").innerHTML = escape(id) + sourceLabel(data.source) + [data.created && "作成 " + data.created, data.updated && "更新 " + data.updated].filter(Boolean).map((d) => " · " + escape(d)).join("");
  $("note-also").hidden = !data.alsoIn?.length;
  $("note-also").innerHTML = "同じパスのノートがほかのソースにもあります: " + (data.alsoIn || []).map((s) => `<a href="${noteUrl(id, s)}">${escape(s)}</a>`).join(", ");
  $("note-rejected").hidden = !data.fileRejected;
  $("note-rejected").textContent = `ファイルを読み込めませんでした（${data.fileRejected}）。表示しているのは最後に読み込めた版です。ファイルを直すと次の同期で更新されます。`;
  $("note-tags").innerHTML = tagChips(data.tags);
}

// The note's body under its title: a first H1 that repeats the title is left out (the server
// renders a note's H1 as <h2>). The vault's images load with the bearer token when the page has
// one, which an <img> cannot send: they are fetched with it and shown as data: addresses. Not
// blob: ones, which take this page's origin: an SVG opened from one would run its scripts here.
function showBody(html, title) {
  const template = document.createElement("template");
  template.innerHTML = html;
  const first = template.content.firstElementChild;
  if (first?.tagName === "H2" && first.textContent.trim() === String(title).trim()) first.remove();
  const images = token ? [...template.content.querySelectorAll('img[src^="/api/attachments/"]')] : [];
  for (const img of images) { img.dataset.src = img.getAttribute("src"); img.removeAttribute("src"); }
  $("note-body").replaceChildren(template.content);
  for (const img of images) {
    fetch(img.dataset.src, { headers: headers() }).then((res) => res.ok ? res.blob() : Promise.reject(res))
      .then((blob) => new Promise((resolve, reject) => {
        const reader = new FileReader();
        reader.onload = () => resolve(reader.result);
        reader.onerror = reject;
        reader.readAsDataURL(blob);
      }))
      .then((url) => { img.src = url; })
      .catch(() => { img.alt = img.alt || "画像を読み込めませんでした"; });
  }
}

async function showNote(id) {
  $("home").hidden = true; $("note-view").hidden = false;
  setUpBack();
  try {
    const { data } = await api("/api/notes/" + noteRef(id, params.get("source")));
    showNoteHead(id, data);
    // The server renders the Markdown: raw HTML in the note arrives through its allowlist, links checked.
    showBody(data.html + (data.empty ? "<p class='meta'>本文のない空のノートです（検索には出ません）</p>" : ""), data.title || id);
    showHeading();
    if (data.empty) { $("similar").innerHTML = "<li class='meta'>ありません</li>"; return; }
  } catch (err) {
    $("note-title").textContent = "ノートを表示できません";
    $("note-body").textContent = japanese(err);
    return;
  }
  try {
    const similar = await api("/api/ai/similar/" + noteRef(id, params.get("source")));
    $("similar").innerHTML = similar.data.map((n) => `<li><a href="${noteUrl(n.id, n.source)}">${escape(n.title || n.id)}</a>${sourceLabel(n.source)}<div class="preview">${escape(cleanText(n.preview).slice(0, 80))}…</div></li>`).join("") || "<li class='meta'>ありません</li>";
  } catch (err) {
    $("similar").innerHTML = "<li class='meta'>" + escape(japanese(err)) + "</li>";
  }
}

if (location.pathname.startsWith("/notes/")) {
  showNote(addressPath());
} else {
  $("search-form").addEventListener("submit", runSearch);
  $("ask-form").addEventListener("submit", ask);
  // Enter is a new line in the question; Ctrl+Enter (⌘+Enter on a Mac) asks it.
  $("question").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && !event.isComposing) {
      event.preventDefault();
      $("ask-form").requestSubmit();
    }
  });
  $("history").addEventListener("click", openHistoryEntry);
  $("new-conversation").addEventListener("click", newConversation);
  window.addEventListener("popstate", showAddressedAnswer);
  document.querySelectorAll("input[name=mode]").forEach((r) => r.addEventListener("change", () => $("q").value && runSearch()));
  $("tag").addEventListener("change", () => runSearch());
  tagsLoaded = loadTags();
  loadHistory();
  restoreSearch();
  showAddressedAnswer();
}
