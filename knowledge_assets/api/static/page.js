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
  if (url.href !== location.href) history[push ? "pushState" : "replaceState"](null, "", url);
  sessionStorage.setItem("ka-search", url.pathname + url.search); // where a note's back link leads
}
