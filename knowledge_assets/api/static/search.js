// The search panel: a query in one of the three modes, the notes of a tag, and the search kept in
// the address so that Back, a reload or a shared link shows it again.
import { api, japanese } from "./api.js";
import { escape, noteHeading, snippet, tagChips } from "./markup.js";
import { $, params, setAddress } from "./page.js";

export async function runSearch(event) {
  event?.preventDefault();
  const query = $("q").value.trim();
  const mode = document.querySelector("input[name=mode]:checked").value;
  const tag = $("tag").value;
  // "tag:日記" alone, as in Obsidian's search box: the notes carrying the tag.
  const typedTag = /^tag:#?([^\s"#][^\s"]*)$/i.exec(query)?.[1]; // "tag:#" names none
  if (typedTag && !tag) { listTagged(typedTag); return; }
  if (operatorsAlone(query)) { listKept(query, mode, tag); return; }
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

// The search the address names, shown again once the tag list it may filter by (tagsLoaded) is in.
export async function restoreSearch(tagsLoaded) {
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

// Obsidian's operators as the server reads them (core/search/operators.py): tag:, path:, their
// exclusions, and -word. A query of nothing else lists the notes they keep, as Obsidian does.
const OPERATOR = /(?<!\S)-?(?:tag|path):(?:"[^"]*"|[^\s"]\S*)(?!\S)/giu;
const EXCLUDED = /(?<!\S)-(?:"[^"]*"|[\p{L}\p{M}\p{N}_]\S*)(?!\S)/gu;

function operatorsAlone(query) {
  const rest = query.replace(OPERATOR, " ");
  const words = rest.replace(EXCLUDED, " ");
  return (rest !== query || words !== rest) && !words.trim();
}

// The notes carrying a tag (or one nested under it), most recently updated first, 50 at a time.
function listTagged(tag) {
  setAddress({ q: "", mode: "", tag }, false); // the address a tag links to: no query, no mode
  listNotes(
    (offset) => api(`/api/tags/${encodeURIComponent(tag)}/notes?limit=50&offset=${offset}`),
    (data) => data.total ? `#${tag} のノート ${data.total} 件` : `#${tag} のノートはありません。`,
    "ノートを読み込めませんでした: ",
  );
}

// The notes a query of operators alone keeps (path:日記/, tag:日記 -tag:運動), as a tag's are
// listed. Exclusions alone keep every other note: the status says so, lest it read as a folder's.
function listKept(query, mode, tag) {
  rememberSearch(query, mode, tag);
  const body = (offset) => ({ query, limit: 50, offset, filters: tag ? { tags: [tag] } : undefined });
  listNotes(
    (offset) => api("/api/search/notes", body(offset)),
    (data) => {
      const which = data.excludesOnly ? `「${query}」で除外したもの以外のすべてのノート` : `「${query}」のノート`;
      return data.total ? `${which} ${data.total} 件` : `「${query}」に当てはまるノートはありません。`;
    },
    "検索できませんでした: ", // an operator that names nothing (tag:#) is refused as a search is
  );
}

// A page of listed notes (load(offset) fetches it; title(data) heads it), newest first.
async function listNotes(load, title, failed, offset = 0) {
  if (!offset) $("search-status").textContent = "読み込み中…";
  try {
    const data = await load(offset);
    const shown = offset + data.count;
    $("search-status").textContent = title(data)
      + (!data.total ? "" : data.total > shown ? `（新しい順に ${shown} 件を表示）` : "（新しい順）");
    const items = data.data.map((n) => `
      <div class="result">
        ${noteHeading(n)}
        <div class="tags">${tagChips(n.tags)}${n.updated || n.created ? `<span class="date">${escape(n.updated || n.created)}</span>` : ""}</div>
      </div>`).join("");
    $("results").querySelector(".more")?.remove();
    $("results").innerHTML = (offset ? $("results").innerHTML : "") + items
      + (data.total > shown ? `<button type="button" class="more">もっと見る</button>` : "");
    $("results").querySelector(".more")?.addEventListener("click", () => listNotes(load, title, failed, shown));
  } catch (err) {
    if (!offset) $("results").innerHTML = "";
    $("search-status").textContent = failed + japanese(err);
  }
}


// Which search found a hit, in the words of the mode switch (the API says hybrid, keyword or
// vector), and the longer phrase its tooltip gives.
const FOUND_BY = {
  hybrid: ["両方", "キーワードとセマンティックの両方で見つかった箇所"],
  keyword: ["キーワード", "キーワード検索で見つかった箇所"],
  vector: ["セマンティック", "セマンティック検索（意味の近さ）で見つかった箇所"],
};

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
          <span class="score" title="${FOUND_BY[h.matchType]?.[1] ?? ""}">${FOUND_BY[h.matchType]?.[0] ?? escape(h.matchType)} · ${h.score.toFixed(3)}</span>
          <div class="heading">${escape([h.parentHeading, h.heading].filter((x, i, a) => x && a.indexOf(x) === i).join(" › "))}</div>
          <p class="snippet">${snippet(h.content, terms)}</p>
        </div>`).join("")}
    </div>`).join("");
}

export async function loadTags() {
  try {
    const data = await api("/api/tags");
    for (const { tag, count } of data.data) $("tag").add(new Option(`#${tag} (${count})`, tag));
  } catch (err) { /* the search still works without the tag list */ }
}
