// The note view (/notes/<path>): the note as the server rendered it, its similar notes, and a back
// link to the search it was opened from.
import { api, headers, japanese, token } from "./api.js";
import { cleanText, escape, noteLink, noteRef, noteUrl, sourceLabel, tagChips } from "./markup.js";
import { $, params, restoreScroll } from "./page.js";

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
export function addressPath() {
  return location.pathname.slice("/notes/".length).replace(/(%[0-9a-f]{2})+/gi, (m) => {
    try { return decodeURIComponent(m); } catch { return m; }
  });
}

// The note arrives after the page has loaded, so the browser cannot go to the heading the
// address names: #h-… as the note's links write it, a heading's bare slug, or its text as a
// search hit names its section (the Markdown of the heading, which its rendered text drops).
function showHeading() {
  let name = location.hash.slice(1);
  if (!name) return;
  try { name = decodeURIComponent(name); } catch { /* not an escape: the name as written */ }
  const body = $("note-body");
  const text = cleanText(name).trim();
  const heading = [name, "h-" + name].map((h) => document.getElementById(h)).find((e) => e && body.contains(e))
    || [...body.querySelectorAll("h1, h2, h3, h4, h5, h6")].find((h) => h.textContent.trim() === text);
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
  // What the home page lists this note for (a frontmatter key written twice), said here too.
  $("note-warnings").hidden = !data.warnings?.length;
  $("note-warnings").textContent = "frontmatter の警告: " + (data.warnings || []).join(" / ");
  $("note-tags").innerHTML = tagChips(data.tags);
  // Versions linked by `previous`: an older one is shown as history, pointing at its successor;
  // the newer one lists the versions it replaces.
  $("note-superseded").hidden = !data.supersededBy;
  $("note-superseded").innerHTML = data.supersededBy ? `この版は新しい版に置き換えられています（検索に出るのは新しい版です）: ${newerLink(data)}` : "";
  const versions = data.versions || [];
  $("note-versions").hidden = !versions.length;
  $("note-versions").innerHTML = "以前の版: " + versions.map((v) => `<a href="${noteUrl(v.id, data.source)}">${escape(v.title)}</a>`).join("、");
  // The note's other frontmatter properties, as Obsidian's properties block lists them; each
  // name searches the notes that have it, as [status] typed in the search box does.
  const properties = data.properties || [];
  $("note-properties").hidden = !properties.length;
  $("note-properties").innerHTML = properties.map((p) => `<dt>${propertyName(p.name)}</dt>`
    + `<dd>${p.value ? escape(p.value) : '<span class="empty">（空）</span>'}</dd>`).join("");
}

// The version that replaced this one (data.supersededBy), linked.
const newerLink = (data) => `<a href="${noteUrl(data.supersededBy, data.source)}">${escape(data.supersededBy)}</a>`;

// A property's name, linked to the notes that have it when [name] can say it (no bracket,
// quote or colon in it).
function propertyName(name) {
  if (!name.trim() || /[[\]":]/.test(name)) return escape(name);
  const query = encodeURIComponent(`[${name.trim()}]`);
  return `<a href="/?q=${query}" title="このプロパティのあるノート">${escape(name)}</a>`;
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

export async function showNote(id) {
  $("home").hidden = true; $("note-view").hidden = false;
  setUpBack();
  // A long note takes seconds to render, longer while others render: say so meanwhile.
  $("note-body").textContent = "ノートを読み込んでいます…";
  try {
    const { data } = await api("/api/notes/" + noteRef(id, params.get("source")));
    showNoteHead(id, data);
    // The server renders the Markdown: raw HTML in the note arrives through its allowlist, links checked.
    showBody(data.html + (data.empty ? "<p class='meta'>本文のない空のノートです（検索には出ません）</p>" : ""), data.title || id);
    showHeading();
    restoreScroll(); // Back to this note: where the reader was, rather than its heading
    showBacklinks(id);
    if (data.empty) { $("similar").innerHTML = "<li class='meta'>ありません</li>"; return; }
    // An older version is not searched, so it has no vectors: its successor's similar notes.
    if (data.supersededBy) {
      $("similar").innerHTML = `<li class='meta'>古い版です。似ているノートは新しい版（${newerLink(data)}）で見られます</li>`;
      return;
    }
  } catch (err) {
    $("note-title").textContent = "ノートを表示できません";
    $("note-body").textContent = err.status === 404
      ? `「${id}」というノートはありません。名前や場所が変わったか、下書きか削除されたノートです。検索から開き直してください。`
      : japanese(err);
    document.querySelector("#note-view aside").hidden = true; // no note: nothing similar or linking
    return;
  }
  try {
    const similar = await api("/api/ai/similar/" + noteRef(id, params.get("source")));
    $("similar").innerHTML = similar.data.map((n) => `<li>${noteLink(n)}${sourceLabel(n.source)}<div class="preview">${escape(shortened(preview(n), 80))}</div></li>`).join("") || "<li class='meta'>ありません</li>";
  } catch (err) {
    $("similar").innerHTML = "<li class='meta'>" + escape(japanese(err)) + "</li>";
  }
}

// A note's text under its title link: its body opens with the title (its H1), said once.
function preview(note) {
  const text = cleanText(note.preview).trim(), title = String(note.title || "").trim();
  return title && text.startsWith(title) ? text.slice(title.length).trim() : text;
}

// A preview cut to its first characters: "…" says that more follows, so a short note gets none.
const shortened = (text, chars) => text.length > chars ? text.slice(0, chars) + "…" : text;

// The notes whose links lead to this one (Obsidian's linked mentions), by title.
async function showBacklinks(id) {
  try {
    const found = await api("/api/backlinks/" + noteRef(id, params.get("source")));
    $("backlinks").innerHTML = found.data.map((n) => `<li>${noteLink(n)}${sourceLabel(n.source)}</li>`).join("")
      + (found.more ? "<li class='meta'>ほかにもこのノートの名前を含むノートがあります</li>" : "")
      || "<li class='meta'>ありません</li>";
  } catch (err) {
    $("backlinks").innerHTML = "<li class='meta'>" + escape(japanese(err)) + "</li>";
  }
}
