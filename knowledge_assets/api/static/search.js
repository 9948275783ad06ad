// The search panel: a query in one of the three modes, the notes of a tag, and the search kept in
// the address so that Back, a reload or a shared link shows it again.
import { api, japanese } from "./api.js";
import { escape, noteHeading, noteUrl, snippet, tagChips } from "./markup.js";
import { $, params, restoreScroll, setAddress } from "./page.js";

// Each search or listing started: a reply to an earlier one (a page of notes still loading when
// a new query is typed) is dropped instead of landing in the new one's results.
let current = 0;

// shown: how far the listing reached when this page was left (the address's ?shown=), to be
// loaded again on opening it; a search typed anew starts from the first page. asWords: search
// the query even if it reads as operators alone (the server found it has words).
export async function runSearch(event, shown = 0, asWords = false) {
  event?.preventDefault();
  const run = ++current;
  const query = $("q").value.trim();
  const mode = document.querySelector("input[name=mode]:checked").value;
  const tag = $("tag").value;
  // "tag:日記" alone, as in Obsidian's search box: the notes carrying the tag.
  const typedTag = /^tag:#?([^\s"#][^\s"]*)$/i.exec(query)?.[1]; // "tag:#" names none
  if (typedTag && !tag) return listTagged(typedTag, shown);
  if (!asWords && operatorsAlone(query)) return listKept(query, mode, tag, shown);
  if (!query) {
    if (tag) return listTagged(tag, shown);
    // Nothing to search: a stale error or earlier results go, and 検索 clicked says what it needs.
    $("search-status").textContent = event ? "検索語を入力してください（例: 会議メモ、tag:日記）。" : "";
    $("results").innerHTML = "";
    remember({ q: "", mode: "", shown: "" });
    return;
  }
  $("search-status").textContent = "検索中…";
  rememberSearch(query, mode, tag);
  try {
    // Ten notes, each with its further matching sections: twenty passages asked for as such
    // were often two long notes' and nothing else.
    const body = { query, limit: NOTES, perNote: true, sections: SECTIONS, filters: tag ? { tags: [tag] } : undefined };
    const data = await api("/api/search/" + mode, body);
    if (run === current) renderResults(data, query);
  } catch (err) {
    if (run !== current) return;
    $("results").innerHTML = "";
    $("search-status").textContent = "検索できませんでした: " + japanese(err);
  }
}

// The search lives in the address (?q=…&mode=…&tag=…): Back from a note, a reload or a shared
// link shows it again instead of an empty page.
function rememberSearch(query, mode, tag) {
  remember({ q: query, mode, tag, shown: "" });
}

// The search the address names, as last shown: Back or Forward to an entry naming another one
// (a search typed after an answer was opened changed only the newer entry) shows that one.
const searchKey = () => JSON.stringify(["q", "mode", "tag"].map((n) => new URLSearchParams(location.search).get(n) || ""));
let addressed = searchKey();
function remember(values) {
  setAddress(values, false);
  addressed = searchKey();
}

export function showAddressedSearch() {
  if (searchKey() === addressed) return;
  addressed = searchKey();
  const address = new URLSearchParams(location.search);
  if (address.get("q") || address.get("tag")) { restoreSearch(Promise.resolve(), address); return; }
  $("q").value = ""; $("tag").value = "";
  runSearch();
}

// The search the address names, shown again once the tag list it may filter by (tagsLoaded) is in.
export async function restoreSearch(tagsLoaded, address = params) {
  const query = address.get("q");
  const tag = address.get("tag");
  if (!query && !tag) { restoreScroll(false); return; }
  $("q").value = query || "";
  const mode = document.querySelector(`input[name=mode][value="${CSS.escape(address.get("mode") || "")}"]`);
  if (mode) mode.checked = true;
  $("tag").value = "";
  if (tag) {
    await tagsLoaded;
    // The list names each tag in its most common spelling: a note's chip may spell it otherwise.
    const listed = [...$("tag").options].find((o) => o.value.toLowerCase() === tag.toLowerCase());
    $("tag").value = listed ? listed.value : "";
  }
  // A listing extended with "さらに表示" comes back as long as it was (a bad value: one page).
  const shown = Math.min(Number.parseInt(address.get("shown"), 10) || 0, MAX_RESTORED);
  await (query ? runSearch(undefined, shown) : listTagged(tag, shown));
  restoreScroll();
}

// Obsidian's operators as the server reads them (core/search/operators.py): tag:, path:, file:,
// [property] and [property:value], their exclusions, and -word. A query of nothing else lists
// the notes they keep, as Obsidian does.
const OPERATOR = /(?<!\S)-?(?:(?:tag|path|file):(?:"[^"]*"|[^\s"]\S*)|\[\s*[^\[\]":\s][^\[\]":]*(?::(?:"[^"]*"|[^\]"])*)?\])(?!\S)/giu;
const EXCLUDED = /(?<!\S)-(?:"[^"]*"|[\p{L}\p{M}\p{N}_]\S*)(?!\S)/gu;

// Operators joined by OR (tag:旅行 OR tag:出張) keep the notes of any of them: the ORs between
// them are not words either. The server refuses an OR joining two kinds, and says why.
const OR_CHAINED = /\u0001(?:\s+OR\s+\u0001)+/gu;

function operatorsAlone(query) {
  const rest = query.replace(OPERATOR, "\u0001").replace(OR_CHAINED, " ").replaceAll("\u0001", " ");
  const words = rest.replace(EXCLUDED, " ");
  return (rest !== query || words !== rest) && !words.trim();
}

// The notes carrying a tag (or one nested under it), most recently updated first, a page at a time.
function listTagged(tag, shown = 0) {
  remember({ q: "", mode: "", tag, shown: "" }); // the address a tag links to: no query, no mode
  return listNotes(
    (offset) => api(`/api/tags/${encodeURIComponent(tag)}/notes?limit=${PAGE}&offset=${offset}`),
    (data) => data.total ? `#${tag} のノート ${count(data.total)} 件` : `#${tag} のノートはありません。`,
    "ノートを読み込めませんでした: ",
    shown,
  );
}

// The notes a query of operators alone keeps (path:日記/, tag:日記 -tag:運動), as a tag's are
// listed. Exclusions alone keep every other note: the status says so, lest it read as a folder's.
function listKept(query, mode, tag, shown = 0) {
  rememberSearch(query, mode, tag);
  const body = (offset) => ({ query, limit: PAGE, offset, filters: tag ? { tags: [tag] } : undefined });
  // A bracketed word no note has as a property ([注意], [x]) is text to the server: a query of
  // it is a search, which then runs instead (this listing's error is dropped, a newer run begun).
  const load = (offset) => api("/api/search/notes", body(offset)).catch((err) => {
    if (!offset && /has words to search for/.test(err.message)) runSearch(undefined, 0, true);
    throw err;
  });
  return listNotes(
    load,
    (data) => {
      const which = data.excludesOnly ? `「${query}」で除外したもの以外のすべてのノート` : `「${query}」のノート`;
      return data.total ? `${which} ${count(data.total)} 件` : `「${query}」に当てはまるノートはありません。`;
    },
    "検索できませんでした: ", // an operator that names nothing (tag:#) is refused as a search is
    shown,
  );
}

// Notes listed per request: a folder of 3,000 daily notes comes a page at a time, on demand.
const PAGE = 50;
const count = (n) => n.toLocaleString("ja-JP");
// The most notes an address brings back at once (20 pages): a hand-edited ?shown=999999 must not
// walk a whole store.
const MAX_RESTORED = 1000;

// A listing of notes (load(offset) fetches a page; title(data) heads it), newest first: its first
// page, then each next one appended on "さらに表示" below the notes, which says how many are shown
// of how many and goes once all are. The address keeps how far it reached (?shown=), and opening
// it loads the pages up to there again (shown), so Back from a note finds the reader's place.
function listNotes(load, title, failed, shown = 0) {
  const run = ++current;
  let next = 0; // the offset of the next page: where the server's pages end, whatever was shown
  let total = 0;
  const seen = new Set(); // a note that moved down a page while reading (an edit) is listed once
  const results = $("results");
  let button = null; // "さらに表示", once a first page has left more to show

  async function loadPage() {
    if (button) {
      // Disabled while its page loads, so that a second click appends nothing twice: by
      // aria-disabled, since a disabled button would drop the keyboard's focus to the page's top.
      if (button.getAttribute("aria-disabled") === "true") return;
      button.setAttribute("aria-disabled", "true"); button.textContent = "読み込み中…";
      results.setAttribute("aria-busy", "true");
    } else {
      $("search-status").textContent = "読み込み中…";
    }
    let data;
    try {
      data = await load(next);
    } catch (err) {
      if (run !== current) return;
      results.removeAttribute("aria-busy");
      // The first page failing leaves nothing to show; a later one keeps the notes already
      // listed and its button, to try again.
      if (button) { button.removeAttribute("aria-disabled"); button.textContent = moreLabel(); } else results.innerHTML = "";
      $("search-status").textContent = failed + japanese(err);
      return;
    }
    if (run !== current) return;
    results.removeAttribute("aria-busy");
    next += data.count;
    total = data.total;
    const fresh = data.data.filter((n) => {
      const key = JSON.stringify([n.source, n.id]);
      return !seen.has(key) && seen.add(key);
    });
    const items = fresh.map((n) => `
      <div class="result">
        ${noteHeading(n)}
        <div class="tags">${tagChips(n.tags)}${n.updated || n.created ? `<span class="date">${escape(n.updated || n.created)}</span>` : ""}</div>
      </div>`).join("");
    // An empty page ends the listing even if the total said more (notes removed meanwhile).
    const more = data.count > 0 && data.total > next;
    $("search-status").textContent = title(data)
      + (!data.total ? "" : more ? `（新しい順に ${count(seen.size)} 件を表示）` : "（新しい順）");
    if (next > PAGE) setAddress({ shown: String(next) }, false);
    if (!button) {
      results.innerHTML = `<div class="listing">${items}</div>`;
      if (!more) return; // a listing of one page needs no control
      results.insertAdjacentHTML("beforeend", `
        <div class="more-bar">
          <button type="button" class="more"></button>
          <span class="shown" aria-live="polite"></span>
        </div>`);
      button = results.querySelector(".more");
      button.addEventListener("click", loadPage);
    } else {
      const first = results.querySelector(".listing").childElementCount;
      results.querySelector(".listing").insertAdjacentHTML("beforeend", items);
      if (!more) {
        // The control goes: focus moves on to the first note it brought, not back to the top.
        const focused = document.activeElement === button;
        button.remove();
        if (focused) results.querySelector(`.listing > .result:nth-child(${first + 1}) h3 a`)?.focus();
      }
    }
    results.querySelector(".more-bar .shown").textContent = `${count(seen.size)} / ${count(Math.max(total, seen.size))} 件を表示`;
    if (more) { button.removeAttribute("aria-disabled"); button.textContent = moreLabel(); }
    if (more && next < shown) await loadPage(); // the rest of the listing the address names
  }

  // What the next click brings: a full page, or the few that remain.
  const moreLabel = () => `さらに ${count(Math.min(PAGE, Math.max(total - next, 1)))} 件を表示`;
  return loadPage(); // done once the pages the address names are in
}


// Which search found a hit, in the words of the mode switch (the API says hybrid, keyword or
// vector), and the longer phrase its tooltip gives.
const FOUND_BY = {
  hybrid: ["両方", "キーワードとセマンティックの両方で見つかった箇所"],
  keyword: ["キーワード", "キーワード検索で見つかった箇所"],
  vector: ["セマンティック", "セマンティック検索（意味の近さ）で見つかった箇所"],
};

// Where a hit is in its note (parent › heading), a link to that section: a long note opened
// from its hit otherwise starts at its top, the passage a scroll away.
function sectionLink(note, hit, label = [hit.parentHeading, hit.heading].filter((x, i, a) => x && a.indexOf(x) === i).join(" › ")) {
  return hit.heading ? `<a href="${noteUrl(note.id, note.source, hit.heading)}">${escape(label)}</a>` : escape(label);
}

// A saved article's own address beside its passage (a bookmark file's hits carry it): the web
// page the passage quotes. Only http(s) addresses are links.
function articleLink(url) {
  if (!url || !/^https?:\/\//i.test(url)) return "";
  return ` <a class="article-link" href="${escape(url)}" target="_blank" rel="noopener noreferrer" title="${escape(url)}">元の記事 ↗</a>`;
}

// A note's hits past the first few, by their headings: the status counts them, and a long note
// may hold most of a search's hits.
const SHOWN_HITS = 3;
function moreHits(note) {
  const rest = note.hits.slice(SHOWN_HITS);
  if (!rest.length) return "";
  const links = rest.map((h) => sectionLink(note, h, h.heading || "見出しのない箇所")).join("、");
  return `<p class="more-hits">このノートのほかの一致 ${rest.length} 箇所: ${links}</p>`;
}

const NOTES = 10;
const SECTIONS = 9; // a note's matching sections after its best one: three shown, the rest linked

function renderResults(data, query) {
  const groups = new Map();
  let passages = 0;
  for (const hit of data.data) {
    const key = JSON.stringify([hit.source, hit.id]);
    if (!groups.has(key)) groups.set(key, { id: hit.id, source: hit.source, title: hit.title, tags: hit.tags, hits: [] });
    const hits = [hit, ...(hit.sections ?? [])];
    groups.get(key).hits.push(...hits);
    passages += hits.length;
  }
  const terms = data.terms.length ? data.terms : [query];
  $("search-status").textContent = groups.size
    ? `${groups.size} 件のノート（${passages} 箇所）· ${Math.round(data.timing.total)} ms`
    : "一致するノートはありませんでした。別の言葉やモードで試してください。";
  $("results").innerHTML = [...groups.values()].map((g) => `
    <div class="result">
      ${noteHeading(g)}
      <div class="tags">${tagChips(g.tags)}</div>
      ${g.hits.slice(0, SHOWN_HITS).map((h) => `
        <div class="section">
          <span class="score" title="${FOUND_BY[h.matchType]?.[1] ?? ""}">${FOUND_BY[h.matchType]?.[0] ?? escape(h.matchType)} · ${h.score.toFixed(3)}</span>
          <div class="heading">${sectionLink(g, h)}${articleLink(h.url)}</div>
          <p class="snippet">${snippet(h.content, terms)}</p>
        </div>`).join("")}
      ${moreHits(g)}
    </div>`).join("");
}

export async function loadTags() {
  try {
    const data = await api("/api/tags");
    for (const { tag, count } of data.data) $("tag").add(new Option(`#${tag} (${count})`, tag));
  } catch (err) { /* the search still works without the tag list */ }
}
