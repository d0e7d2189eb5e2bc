// The page's entry: switches between the modes (tabs, and the URL's #photo / #live / #trainer /
// #verify / #decks) and sets each mode up. No build step: ES modules served as they are.

import { setupPhoto } from "./photo.js";
import { setupLive, stopLive } from "./live.js";
import { setupTrainer } from "./trainer.js";
import { setupVerify } from "./verify.js";
import { setupDecks } from "./decks.js";

const MODES = ["photo", "live", "trainer", "verify", "decks"];

function show(mode) {
  const chosen = MODES.includes(mode) ? mode : "photo";
  for (const name of MODES) {
    document.getElementById(`mode-${name}`).hidden = name !== chosen;
    const tab = document.getElementById(`tab-${name}`);
    tab.setAttribute("aria-selected", String(name === chosen));
    tab.tabIndex = name === chosen ? 0 : -1; // one tab stop for the tab list (roving tabindex)
  }
  if (chosen !== "live") stopLive();
  document.body.dataset.mode = chosen;
}

function main() {
  for (const button of document.querySelectorAll("nav [data-mode]")) {
    button.addEventListener("click", () => {
      history.replaceState(null, "", `#${button.dataset.mode}`);
      show(button.dataset.mode);
    });
  }
  // the tab list answers the arrow keys, Home and End, as a tab list does
  document.querySelector("nav[role=tablist]").addEventListener("keydown", (event) => {
    const tabs = [...document.querySelectorAll("nav [data-mode]")];
    const at = tabs.indexOf(document.activeElement);
    if (at < 0) return;
    const next = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: tabs.length - 1 }[event.key];
    if (next === undefined) return;
    event.preventDefault();
    const tab = tabs[(next + tabs.length) % tabs.length];
    tab.focus();
    tab.click();
  });
  window.addEventListener("hashchange", () => show(location.hash.slice(1)));
  setupPhoto();
  setupLive();
  setupTrainer();
  setupVerify();
  setupDecks();
  show(location.hash.slice(1));
  document.body.dataset.ready = "true";
}

main();
