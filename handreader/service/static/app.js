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
    document.getElementById(`tab-${name}`).setAttribute("aria-selected", String(name === chosen));
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
