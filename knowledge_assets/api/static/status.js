// What needs the reader's attention before searching: files that could not be read, notes with
// warnings or not indexed, passages without a vector (GET /api/status). Nothing shows when all
// is well; a failure to ask is silent too, since search works without it.
import { api } from "./api.js";
import { escape, noteUrl } from "./markup.js";
import { $ } from "./page.js";

const SHOWN = 20;

export async function showStoreStatus() {
  let data;
  try { ({ data } = await api(`/api/status?limit=${SHOWN}`)); } catch { return; }
  const lines = [];
  if (!data.model) lines.push("埋め込みモデルが有効ではありません。キーワード検索だけが使えます（knowledge-assets update で有効になります）。");
  else if (data.missing_vectors) lines.push(`${data.missing_vectors.toLocaleString()} 箇所にベクトルがなく、意味検索では見つかりません（knowledge-assets update で埋め込まれます）。`);
  for (const overlap of data.overlaps) lines.push(`二つのソースが同じフォルダーを読んでいます（ノートが二重に見つかります）: ${overlap}`);
  const groups = [
    ["読み込めなかったファイル", data.rejected, data.counts.rejected, false],
    ["警告のあるノート", data.warnings, data.counts.warnings, true],
    ["索引にできなかったノート", data.failed, data.counts.failed, true],
  ].filter(([, , count]) => count);
  if (!lines.length && !groups.length) return;
  const box = $("store-status");
  box.innerHTML = lines.map((l) => `<p>${escape(l)}</p>`).join("") + groups.map(([title, items, count, stored]) => `
    <details>
      <summary>${escape(title)} ${count.toLocaleString()} 件</summary>
      <ul>${items.map((p) => `<li><code>${stored ? `<a href="${noteUrl(p.path, p.source)}">${escape(p.path)}</a>` : escape(p.path)}</code> ${escape(p.reason)}</li>`).join("")}</ul>
      ${count > items.length ? `<p class="meta">ほか ${(count - items.length).toLocaleString()} 件（knowledge-assets status --all で一覧できます）</p>` : ""}
    </details>`).join("") + (groups.length ? `<p class="meta">ファイルを直すと、次の同期で反映されます。</p>` : "");
  box.hidden = false;
}
