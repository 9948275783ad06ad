// Talking to the server: requests with the page's bearer token, the answer's event stream, and
// what the page says, in Japanese, when a request fails.
import { params } from "./page.js";

if (params.get("token")) sessionStorage.setItem("ka-token", params.get("token"));
export const token = sessionStorage.getItem("ka-token");

export function headers() {
  const h = { "Content-Type": "application/json" };
  if (token) h.Authorization = "Bearer " + token;
  return h;
}

// What a failed request says: the API's own error, or FastAPI's validation details (a list of
// {loc, msg}), which used to show as "[object Object]".
export function failure(data, res) {
  if (typeof data.error === "string") return data.error;
  if (Array.isArray(data.detail)) return data.detail.map((d) => [(d.loc || []).slice(1).join("."), d.msg].filter(Boolean).join(": ")).join("; ");
  if (typeof data.detail === "string") return data.detail;
  return res.statusText;
}

// What the page says of a failed request, in Japanese: the usual refusals in words of their
// own, anything else with the server's message.
// The refusals are known by their words: a question refused while its answer streams comes as an
// event, with no HTTP status.
export function japanese(err) {
  if (/at most 2000 characters/.test(err.message)) return "検索語が長すぎます。2,000 文字までにしてください。";
  if (/no words to search for/.test(err.message)) return "tag: や path:、file:、[プロパティ]、- での除外のほかに、探す言葉も入力してください（例: 旅行 -tag:日記）。";
  if (/names nothing after the colon/.test(err.message)) return "[プロパティ:値] の : の後に値を書いてください（例: [status:done]）。プロパティがあるノートすべてなら [status] と書きます。";
  if (/names nothing/.test(err.message)) return "tag: や path:、file:、- の後に値を書いてください（例: tag:日記、-雪）。";
  if (/excludes nothing/.test(err.message)) return "助詞や記号だけでは除外できません。- の後に言葉を書いてください（例: -雪）。";
  if (/holds no word search keeps/.test(err.message)) return "助詞や記号だけのフレーズでは探せません。\"\" の中に言葉を書いてください（例: \"東京 大学\"）。";
  if (/: OR joins two tag:/.test(err.message)) return "OR は同じ種類の 2 つ（tag:旅行 OR tag:出張、path: どうし、[プロパティ] どうし、言葉どうし）をつなぎます。この OR を外すか、別々に検索してください。";
  if (/no active embedding model/.test(err.message)) return "ノートのベクトルがまだありません。knowledge-assets update を実行すると、意味での検索と似ているノートが使えます（キーワード検索は今も使えます）。";
  if (err.status === 401) return "このサーバーにはアクセス用のトークンが必要です（?token=… を付けて開いてください）。";
  // A 503 is either every store connection busy (the store is fine: wait) or the store unreachable.
  if (err.status === 503 && /renders stayed busy/.test(err.message)) return "長いノートの表示が混み合っています。少し待ってから、もう一度開いてください。";
  if (err.status === 503 && /stayed busy/.test(err.message)) return "サーバーが混み合っています。少し待ってから、もう一度試してください。";
  if (err.status === 503) return "ノートの保存先に接続できません。サーバーを確認してから、もう一度試してください。";
  // The server's own failure (its message is in English, for its log) or a proxy's HTML page.
  if (err.status >= 500) return `サーバーでエラーが起きました（${err.status}）。もう一度試して、続くようならサーバーのログを確認してください。`;
  if (err instanceof TypeError) return "サーバーに接続できません。サーバーが動いているか確認してください。";
  return err.message;
}

export async function api(path, body) {
  const res = await fetch(path, body === undefined ? { headers: headers() } : { method: "POST", headers: headers(), body: JSON.stringify(body) });
  const data = await res.json().catch(() => ({}));
  if (!res.ok) throw refused(data, res);
  return data;
}

// A failed response as an error that keeps its status (japanese() reads it).
export function refused(data, res) {
  return Object.assign(new Error(failure(data, res)), { status: res.status });
}

// The events of a streamed answer: `event:` and `data:` lines, a blank line after each.
export async function readEvents(res, onEvent) {
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
