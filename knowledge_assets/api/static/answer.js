// The ask panel: a question and its streamed answer with citations, follow-up questions in one
// conversation, and past answers reopened from the history (the address names the one shown).
import { api, headers, japanese, readEvents, refused } from "./api.js";
import { cleanText, escape, noteUrl, sourceLabel } from "./markup.js";
import { $, setAddress } from "./page.js";

// Answers: Markdown quotes and paragraphs only; everything else is shown as text.
function renderAnswer(text) {
  return String(text).split(/\n{2,}/).map((block) => {
    if (/^>/.test(block)) return "<blockquote>" + block.split("\n").map((l) => inline(l.replace(/^>\s?/, ""))).join("<br>") + "</blockquote>";
    return "<p>" + inline(block).replace(/\n/g, "<br>") + "</p>";
  }).join("");
}

// Escaped text with its `code` spans shown as code: in the model's words and in the passages
// quoted from the notes alike.
function inline(text) {
  return escape(text).replace(/`([^`]+)`/g, "<code>$1</code>");
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
  $("related-notes").innerHTML = ""; $("related").hidden = true;
  $("confidence").textContent = ""; $("confidence").className = "badge";
  $("answer-meta").textContent = ""; $("answer-warnings").textContent = "";
  $("answer-foot").hidden = true;
  return ++answerTicket;
}

// What the ask form says of the question itself, under the box (nothing: the note goes).
export function askStatus(message) {
  $("ask-status").textContent = message;
  $("ask-status").hidden = !message;
  if (message) $("question").setAttribute("aria-invalid", "true"); else $("question").removeAttribute("aria-invalid");
}

function answerFailed(message) {
  $("answer-text").innerHTML = "<p class='warn'>" + escape(message) + "</p>";
}

const RESTARTED = "前の会話が履歴に見つからないため、新しい会話として答えました。";
const CUT_SHORT = "回答の途中でサーバーとの接続が切れました。もう一度質問してください。";

const STOPPED = "回答を止めました。";

function postQuestion(question, signal) {
  return fetch("/api/ai/qa", { method: "POST", headers: headers(), signal, body: JSON.stringify({ question, conversationId, options: { stream: true } }) });
}

// While an answer comes, 回答を止める ends it: a slow model (or one that writes at length) need
// not be waited out before the next question. What it wrote so far stays.
function stoppable() {
  const controller = new AbortController();
  const stop = $("answer-stop");
  stop.hidden = false;
  stop.onclick = () => controller.abort();
  return controller.signal;
}

export async function ask(event) {
  event.preventDefault();
  const question = $("question").value.trim();
  // An empty question is not sent: the reader is told what the button waits for.
  if (!question) { askStatus("質問を入力してから「質問する」を押してください。"); $("question").focus(); return; }
  askStatus("");
  const button = $("ask-form").querySelector("button");
  button.disabled = true;
  const ticket = startAnswer(question, "ノートを探しています…");
  // The button is disabled while the answer comes: the focus goes to the answer, not to <body>.
  $("answer").focus({ preventScroll: true });
  $("answer-text").setAttribute("aria-busy", "true");
  let text = "", done = false;
  const signal = stoppable();
  try {
    let res = await postQuestion(question, signal);
    // The conversation followed is no longer in the history (deleted since, or an old page's):
    // the question starts a new one, and the answer says so.
    const restarted = res.status === 404 && conversationId !== null;
    if (restarted) { conversationId = null; res = await postQuestion(question, signal); }
    if (!res.ok) throw refused(await res.json().catch(() => ({})), res);
    await readEvents(res, (kind, data) => {
      if (ticket !== answerTicket) return; // a past answer was opened meanwhile
      if (kind === "delta") { text += data.text; $("answer-text").innerHTML = renderAnswer(text); }
      else if (kind === "done") {
        done = true;
        showAnswer(restarted ? { ...data, warnings: [RESTARTED, ...(data.warnings || [])] } : data);
        setAddress({ answer: data.id }, true);
      }
      else if (kind === "error") throw new Error(data.error);
    });
    // A stream that ends before its answer (a proxy's timeout, a server stopped) said nothing.
    if (!done) throw new Error(CUT_SHORT);
  } catch (err) {
    if (ticket !== answerTicket) return;
    if (signal.aborted) $("answer-text").innerHTML = renderAnswer(text) + "<p class='warn'>" + STOPPED + "</p>";
    else answerFailed("答えられませんでした: " + japanese(err));
    $("answer-foot").hidden = !conversationId; // a failed follow-up leaves the conversation open
  } finally {
    $("answer-stop").hidden = true;
    button.disabled = false;
    $("answer-text").removeAttribute("aria-busy");
    loadHistory();
  }
}

// The offline answerer's model name (answer/config.py) means nothing to a reader: said in words.
const modelName = (model) => model === "extractive" ? "引用のみ（LLM なし）" : model;

// An answer from the history may be older than some of its metadata: what it lacks is left out.
function answerMeta(m, createdAt) {
  return [
    createdAt && new Date(createdAt).toLocaleString("ja-JP") + " の回答",
    m.model && modelName(m.model),
    m.retrievedNotes != null && `ノート ${m.retrievedNotes} 件を検索`,
    m.responseTime != null && `${Math.round(m.responseTime)} ms`,
    m.tokensUsed && `${m.tokensUsed} トークン`,
  ].filter(Boolean).join(" · ");
}

// A cited or related note: a link that opens it (at the section that answers, if any), its path
// and source, and what else is said of it.
function noteItem(s, extra) {
  const meta = escape(s.noteId) + sourceLabel(s.source) + (extra ? " · " + extra : "");
  return `<li><a class="citation" href="${noteUrl(s.noteId, s.source, s.heading)}">${escape(s.noteTitle)}</a> <span class="meta">${meta}</span></li>`;
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
  $("citations").innerHTML = data.sources.map((s) => noteItem(s, `関連度 ${({ high: "高", medium: "中", low: "低" })[s.relevance] || s.relevance}`)).join("");
  // An answer that found nothing still names the notes search found (an answer from before the
  // history kept them has none).
  const related = data.relatedNotes || [];
  $("related").hidden = related.length === 0;
  $("related-notes").innerHTML = related.map((s) => noteItem(s)).join("");
  $("answer-warnings").textContent = (data.warnings || []).map(japaneseWarning).join(" / ");
  $("answer-foot").hidden = false;
  markShown();
}

// The answer's warnings come in the API's English (answer/pipeline.py, answer/config.py): the
// page says the known ones in Japanese, with the values they carry; others as they come.
const WARNINGS = [
  [/^dropped citations of notes that were not retrieved: (.*)$/s, (ids) => `検索で見つからなかったノートが出典に挙がっていたため外しました: ${ids}`],
  [/^the model did not answer in clean JSON \(read as (.*)\)$/s, (how) => `モデルの返答が決まった形（JSON）ではなかったため、読み取れた範囲で表示しています（${how}）`],
  [/^the answer cites no note/, () => "回答はどのノートも出典に挙げていません。検索で見つかったノートと照らし合わせてください"],
  [/^the answer may stray from its notes: (\d+)% of its words/, (pct) => `回答の言葉のうちノートにあるのは ${pct}% だけです。ノートから離れている可能性があるため、出典と照らし合わせてください`],
  [/^the answer stopped at its length limit of ([\d,]+) tokens/, (n) => `回答は長さの上限（${n} トークン）で途切れています。全文には KA_LLM_MAX_TOKENS を増やしてください`],
  [/^Anthropic retires (\S+) on (\S+): set KA_LLM_MODEL to a current model \(unset, it is (\S+)\)$/, (model, day, current) => `${model} は ${day} に提供が終わります。KA_LLM_MODEL を現行のモデルにしてください（未設定なら ${current}）`],
];

function japaneseWarning(warning) {
  for (const [pattern, say] of WARNINGS) {
    const found = pattern.exec(warning);
    if (found) return say(...found.slice(1));
  }
  return warning;
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

export function newConversation() {
  closeAnswer();
  setAddress({ answer: null }, true);
  $("question").value = "";
  $("question").focus();
}

// The address names the answer shown (?answer=<history id>): Back, Forward and a reload follow it.
export function showAddressedAnswer() {
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

export function openHistoryEntry(event) {
  const link = event.target.closest("a.history-entry");
  // A modified click (a new tab, a new window) goes to the link's own address.
  if (!link || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  event.preventDefault();
  setAddress({ answer: link.dataset.id }, true);
  openAnswer(link.dataset.id);
  $("answer").focus({ preventScroll: true });
  $("answer").scrollIntoView({ block: "nearest" });
}

// Every offline answer opens with the same sentence (the notes are quoted, as no LLM is
// configured): in a two-line preview it would leave no room for what the answer says.
const OFFLINE_INTRO = /^ノートの該当箇所です（[^）]*）。\s*/;

function preview(entry) {
  return cleanText(entry.answer.replace(/^>\s?/gm, "")).replace(OFFLINE_INTRO, "");
}

// The newest questions first, HISTORY_PAGE of them; さらに表示 lists older ones, up to what one
// request of the history returns (its limit, 200).
const HISTORY_PAGE = 8, HISTORY_MORE = 20, HISTORY_MAX = 200;
let historyShown = HISTORY_PAGE;

export async function loadHistory() {
  const more = $("history-more");
  try {
    const data = await api(`/api/ai/qa/history?limit=${historyShown}`);
    $("history").innerHTML = data.data.length ? data.data.map((e) => `
      <li><a class="history-entry" href="/?answer=${encodeURIComponent(e.id)}" data-id="${escape(e.id)}">
      <div class="q">${escape(e.question)}</div><div class="a">${escape(preview(e))}</div>
      <div class="meta">${new Date(e.createdAt).toLocaleString("ja-JP")} · ${escape(modelName(e.model))}</div></a></li>`).join("")
      : "<li class='meta'>まだ質問はありません。</li>";
    const total = data.total ?? data.data.length; // a server from before the total: no more
    const left = Math.min(total, HISTORY_MAX) - data.data.length;
    more.hidden = left <= 0;
    more.textContent = `さらに ${Math.min(left, HISTORY_MORE)} 件を表示（全 ${total.toLocaleString("ja-JP")} 件）`;
    markShown();
  } catch (err) {
    more.hidden = true;
    $("history").innerHTML = "<li class='warn'>" + escape(japanese(err)) + "</li>";
  }
}

export function moreHistory() {
  historyShown = Math.min(historyShown + HISTORY_MORE, HISTORY_MAX);
  loadHistory();
}
