// Photo mode: a photo in; the photo with the reading drawn over it and the results (hands,
// splits, scores, winner, payouts) out. Each photo is sent once: the answer's boxes are drawn
// here over the photo as the browser shows it (draw.js). Changing an option marks the results
// out of date and reads the photo again with it.

import { $, el, markStale, request, imageForm, showError, cardChips, table, money, typedStake, disableKeepingFocus, enableTakingFocus, enlargeable, ROLE_COLOURS, SEAT_COLOURS } from "./common.js";
import { chosenDeck, chosenIndices, onDeckChange, onIndicesChange } from "./decks.js";
import { drawScene, clearScene, loadPicture, niuniuScene, statusText } from "./draw.js";

const GAME_ENDPOINTS = { niuniu: "/v1/score", pits: "/v1/pits", baccarat: "/v1/baccarat", blackjack: "/v1/blackjack", paigow: "/v1/paigow" };
let annotatedUrl = null;
const state = { file: null, generation: 0, shown: false, shownFile: null };

function stake() {
  return typedStake($("photo-stake"));
}

/** What each reading flag means, in the page's words (the API documents the same). */
const FLAG_MEANINGS = {
  low_confidence: "a card read uncertainly, marked ?: it decides nothing",
  duplicate: "a card seen more often than the decks hold",
  wrong_count: "a hand with more or fewer cards than the game's",
  unreadable: "the photo could not be read",
  colourless: "the photo has no colour: a card read in a black suit may be red, marked ?",
};

/** The options of the chosen game, as the endpoint's options model names them. */
export function photoOptions(game) {
  switch (game) {
    case "niuniu": {
      const options = {
        profile: $("photo-profile").value,
        mode: $("photo-mode").value,
        banker_rule: $("photo-banker-rule").value,
        stake: stake(),
      };
      if ($("photo-bet").value) options.bet = $("photo-bet").value;
      return options;
    }
    case "pits": {
      const options = { table: $("photo-pits-table").value.trim() };
      if ($("photo-pits-kind").value) options.kind = $("photo-pits-kind").value;
      return options;
    }
    case "baccarat": {
      const options = { player_side: $("photo-baccarat-side").value, stake: stake() };
      if ($("photo-baccarat-bet").value) options.bet = $("photo-baccarat-bet").value;
      return options;
    }
    case "blackjack":
      return { dealer_side: $("photo-blackjack-side").value, hit_soft_17: $("photo-hit-soft-17").checked, stake: stake() };
    case "paigow":
      return { player_side: $("photo-paigow-side").value, stake: stake() };
    default:
      throw new Error(`unknown game ${game}`);
  }
}

function showGameOptions() {
  const game = $("photo-game").value;
  for (const element of document.querySelectorAll("#photo-form [data-games]")) {
    element.hidden = !element.dataset.games.split(" ").includes(game);
  }
}

// --- results -----------------------------------------------------------------------------------

function handScore(hand) {
  if (!hand.score) return statusText(hand);
  if (hand.status === "scored") return hand.score.label;
  return hand.status === "uncertain" ? `unverified (provisional ${hand.score.label}?)` : `${hand.score.label} (${hand.status})`;
}

/** The results of a Niu Niu table (TableOut). */
export function niuniuResults(result) {
  const parts = [];
  const seatName = (seat) => (result.banker === seat ? `${seat} (banker)` : String(seat));
  if (result.hands.length) {
    parts.push(table(
      "Hands (the bull's cards in a double frame)",
      ["Seat", "Role", "Cards", "Score", "Note"],
      result.hands.map((hand) => [seatName(hand.seat), hand.role, cardChips(hand.cards), handScore(hand), hand.problem]),
      { id: "photo-hands" },
    ));
  }
  if (result.mode === "banker" && result.players.length) {
    parts.push(table(
      "Players against the banker",
      ["Seat", "Outcome", "Net", "Multiple", "Commission", "Bet", "Note"],
      result.players.map((player) => [
        String(player.seat), player.outcome, money(player.net), player.multiple === null ? null : `x${player.multiple}`,
        player.commission === null ? null : String(player.commission), player.bet, player.problem,
      ]),
      { id: "photo-players" },
    ));
    parts.push(el("p", { class: "summary" }, `Banker's net: ${money(result.banker_net)}`));
  }
  if (result.mode === "trainer") {
    const winners = result.winners.map(String).join(", ");
    parts.push(el("p", { class: "summary" }, result.winners.length ? `Winner: seat ${winners}${result.tie ? " (tie)" : ""}` : "No winner"));
  }
  if (result.left_over.length) parts.push(el("p", {}, "Cards outside every hand: ", cardChips(result.left_over)));
  if (result.problem) parts.push(el("p", { class: "error" }, result.problem));
  if (result.flags.length) parts.push(el("p", { class: "status" }, `Flags: ${result.flags.map((flag) => `${flag} (${FLAG_MEANINGS[flag] || "see the API documentation"})`).join(", ")}`));
  return parts;
}

function pitsResults(result) {
  return [table(
    "Play",
    ["Cards", "On the table", "Combination", "Legal", "Why"],
    [[cardChips(result.cards), cardChips(result.table), result.description, result.legal === null ? null : result.legal ? "yes" : "no", result.reason]],
    { id: "photo-hands" },
  )];
}

function baccaratResults(result) {
  const side = (name, data) => [name, cardChips(data.cards), String(data.total), data.natural ? "yes" : "no", data.must_draw ? "yes" : "no"];
  const parts = [table("Coup", ["Side", "Cards", "Total", "Natural", "Must draw"], [side("Player", result.player), side("Banker", result.banker)], { id: "photo-hands" })];
  if (result.problem) parts.push(el("p", { class: "error" }, result.problem));
  parts.push(el("p", { class: "summary" }, result.result ? `Result: ${result.result}` : "The coup is not over"));
  if (result.bets.length) {
    parts.push(table("Bets", ["Bet", "Stake", "Outcome", "Net"], result.bets.map((bet) => [bet.bet, String(bet.stake), bet.outcome, money(bet.net)]), { id: "photo-players" }));
  }
  return parts;
}

function blackjackResults(result) {
  const dealer = result.dealer;
  return [
    table("Dealer", ["Cards", "Total", "Action"], [[cardChips(dealer.cards), dealer.description, dealer.action]], { id: "photo-hands" }),
    table(
      "Players",
      ["Seat", "Cards", "Total", "Outcome", "Net"],
      result.players.map((player, index) => [String(index + 1), cardChips(player.hand.cards), player.hand.description, player.outcome ?? "dealer must hit", money(player.net)]),
      { id: "photo-players" },
    ),
  ];
}

function paigowResults(result) {
  const row = (name, setting) => [name, cardChips(setting.high.cards), setting.high.description, cardChips(setting.low.cards), setting.low.description];
  const rows = [row("Player", result.player)];
  if (result.banker) rows.push(row("Banker", result.banker));
  const parts = [table(`Settings (${result.set_by.replace("_", " ")})`, ["Hand", "High (5)", "", "Low (2)", ""], rows, { id: "photo-hands" })];
  if (result.outcome) {
    parts.push(el("p", { class: "summary" }, `High: ${result.high} \u00b7 Low: ${result.low} \u00b7 Outcome: ${result.outcome} ${money(result.net)}`));
  }
  return parts;
}

const GAME_RESULTS = { baccarat: baccaratResults, blackjack: blackjackResults, paigow: paigowResults };

/** The results of a photo of another game (the photo answer of web_games). */
function gamePhotoResults(game, answer) {
  const parts = [];
  if (answer.result) parts.push(...GAME_RESULTS[game](answer.result));
  else {
    parts.push(table(
      "Cards read",
      ["Seat", "Role", "Cards"],
      answer.hands.map((hand) => [String(hand.seat), hand.role, cardChips(hand.cards)]),
      { id: "photo-hands" },
    ));
  }
  if (answer.problem) parts.push(el("p", { class: "error" }, pageProblem(answer.problem)));
  return parts;
}

/** A problem of the games' API told for the page, which has no region controls: the advice
 *  to "give player_region and banker_region" becomes the advice to lay the hands apart. */
export function pageProblem(text) {
  return text.replace(/: give (\w+)_region( and (\w+)_region)?$/, (_, first, __, second) =>
    second
      ? `: lay the ${first}'s and the ${second}'s cards apart, in two groups, and read the photo again`
      : `: lay the ${first}'s cards apart from the others and read the photo again`);
}

/** The answer in one sentence, for the status line that screen readers announce. */
export function resultSummary(game, answer) {
  if (game === "niuniu") {
    const read = answer.hands.filter((hand) => hand.score).length;
    const hands = `${answer.hands.length} hand${answer.hands.length === 1 ? "" : "s"} (${read} scored)`;
    if (answer.problem) return `${hands}; ${answer.problem}`;
    if (answer.mode === "banker") {
      if (answer.banker_net !== null) return `${hands}; banker's net ${money(answer.banker_net)}`;
      // a photo of one hand (the example's): its score, and no "cannot" about a banker it lacks
      if (answer.hands.length === 1 && answer.hands[0].score) return `1 hand: ${answer.hands[0].score.label}; no other hand to settle it against`;
      return `${hands}; the banker's net cannot be settled`;
    }
    return answer.winners.length ? `${hands}; winner: seat ${answer.winners.join(", ")}` : `${hands}; no winner`;
  }
  if (game === "pits") {
    const what = answer.description || "no combination";
    if (answer.legal === null) return `${what}: no verdict${answer.reason ? ` (${answer.reason})` : ""}`;
    if (answer.legal) return `${what}: legal`;
    // the reason names the play itself ("KD KC KH KS AH is no combination: ..."): said once
    return answer.reason && answer.reason.includes(what) ? `illegal: ${answer.reason}` : `${what}: illegal, ${answer.reason}`;
  }
  const result = answer.result;
  if (!result) return answer.problem ? pageProblem(answer.problem) : `${answer.hands.length} hands read`;
  if (game === "baccarat") return result.result ? `result: ${result.result}` : "the coup is not over";
  if (game === "blackjack") return result.players.map((player, index) => `seat ${index + 1}: ${player.outcome ?? "dealer must hit"}`).join("; ");
  return result.outcome ? `outcome: ${result.outcome} ${money(result.net)}` : "settings read";
}

// --- drawing ---------------------------------------------------------------------------------

function gameColour(hand) {
  if (hand.role === "banker" || hand.role === "dealer") return ROLE_COLOURS.banker;
  if (hand.role === "player") return SEAT_COLOURS[Math.max(hand.seat - 1, 0) % SEAT_COLOURS.length];
  return ROLE_COLOURS.hand;
}

function gameScene(game, answer) {
  return {
    size: answer.size,
    hands: answer.hands.map((hand) => ({
      box: hand.box,
      colour: gameColour(hand),
      label: hand.role === "player" && game === "blackjack" ? `player ${hand.seat}` : hand.role,
      tag: hand.seat === null || hand.seat === undefined ? undefined : String(hand.seat),
      cards: hand.cards,
    })),
  };
}

function pitsScene(result, size) {
  const boxes = result.cards.map((card) => card.box).filter(Boolean);
  const box = boxes.length
    ? [Math.min(...boxes.map((b) => b[0])), Math.min(...boxes.map((b) => b[1])), Math.max(...boxes.map((b) => b[2])), Math.max(...boxes.map((b) => b[3]))]
    : null;
  const verdict = result.legal === null ? "" : result.legal ? " \u00b7 legal" : " \u00b7 illegal";
  return {
    size,
    // the label short (what the play is and the verdict), so that it stays off the cards on a
    // phone; why it is illegal is said in the results table
    hands: [{ box, colour: SEAT_COLOURS[0], label: (result.description || "no combination") + verdict, cards: result.cards }],
    leftOver: result.table,
  };
}

/** Show the photo with the reading drawn over it; without a picture the browser can decode
 *  (a format it does not show), the server's drawing (/v1/annotated: a second read). */
async function showPicture(game, file, options, answer, picture, generation) {
  const canvas = $("photo-canvas");
  const image = $("photo-annotated");
  if (picture) {
    image.hidden = true;
    canvas.hidden = false;
    const size = answer.size || [picture.width, picture.height];
    const scene = game === "niuniu" ? niuniuScene(answer) : game === "pits" ? pitsScene(answer, size) : gameScene(game, answer);
    drawScene(canvas, picture, scene);
    $("photo-enlarge").hidden = false;
    return;
  }
  canvas.hidden = true;
  if (game !== "niuniu" && game !== "pits") return;
  const query = game === "pits" ? "?game=pits&format=jpeg" : "?format=jpeg";
  const drawing = await (await request(`/v1/annotated${query}`, { method: "POST", body: imageForm(file, options) })).blob();
  if (generation !== state.generation) return;
  if (annotatedUrl) URL.revokeObjectURL(annotatedUrl);
  annotatedUrl = URL.createObjectURL(drawing);
  image.src = annotatedUrl;
  image.hidden = false;
  $("photo-enlarge").hidden = false;
}

function clearShown() {
  const canvas = $("photo-canvas");
  $("photo-enlarge").hidden = true;
  if ($("photo-figure").classList.contains("enlarged")) enlarge(false);
  clearScene(canvas);
  canvas.hidden = true;
  $("photo-annotated").hidden = true;
  $("photo-annotated").removeAttribute("src");
  $("photo-results").replaceChildren();
  markStale([$("photo-results"), $("photo-figure")], null);
  state.shown = false;
}

// --- the flow ----------------------------------------------------------------------------------

const RESULTS = { niuniu: niuniuResults, pits: pitsResults };

async function read(file) {
  const generation = ++state.generation;
  state.file = file;
  const game = $("photo-game").value;
  showError($("photo-error"), null);
  let options;
  try {
    options = photoOptions(game);
  } catch (error) {
    showError($("photo-error"), error);  // a bad field: what is shown stays, marked out of date
    if (state.shown) {
      markStale([$("photo-results"), $("photo-figure")], "Out of date: correct the option named below");
      $("photo-status").textContent = "Not read again: correct the option named below.";
    } else {
      $("photo-status").textContent = "Not read: correct the option named below.";
    }
    notBusy(); // a read this one replaces leaves the busy state to it, and it reads nothing
    return;
  }
  if (chosenDeck()) options.deck = chosenDeck();
  if (chosenIndices()) options.indices = chosenIndices();
  const newPhoto = state.shown && state.shownFile !== file;
  $("photo-status").textContent = !state.shown ? "Reading\u2026"
    : newPhoto ? "Reading the new photo\u2026" : "Out of date: reading again with the new options\u2026";
  if (newPhoto) markStale([$("photo-results"), $("photo-figure")], "Out of date: the new photo is being read");
  $("photo-status").classList.add("busy");
  disableKeepingFocus($("photo-submit"), $("photo-status"));
  $("photo-form").setAttribute("aria-busy", "true");
  const started = performance.now();
  try {
    const sent = await uploadable(file);
    const [answer, picture] = await Promise.all([
      request(GAME_ENDPOINTS[game], { method: "POST", body: imageForm(sent, options) }).then((r) => r.json()),
      loadPicture(sent),
    ]);
    if (generation !== state.generation) return;
    clearShown();
    await showPicture(game, sent, options, answer, picture, generation);
    if (generation !== state.generation) return;
    $("photo-results").replaceChildren(...(RESULTS[game] ? RESULTS[game](answer) : gamePhotoResults(game, answer)));
    state.shown = true;
    state.shownFile = file;
    $("photo-status").textContent = `Read in ${Math.round(performance.now() - started)} ms: ${resultSummary(game, answer)}.`;
  } catch (error) {
    if (generation !== state.generation) return;
    if (state.shown && state.shownFile === file && (error.status === 400 || error.status === 422)) {
      // an option refused (a typo in a play, a stake out of range): the photo and its last
      // reading stay, out of date
      $("photo-status").textContent = "Not read again: correct the option named below.";
      markStale([$("photo-results"), $("photo-figure")], "Out of date: correct the option named below");
    } else {
      clearShown();
      $("photo-status").textContent = "";
    }
    showError($("photo-error"), error);
  } finally {
    if (generation === state.generation) notBusy();
  }
}

/** The form idle again: Read enabled (focus back on it from the status line), no spinner. */
function notBusy() {
  enableTakingFocus($("photo-submit"), $("photo-status"));
  $("photo-status").classList.remove("busy");
  $("photo-form").removeAttribute("aria-busy");
}

/** The longest side a photo is sent at: larger photos are shrunk in the page first (the
 * reader reduces them on decoding anyway), so a 12 MP phone photo sends about a third of
 * its bytes. */
export const UPLOAD_MAX_SIDE = 3000;

/** The most bytes a photo is sent as it is: a larger one (a PNG of a screen, an uncompressed
 * TIFF) is sent as a JPEG, under the server's 20 MiB limit. */
export const UPLOAD_MAX_BYTES = 8 * 1024 * 1024;

/** The photo as it is sent: itself when small enough, else a JPEG of it at UPLOAD_MAX_SIDE at
 * most. */
export async function uploadable(file) {
  let bitmap;
  try {
    bitmap = await createImageBitmap(file);
  } catch {
    return file; // not decodable here: the server names the problem
  }
  const side = Math.max(bitmap.width, bitmap.height);
  if (side <= UPLOAD_MAX_SIDE && file.size <= UPLOAD_MAX_BYTES) {
    bitmap.close();
    return file;
  }
  const factor = Math.min(1, UPLOAD_MAX_SIDE / side);
  const canvas = document.createElement("canvas");
  canvas.width = Math.round(bitmap.width * factor);
  canvas.height = Math.round(bitmap.height * factor);
  canvas.getContext("2d").drawImage(bitmap, 0, 0, canvas.width, canvas.height);
  bitmap.close();
  const blob = await new Promise((resolve) => canvas.toBlob(resolve, "image/jpeg", 0.92));
  if (!blob || blob.size >= file.size) return file;
  return new File([blob], (file.name || "photo").replace(/\.[^.]*$/, "") + ".jpg", { type: "image/jpeg" });
}

/** An option changed: what is shown is out of date; read the photo again with the option. */
function optionChanged() {
  if (!state.file) return;
  if (state.shown) markStale([$("photo-results"), $("photo-figure")], "Out of date: reading again\u2026");
  read(state.file);
}

/** Enlarge the photo or take it back (common.js enlargeable; set in setupPhoto). */
let enlarge = () => {};

export function setupPhoto() {
  const input = $("photo-file");
  enlarge = enlargeable($("photo-figure"), $("photo-enlarge"), [$("photo-canvas"), $("photo-annotated")]);
  const drop = $("photo-drop");
  showGameOptions();
  $("photo-game").addEventListener("change", () => {
    showGameOptions();
    optionChanged();
  });
  for (const control of $("photo-form").querySelectorAll("select, input")) {
    if (control === input || control.id === "photo-game") continue;
    control.addEventListener("change", optionChanged);
  }
  onDeckChange(optionChanged);
  onIndicesChange(optionChanged);
  input.addEventListener("change", () => {
    if (input.files && input.files[0]) read(input.files[0]);
  });
  $("photo-form").addEventListener("submit", (event) => {
    event.preventDefault();
    if (input.files && input.files[0]) read(input.files[0]);
    else showError($("photo-error"), new Error("choose a photo first"));
  });
  for (const name of ["dragenter", "dragover"]) {
    drop.addEventListener(name, (event) => {
      event.preventDefault();
      drop.classList.add("over");
    });
  }
  for (const name of ["dragleave", "drop"]) {
    drop.addEventListener(name, () => drop.classList.remove("over"));
  }
  drop.addEventListener("drop", (event) => {
    event.preventDefault();
    const file = event.dataTransfer && event.dataTransfer.files[0];
    if (file) {
      const transfer = new DataTransfer();
      transfer.items.add(file);
      input.files = transfer.files;
      read(file);
    }
  });
}
