// The search page: search, ask (streamed answer with citations), past answers reopened from the
// history, and the note view.
// Plain DOM code in ES modules, one for each part of the page (search.js, answer.js, note.js);
// every text from the store goes through textContent or escape() (markup.js), and a note's body
// arrives as HTML the server rendered safely (GET /api/notes/{id}, field html).

import { ask, askStatus, loadHistory, moreHistory, newConversation, openHistoryEntry, showAddressedAnswer } from "./answer.js";
import { addressPath, showNote } from "./note.js";
import { $ } from "./page.js";
import { loadTags, restoreSearch, runSearch, showAddressedSearch } from "./search.js";
import { showStoreStatus } from "./status.js";

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
  $("question").addEventListener("input", () => askStatus("")); // typing answers the note
  $("history").addEventListener("click", openHistoryEntry);
  $("history-more").addEventListener("click", moreHistory);
  $("new-conversation").addEventListener("click", newConversation);
  window.addEventListener("popstate", () => { showAddressedSearch(); showAddressedAnswer(); });
  document.querySelectorAll("input[name=mode]").forEach((r) => r.addEventListener("change", () => $("q").value && runSearch()));
  $("tag").addEventListener("change", () => runSearch());
  const tagsLoaded = loadTags();
  loadHistory();
  restoreSearch(tagsLoaded);
  showAddressedAnswer();
  showStoreStatus();
}
