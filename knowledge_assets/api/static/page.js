// The page itself: its elements by id, the address it was opened at, and the address kept in step
// with what it shows (a search typed, an answer opened).
export const params = new URLSearchParams(location.search);
export const $ = (id) => document.getElementById(id);

// Sets (or, given no value, removes) parameters of the address: pushed as a new entry of the
// browser's history (an answer opened), or in place of the current one (a search typed).
export function setAddress(values, push) {
  const url = new URL(location.href);
  for (const [name, value] of Object.entries(values)) {
    if (value) url.searchParams.set(name, value); else url.searchParams.delete(name);
  }
  // An address replaced in place keeps the entry's state: where the reader had scrolled.
  if (url.href !== location.href) history[push ? "pushState" : "replaceState"](push ? null : history.state, "", url);
  sessionStorage.setItem("ka-search", url.pathname + url.search); // where a note's back link leads
}

// Where the reader had scrolled, kept in this entry of the history: the notes arrive after the
// page has loaded, too late for the browser to scroll back to them by itself after Back or a
// reload. Kept as scrolling settles and as a link is clicked (a state set while the page is
// being left is not kept), but only once the page is back where it was: the browser's own
// attempt, on a page still half loaded, would overwrite it.
let settled = false;
const keepScroll = () => settled && history.replaceState({ ...history.state, scrollY }, "");
let scrolled = 0;
addEventListener("scroll", () => { clearTimeout(scrolled); scrolled = setTimeout(keepScroll, 200); }, { passive: true });
document.addEventListener("click", keepScroll, true);

// Once what the address names is shown again: back to where the reader was (restore), or only
// from now on keeping where they scroll (nothing was shown that a position could belong to).
export function restoreScroll(restore = true) {
  const y = history.state?.scrollY;
  if (restore && y) scrollTo(0, y);
  settled = true;
}
