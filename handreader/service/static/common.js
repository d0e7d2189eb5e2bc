// Helpers shared by the page's modes: requests, errors, cards and tables.

/** The element with this id (throws when the page lacks it: a bug, not a user error). */
export function $(id) {
  const element = document.getElementById(id);
  if (!element) throw new Error(`no element #${id}`);
  return element;
}

/** An element with attributes and children (strings become text, never HTML). */
export function el(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") element.className = value;
    else if (name === "text") element.textContent = value;
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

/** An error of the API: its code and message ({"error": {"code", "message"}}). */
export class ApiError extends Error {
  constructor(code, message, status) {
    super(message);
    this.code = code;
    this.status = status;
  }
}

async function failure(response) {
  let code = `http_${response.status}`;
  let message = response.statusText || "request failed";
  try {
    const body = await response.json();
    if (body && body.error) {
      code = body.error.code;
      message = body.error.message;
    }
  } catch (_) {
    // not JSON: keep the status line
  }
  return new ApiError(code, message, response.status);
}

/** fetch that throws ApiError for a status other than 2xx; returns the Response. */
export async function request(url, options = {}) {
  let response;
  try {
    response = await fetch(url, options);
  } catch (error) {
    throw new ApiError("network", "the service could not be reached: check that it is running and that this device is online", 0);
  }
  if (!response.ok) throw await failure(response);
  return response;
}

/** POST JSON, answer JSON. */
export async function postJson(url, body, headers = {}) {
  const response = await request(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return response.json();
}

/** A multipart body: the image file and the options as a JSON field. */
export function imageForm(file, options) {
  const form = new FormData();
  form.append("image", file, file.name || "photo.jpg");
  form.append("options", JSON.stringify(options));
  return form;
}

/** Show an error in a box (or hide the box when error is null). */
/** The stake typed in ``input``: an empty field bets 1; anything else that is no positive
 *  number throws an Error naming it (never replaced in silence). A number field the browser
 *  cannot parse ("12-3") reads as "" but is not empty: its ``validity.badInput`` says so. */
export function typedStake(input) {
  const text = input.value.trim();
  input.setAttribute("aria-invalid", "true"); // until the stake is found good
  if (input.validity && input.validity.badInput) throw new Error("the stake must be a positive number, not what is typed");
  if (text === "") {
    input.removeAttribute("aria-invalid");
    return 1;
  }
  const value = Number(text);
  if (!(Number.isFinite(value) && value > 0)) throw new Error(`the stake must be a positive number, not ${text}`);
  input.removeAttribute("aria-invalid");
  return value;
}

/** Disable ``button``; when it holds the focus, hand the focus to ``holder`` first (made
 *  focusable by script, tabindex -1), so a keyboard user is not dropped to the page's start. */
export function disableKeepingFocus(button, holder) {
  if (document.activeElement === button) {
    if (!holder.hasAttribute("tabindex")) holder.setAttribute("tabindex", "-1");
    holder.focus();
  }
  button.disabled = true;
}

/** Enable ``button`` again; the focus ``holder`` took from it goes back to it. */
export function enableTakingFocus(button, holder) {
  button.disabled = false;
  if (document.activeElement === holder) button.focus();
}

export function showError(box, error) {
  if (!error) {
    box.hidden = true;
    box.textContent = "";
    return;
  }
  box.hidden = false;
  box.textContent = error instanceof ApiError ? `${pageWords(error)} (${error.code})` : pageWords(error);
}

/** An error in the page's words: a refused operator token names the page's field, not the
 *  HTTP header the API's message speaks of; a file that is no image is named without its
 *  first bytes. */
export function pageWords(error) {
  if (error instanceof ApiError && error.code === "unauthorized") {
    const said = String(error.message).replace(/:?\s*send it as .*$/i, "").replace(/\s*\(Bearer\)/, "");
    return `${said}: type it in the Operator token field`;
  }
  // the bytes a file starts with name the problem to the API's user, not to the page's
  if (error instanceof ApiError && error.code === "unsupported_type") return String(error.message).replace(/:\s*first bytes [0-9a-f ]+$/i, "");
  return String(error.message || error);
}

/** Mark ``field`` invalid (aria-invalid, described by the error ``box`` after its own
 *  description, if it has one) until it is edited: then its own description alone again. */
export function markInvalid(field, box) {
  if (field.getAttribute("aria-invalid") === "true") return; // marked already, until edited
  const own = field.getAttribute("aria-describedby");
  field.setAttribute("aria-invalid", "true");
  field.setAttribute("aria-describedby", own ? `${own} ${box.id}` : box.id);
  field.addEventListener("input", () => {
    field.removeAttribute("aria-invalid");
    if (own) field.setAttribute("aria-describedby", own);
    else field.removeAttribute("aria-describedby");
  }, { once: true });
}

/** Mark what ``shown`` elements hold out of date, their banner saying ``text`` (style.css
 *  .stale); null: up to date. */
export function markStale(shown, text) {
  for (const element of shown) {
    element.classList.toggle("stale", text !== null);
    if (text === null) delete element.dataset.stale;
    else element.dataset.stale = text;
  }
}

const SUITS = { S: "\u2660", H: "\u2665", D: "\u2666", C: "\u2663" };

/** A card code shown with its suit symbol: "10H" -> "10♥"; jokers as "Joker". */
export function cardText(code) {
  if (code === "JR" || code === "JB") return code === "JR" ? "Joker (red)" : "Joker (black)";
  const suit = code.slice(-1);
  return SUITS[suit] ? code.slice(0, -1) + SUITS[suit] : code;
}

/** A card as a chip: red suits in red; bull cards in a double frame on yellow, with "bull" said
 *  to screen readers (not by colour alone); uncertain cards dashed. */
export function cardChip(card) {
  const code = typeof card === "string" ? card : card.card;
  const red = code === "JR" || /[HD]$/.test(code);
  const classes = ["card"];
  if (red) classes.push("red");
  if (typeof card === "object" && card.part === "bull") classes.push("bull");
  if (typeof card === "object" && card.uncertain) classes.push("uncertain");
  const title = typeof card === "object" && card.confidence !== undefined ? `${code} (${card.confidence})` : code;
  const bull = classes.includes("bull") ? el("span", { class: "visually-hidden" }, " (bull)") : null;
  return el("span", { class: classes.join(" "), title, "data-code": code }, cardText(code) + (typeof card === "object" && card.uncertain ? "?" : ""), bull);
}

/** Chips for a list of cards. */
export function cardChips(cards) {
  return el("span", { class: "cards" }, (cards || []).map(cardChip));
}

/** A table: caption, header cells, rows of cells (strings or nodes). Each cell carries its
 *  column's name (data-label), shown beside it where a narrow screen stacks the cells. */
export function table(caption, headers, rows, attributes = {}) {
  return el(
    "table",
    { ...attributes, class: ["stacking", attributes.class].filter(Boolean).join(" ") },
    caption ? el("caption", {}, caption) : null,
    el("thead", {}, el("tr", {}, headers.map((name) => el("th", { scope: "col" }, name)))),
    el("tbody", {}, rows.map((cells) => el("tr", {}, cells.map((cell, index) => el("td", { "data-label": headers[index] || null }, cell ?? "\u2013"))))),
  );
}

/** A signed amount: +95, -100, 0. */
export function money(value) {
  if (value === null || value === undefined) return "\u2013";
  const number = Number(value);
  const shown = Number.isInteger(number) ? String(number) : number.toFixed(2).replace(/\.?0+$/, "");
  return number > 0 ? `+${shown}` : shown;
}

/** Colours of the drawing by role (RGB), as in the server's annotator where it has one. */
export const ROLE_COLOURS = {
  banker: "rgb(230, 180, 20)",
  dealer: "rgb(230, 180, 20)",
  player: "rgb(31, 119, 180)",
  hand: "rgb(44, 160, 44)",
};
export const SEAT_COLOURS = ["rgb(31, 119, 180)", "rgb(44, 160, 44)", "rgb(148, 103, 189)", "rgb(23, 190, 207)", "rgb(227, 119, 194)", "rgb(140, 86, 75)", "rgb(188, 189, 34)"];

/**
 * Let ``figure`` be enlarged to the whole screen (scrollable, pinch-zoomable; style.css
 * .picture.enlarged) by ``button`` or a tap on one of ``shown``, and back by the button, a tap
 * or Escape. The button's label says what it does ("Enlarge", "Close"; no aria-pressed, its
 * label changes). Enlarged, the figure is a modal dialog: the rest of the page is inert, the
 * focus goes to Close (opened by the button or a tap) and stays there, and Escape closes it
 * (its default prevented, so no other Escape handler of the page acts on it). The drawing is
 * made again at its new size (a resize event), so its labels keep their size on the screen.
 * Returns a function that sets it (true: enlarged).
 */
export function enlargeable(figure, button, shown) {
  let covered = [];
  const set = (on) => {
    if (on === figure.classList.contains("enlarged")) return;
    figure.classList.toggle("enlarged", on);
    button.textContent = on ? "Close" : "Enlarge";
    if (on) {
      figure.setAttribute("role", "dialog");
      figure.setAttribute("aria-modal", "true");
      figure.setAttribute("aria-label", "The photo enlarged");
      for (let node = figure; node.parentElement && node !== document.body; node = node.parentElement) {
        for (const sibling of node.parentElement.children) {
          if (sibling !== node && !sibling.inert) {
            sibling.inert = true;
            covered.push(sibling);
          }
        }
      }
    } else {
      for (const name of ["role", "aria-modal", "aria-label"]) figure.removeAttribute(name);
      for (const element of covered) element.inert = false;
      covered = [];
    }
    window.dispatchEvent(new Event("resize"));
  };
  const toggle = () => {
    set(!figure.classList.contains("enlarged"));
    // a tap on the photo opens the dialog too: the focus goes to its Close, as by the button
    if (figure.classList.contains("enlarged")) button.focus();
  };
  for (const element of shown) element.addEventListener("click", toggle);
  button.addEventListener("click", toggle);
  document.addEventListener("keydown", (event) => {
    if (!figure.classList.contains("enlarged")) return;
    if (event.key === "Escape") {
      event.preventDefault(); // closing is all it does: live.js's Escape leaves it be
      set(false);
      button.focus();
    } else if (event.key === "Tab") {
      event.preventDefault(); // the enlarged photo covers the page: the focus stays on Close
      button.focus();
    }
  }, { capture: true }); // before the page's other keydown handlers, whenever they were added
  return set;
}
