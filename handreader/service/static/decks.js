// Decks: the deck selector at the top (used by photo, live and dealer-check modes), the list of
// calibrated decks, and the calibration wizard (one card per photo, or the whole deck in a 13 x 4
// grid) that uploads the photos to POST /v1/decks/NAME and shows what was assigned.

import { $, el, ApiError, request, showError, cardChip, cardText, table, disableKeepingFocus, markInvalid } from "./common.js";

const CARD_SIDE = 1600; // longest side of a one-card photo sent (the corners stay sharp)
const GRID_SIDE = 4096; // a grid photo holds 52 cards: keep it large
const STORED = "handreader.deck";
// checks: each card's photo whose pixels the browser is still looking at (checkPixels);
// resume: where the cards went on before a photo was given back and its card shown again;
// replace: the user ticked "replace" for a name in use (sent as the API's ``replace``);
// renaming: back at the first step after the service refused the name, the photos kept
const wizard = { order: [], grid: null, codes: [], index: 0, photos: new Map(), urls: new Map(), checks: new Map(), resume: null, existing: new Set(), replace: false, renaming: false };
const listeners = [];

/** The deck chosen at the top ("" for the standard reading). */
export function chosenDeck() {
  return $("deck-select").value;
}

/** Call back with the deck's name ("" for none) whenever the choice changes. */
export function onDeckChange(callback) {
  listeners.push(callback);
}

/** The letters the deck prints in its indices ("" for none named: the API's ``indices``). */
export function chosenIndices() {
  return $("indices-select").value;
}

/** Call back with the letters ("" for none named) whenever the choice changes. */
export function onIndicesChange(callback) {
  $("indices-select").addEventListener("change", () => callback(chosenIndices()));
}

function choose(name) {
  const select = $("deck-select");
  select.value = [...select.options].some((option) => option.value === name) ? name : "";
  try {
    localStorage.setItem(STORED, select.value);
  } catch (_) {
    // storage refused (private mode): the choice lasts for this page only
  }
  for (const callback of listeners) callback(select.value);
}

function deckRow(deck) {
  if (!deck.usable) return [deck.name, null, null, null, el("span", { class: "bad" }, deck.problem)];
  const missing = deck.missing.length ? `${deck.missing.length}: ${deck.missing.slice(0, 8).map(cardText).join(" ")}${deck.missing.length > 8 ? " \u2026" : ""}` : "none";
  const status = deck.models_match === false ? "made for other models: calibrate again" : "ready";
  return [deck.name, `${deck.cards} (${deck.samples} corners)`, missing, deck.created.replace("T", " ").replace("Z", " UTC"), status];
}

/** Fetch the decks; fill the selector (keeping the choice, or choosing ``select``) and the list. */
export async function refreshDecks(select = null) {
  const answer = await (await request("/v1/decks")).json();
  wizard.order = answer.card_order;
  wizard.grid = answer.grid;
  wizard.existing = new Set(answer.decks.map((deck) => deck.name));
  const selector = $("deck-select");
  let wanted = select ?? selector.value;
  if (select === null && !selector.dataset.loaded) {
    try {
      wanted = localStorage.getItem(STORED) || "";
    } catch (_) {
      wanted = "";
    }
  }
  selector.dataset.loaded = "true";
  selector.replaceChildren(
    el("option", { value: "" }, "standard"),
    ...answer.decks.filter((deck) => deck.usable).map((deck) => el("option", { value: deck.name }, deck.name)),
  );
  const before = selector.value;
  selector.value = [...selector.options].some((option) => option.value === wanted) ? wanted : "";
  if (selector.value !== before || select !== null) choose(selector.value);
  $("decks-list").replaceChildren(
    answer.decks.length
      ? table("Calibrated decks", ["Name", "Cards", "Missing", "Made", "Status"], answer.decks.map(deckRow), { id: "decks-table" })
      : el("p", { class: "status" }, "No calibrated deck yet: the standard reading is used."),
  );
  return answer;
}

// --- the wizard --------------------------------------------------------------------------------

function layout() {
  return document.querySelector("input[name='wizard-layout']:checked").value;
}

function forget() {
  for (const url of wizard.urls.values()) URL.revokeObjectURL(url);
  wizard.photos.clear();
  wizard.urls.clear();
  wizard.checks.clear();
  wizard.resume = null;
  wizard.renaming = false;
}

/** Hide the choice offered for a name in use (untick it). */
function closeReplaceChoice() {
  $("wizard-replace-choice").hidden = true;
  $("wizard-replace").checked = false;
  $("wizard-rename").hidden = true;
}

/** What the person reads when the service refused to replace the deck ``name`` (409
 *  ``deck_exists``): the cards its message names as lost, what to do on this page. */
function replaceMessage(name, error, again) {
  const lost = /would lose (.+?)(?::|$)/.exec(error.message);
  let what = "exists";
  if (lost) {
    const more = /^(.*) and (\d+) more$/.exec(lost[1]);
    const named = (more ? more[1] : lost[1]).split(", ").filter(Boolean);
    const count = named.length + (more ? Number(more[2]) : 0);
    const list = named.map(cardText).join(" ") + (more ? ` and ${more[2]} more` : "");
    what = `exists and would lose ${count} card${count === 1 ? "" : "s"} (${list})`;
  } else if (/cannot be read/.test(error.message)) {
    what = "exists but cannot be read";
  }
  return new Error(`a deck named ${name} ${what}: tick "replace" and ${again}, or choose another name`);
}

function showStep(step) {
  const leaving = document.activeElement;
  $("wizard-setup").hidden = step !== "setup";
  $("wizard-cards").hidden = step !== "cards";
  $("wizard-grid").hidden = step !== "grid";
  // a control of the step left (its Back button) took the focus with it: the new step's first
  if (leaving && leaving !== document.body && leaving.offsetParent === null) {
    const first = $(`wizard-${step}`).querySelector("input:not([disabled]), select:not([disabled]), button:not([disabled])");
    if (first) first.focus();
  }
}

function showCard() {
  const focused = document.activeElement;
  const total = wizard.codes.length;
  const done = wizard.index >= total;
  const code = done ? null : wizard.codes[wizard.index];
  $("wizard-card").replaceChildren(done ? "every card: calibrate now" : cardChip(code));
  $("wizard-card").dataset.code = code || "";
  $("wizard-progress").textContent = done ? `${wizard.photos.size} photo${wizard.photos.size === 1 ? "" : "s"}` : `card ${wizard.index + 1} of ${total} \u00b7 ${wizard.photos.size} photo${wizard.photos.size === 1 ? "" : "s"} taken`;
  $("wizard-file").disabled = done;
  $("wizard-many").disabled = done;
  $("wizard-skip").disabled = done;
  $("wizard-back").disabled = wizard.index === 0;
  $("wizard-finish").disabled = wizard.photos.size === 0;
  $("wizard-finish").textContent = `Calibrate with ${wizard.photos.size} photo${wizard.photos.size === 1 ? "" : "s"}`;
  const taken = wizard.codes.filter((item) => wizard.photos.has(item));
  $("wizard-taken").replaceChildren(...taken.map((item) => el(
    "li",
    { "data-code": item },
    el("img", { src: wizard.urls.get(item), alt: `photo of ${item}` }),
    cardChip(item),
    el("button", { type: "button", class: "secondary remove", title: `remove the photo of ${item}`, "aria-label": `Remove the photo of ${item}`, "data-code": item }, "\u00d7"),
  )));
  // a control of this step that the keyboard was on and that is now disabled or gone (a remove
  // button, Skip on the last card, Back on the first) hands the focus to what is left to do
  if (!focused.isConnected || (focused.disabled && $("wizard-cards").contains(focused))) {
    const next = (done ? ["wizard-finish", "wizard-back"] : ["wizard-file", "wizard-skip", "wizard-finish"])
      .map((id) => $(id)).find((control) => !control.disabled);
    if (next) next.focus();
  }
}

/** Keep ``file`` as the photo of ``code``; false (the error shown) for a file that is no image.
 *  Its pixels are checked as it is kept (:func:`checkPixels`). */
function take(code, file) {
  if (file.type && !file.type.startsWith("image/")) {
    showError($("wizard-error"), new Error(`${file.name} is no photo (${file.type}): choose an image for ${cardText(code)}`));
    return false;
  }
  showError($("wizard-error"), null);
  if (wizard.urls.has(code)) URL.revokeObjectURL(wizard.urls.get(code));
  wizard.photos.set(code, file);
  wizard.urls.set(code, URL.createObjectURL(file));
  const check = checkPixels(code, file).finally(() => {
    if (wizard.checks.get(code) === check) wizard.checks.delete(code);
  });
  wizard.checks.set(code, check);
  return true;
}

/** The card after a photo was taken for the one shown: the next one, or back where the cards
 *  had got to when a photo given back showed its card again. */
function advance() {
  wizard.index = wizard.resume === null ? wizard.index + 1 : Math.max(wizard.resume, wizard.index + 1);
  wizard.resume = null;
}

/** The smallest side, in pixels, of a photo the server reads (vision.imageio.MIN_SIDE). */
const MIN_SIDE = 32;

/** Why ``file`` cannot be a card's photo (no image the browser decodes, or too small), or null.
 *  A TIFF, which most browsers cannot show, is left to the server. */
async function refusal(file) {
  let bitmap;
  try {
    bitmap = await createImageBitmap(file);
  } catch (_) {
    return /\.tiff?$/i.test(file.name) || file.type === "image/tiff" ? null : "is no image this page can read";
  }
  const { width, height } = bitmap;
  bitmap.close();
  return Math.min(width, height) < MIN_SIDE ? `is ${width} x ${height} pixels: too small to read a card in` : null;
}

/** A photo kept for ``code`` that is no image (a text file named .jpg) or too small is given
 *  back as soon as the browser has looked at it: named, and its card waits for another photo,
 *  so that the calibration is not refused whole at the end for one bad file. */
async function checkPixels(code, file) {
  const why = await refusal(file);
  if (!why || wizard.photos.get(code) !== file) return false;
  URL.revokeObjectURL(wizard.urls.get(code));
  wizard.urls.delete(code);
  wizard.photos.delete(code);
  const at = wizard.codes.indexOf(code);
  if (at >= 0 && at < wizard.index) {
    wizard.resume = Math.max(wizard.resume ?? 0, wizard.index);
    wizard.index = at;
  }
  showCard();
  showError($("wizard-error"), new Error(`${file.name} ${why}: choose another photo of ${cardText(code)}`));
  return true;
}

function start(event) {
  event.preventDefault();
  showError($("wizard-error"), null);
  $("wizard-result").hidden = true;
  $("wizard-status").textContent = "";
  // another name for the photos taken (the service refused the first): they are kept
  const keep = wizard.renaming && wizard.photos.size > 0 && layout() === "cards";
  if (!keep) forget();
  if (!$("wizard-setup").reportValidity()) return;
  // calibrating a name again replaces that deck: only when the replacement is asked for
  const name = $("wizard-name").value.trim();
  if (wizard.existing.has(name) && !$("wizard-replace").checked) {
    $("wizard-replace-choice").hidden = false;
    showError($("wizard-error"), new Error(`a deck named ${name} exists: tick "replace" to calibrate it again, or choose another name`));
    $("wizard-replace").focus();
    return;
  }
  wizard.replace = wizard.existing.has(name) && $("wizard-replace").checked;
  closeReplaceChoice();
  if (keep) {
    wizard.renaming = false;
    showStep("cards");
    showCard();
    $("wizard-finish").focus();
    return;
  }
  if (layout() === "grid") {
    showStep("grid");
    const rows = [];
    for (let row = 0; row < wizard.grid.rows; row += 1) {
      rows.push(wizard.grid.order.slice(row * wizard.grid.columns, (row + 1) * wizard.grid.columns).map(cardChip));
    }
    const grid = table("", Array.from({ length: wizard.grid.columns }, (_, index) => String(index + 1)), rows, { id: "wizard-grid-table" });
    grid.classList.remove("stacking"); // a layout keeps its rows and columns; it scrolls sideways when narrow
    $("wizard-layout").replaceChildren(grid);
    $("wizard-grid-file").focus();
    return;
  }
  const jokers = $("wizard-jokers").checked;
  wizard.codes = wizard.order.filter((code) => jokers || (code !== "JB" && code !== "JR"));
  wizard.index = 0;
  showStep("cards");
  showCard();
  $("wizard-file").focus();
}

/** The photo scaled down so that its longest side is at most ``side`` (JPEG), or the file. */
async function shrink(file, side) {
  let bitmap;
  try {
    bitmap = await createImageBitmap(file);
  } catch (_) {
    return file; // the browser cannot decode it: let the server say what is wrong
  }
  const scale = Math.min(1, side / Math.max(bitmap.width, bitmap.height));
  if (scale === 1 && file.size < 2_000_000) {
    bitmap.close();
    return file;
  }
  const canvas = document.createElement("canvas");
  canvas.width = Math.round(bitmap.width * scale);
  canvas.height = Math.round(bitmap.height * scale);
  canvas.getContext("2d").drawImage(bitmap, 0, 0, canvas.width, canvas.height);
  bitmap.close();
  const blob = await new Promise((resolve) => canvas.toBlob(resolve, "image/jpeg", 0.92));
  return blob || file;
}

function resultView(name, answer) {
  const deck = answer.deck;
  const parts = [
    el("p", { class: "summary", id: "wizard-done" }, `Deck ${name}: ${deck.cards} card${deck.cards === 1 ? "" : "s"} from ${deck.samples} corner${deck.samples === 1 ? "" : "s"}, in ${answer.seconds} s. It is now chosen at the top.`),
  ];
  const old = answer.replaced;
  if (old) parts.push(el("p", { id: "wizard-replaced" }, old.problem ? `It replaced the deck ${old.name}, whose profile could not be read.` : `It replaced the deck ${old.name} of ${old.cards} card${old.cards === 1 ? "" : "s"}, made ${old.created.replace("T", " ").replace("Z", " UTC")}.`));
  if (deck.missing.length) parts.push(el("p", {}, "Not calibrated (read as the standard deck): ", el("span", { class: "cards" }, deck.missing.map(cardChip))));
  if (answer.warnings.length) parts.push(el("ul", { class: "warnings" }, answer.warnings.map((text) => el("li", {}, text))));
  parts.push(el("p", { class: "status", id: "wizard-sheet-help" }, "Each corner found, labelled with the card it was photographed for. A picture showing another card than its label was taken for the wrong card: calibrate again with that card's photo taken anew."));
  parts.push(el("img", { id: "wizard-sheet", class: "sheet", src: answer.sheet, alt: "the contact sheet: each corner found, labelled with the card it was photographed for", "aria-describedby": "wizard-sheet-help" }));
  parts.push(el("p", {}, el("button", { type: "button", id: "wizard-use" }, "Read a photo with this deck"), " ", el("button", { type: "button", id: "wizard-again", class: "secondary" }, "Calibrate another deck")));
  return parts;
}

async function send(form) {
  const name = $("wizard-name").value.trim();
  showError($("wizard-error"), null);
  $("wizard-status").textContent = "Calibrating\u2026";
  $("wizard-result").hidden = true;
  disableKeepingFocus($("wizard-finish"), $("wizard-status"));
  for (const id of ["wizard-grid-file", "wizard-file", "wizard-many"]) $(id).disabled = true;
  try {
    const token = $("wizard-token").value.trim();
    const headers = token ? { Authorization: `Bearer ${token}` } : {};
    // the server refuses (409 deck_exists) a replacement that loses cards unless asked: at
    // the start, or here after such a refusal
    const replace = wizard.replace || (!$("wizard-replace-choice").hidden && $("wizard-replace").checked);
    if (replace) form.set("replace", "true");
    const response = await request(`/v1/decks/${encodeURIComponent(name)}`, { method: "POST", headers, body: form });
    const answer = await response.json();
    await refreshDecks(name);
    forget();
    closeReplaceChoice();
    showStep("setup");
    $("wizard-result").replaceChildren(...resultView(name, answer));
    $("wizard-result").hidden = false;
    // the status line (a live region) says it is done, and the focus goes to the result's
    // summary, which says what was made: the result is shown once
    $("wizard-status").textContent = "Calibrated.";
    $("wizard-done").setAttribute("tabindex", "-1");
    $("wizard-done").focus();
    $("wizard-use").addEventListener("click", () => {
      history.replaceState(null, "", "#photo");
      window.dispatchEvent(new HashChangeEvent("hashchange"));
    });
    $("wizard-again").addEventListener("click", () => {
      $("wizard-result").hidden = true;
      $("wizard-name").value = "";
      $("wizard-name").focus();
    });
  } catch (error) {
    $("wizard-status").textContent = "";
    if (error instanceof ApiError && error.code === "deck_exists") {
      // a deck of that name made meanwhile: replaced here if ticked, the photos kept
      wizard.existing.add(name);
      const grid = !$("wizard-grid").hidden;
      $("wizard-replace-choice").hidden = false;
      $("wizard-replace").checked = false;
      $("wizard-rename").hidden = grid; // the grid step goes back to the name itself
      showError($("wizard-error"), replaceMessage(name, error, grid ? "choose the photo again" : "press Calibrate again"));
    } else {
      showError($("wizard-error"), error);
      if (error.code === "unauthorized") markInvalid($("wizard-token"), $("wizard-error"));
    }
  } finally {
    $("wizard-grid-file").disabled = false;
    if (!$("wizard-cards").hidden) showCard();
    if (document.activeElement === $("wizard-status")) {
      // (a failed calibration: the focus goes back to the step's control, or to the choice
      // of replacing the deck the service would not replace unasked)
      if (!$("wizard-replace-choice").hidden) $("wizard-replace").focus();
      else if (!$("wizard-cards").hidden) $("wizard-finish").focus();
      else if (!$("wizard-grid").hidden) $("wizard-grid-file").focus();
    }
  }
}

async function finishCards() {
  // the photos the browser is still looking at first: one given back is named, nothing sent
  const pending = [...wizard.checks.values()];
  if (pending.length) {
    $("wizard-finish").disabled = true;
    const given = (await Promise.all(pending)).some(Boolean);
    $("wizard-finish").disabled = wizard.photos.size === 0;
    if (given) return;
  }
  const form = new FormData();
  const codes = [];
  $("wizard-status").textContent = "Preparing the photos\u2026";
  for (const code of wizard.codes) {
    if (!wizard.photos.has(code)) continue;
    form.append("photo", await shrink(wizard.photos.get(code), CARD_SIDE), `${code}.jpg`);
    codes.push(code);
  }
  form.append("layout", "cards");
  form.append("codes", codes.join(" "));
  await send(form);
}

async function finishGrid(file) {
  const form = new FormData();
  $("wizard-status").textContent = "Preparing the photo\u2026";
  form.append("photo", await shrink(file, GRID_SIDE), file.name || "deck.jpg");
  form.append("layout", "grid");
  await send(form);
}

export function setupDecks() {
  $("wizard-name").addEventListener("input", closeReplaceChoice);
  $("wizard-rename").addEventListener("click", () => {
    // back to the name, the photos kept: Start goes on from them under the new name
    wizard.renaming = true;
    closeReplaceChoice();
    showError($("wizard-error"), null);
    showStep("setup");
    $("wizard-name").focus();
    $("wizard-name").select();
  });
  $("deck-select").addEventListener("change", () => choose($("deck-select").value));
  $("wizard-setup").addEventListener("submit", start);
  $("wizard-file").addEventListener("change", () => {
    const input = $("wizard-file");
    if (input.files && input.files[0] && wizard.index < wizard.codes.length) {
      if (take(wizard.codes[wizard.index], input.files[0])) advance();
      input.value = "";
      showCard();
    }
  });
  $("wizard-many").addEventListener("change", () => {
    const input = $("wizard-many");
    for (const file of input.files || []) {
      if (wizard.index >= wizard.codes.length) break;
      if (!take(wizard.codes[wizard.index], file)) break;  // named; the card waits for a photo
      advance();
    }
    input.value = "";
    showCard();
  });
  $("wizard-skip").addEventListener("click", () => {
    advance();
    wizard.index = Math.min(wizard.index, wizard.codes.length);
    showCard();
  });
  $("wizard-back").addEventListener("click", () => {
    wizard.index = Math.max(wizard.index - 1, 0);
    showCard();
  });
  $("wizard-taken").addEventListener("click", (event) => {
    const button = event.target.closest("button.remove");
    if (!button) return;
    const code = button.dataset.code;
    URL.revokeObjectURL(wizard.urls.get(code));
    wizard.urls.delete(code);
    wizard.photos.delete(code);
    showCard();
  });
  $("wizard-finish").addEventListener("click", finishCards);
  $("wizard-grid-file").addEventListener("change", () => {
    const input = $("wizard-grid-file");
    if (input.files && input.files[0]) finishGrid(input.files[0]);
    input.value = "";
  });
  $("wizard-grid-back").addEventListener("click", () => {
    closeReplaceChoice();
    showStep("setup");
  });
  refreshDecks().catch((error) => showError($("wizard-error"), error));
}
