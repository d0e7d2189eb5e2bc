// Photo mode: a photo in; the annotated photo and the results (hands, splits, scores, winner,
// payouts) out. Niu Niu and Pits photos are drawn by the server (/v1/annotated); the other
// games' hands are drawn here from the boxes the server answers.

import {
  $, el, request, imageForm, showError, cardChips, table, money, ROLE_COLOURS, SEAT_COLOURS,
} from "./common.js";
import { chosenDeck } from "./decks.js";

const GAME_ENDPOINTS = { niuniu: "/v1/score", pits: "/v1/pits", baccarat: "/v1/baccarat", blackjack: "/v1/blackjack", paigow: "/v1/paigow" };
let annotatedUrl = null;

function stake() {
  const value = Number($("photo-stake").value);
  return Number.isFinite(value) && value > 0 ? value : 1;
}

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
    case "pits":
      return { table: $("photo-pits-table").value.trim() };
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
  if (!hand.score) return hand.problem || hand.status;
  return hand.status === "scored" ? hand.score.label : `${hand.score.label} (${hand.status})`;
}

/** The results of a Niu Niu table (TableOut). */
export function niuniuResults(result) {
  const parts = [];
  const seatName = (seat) => (result.banker === seat ? `${seat} (banker)` : String(seat));
  parts.push(table(
    "Hands",
    ["Seat", "Role", "Cards (bull highlighted)", "Score", "Note"],
    result.hands.map((hand) => [seatName(hand.seat), hand.role, cardChips(hand.cards), handScore(hand), hand.problem]),
    { id: "photo-hands" },
  ));
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
  if (result.flags.length) parts.push(el("p", { class: "status" }, `Flags: ${result.flags.join(", ")}`));
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
  if (answer.problem) parts.push(el("p", { class: "error" }, answer.problem));
  return parts;
}

// --- drawing the other games -------------------------------------------------------------------

function loadImage(file) {
  return new Promise((resolve, reject) => {
    const image = new Image();
    image.onload = () => resolve(image);
    image.onerror = () => reject(new Error("the browser cannot show this image"));
    image.src = URL.createObjectURL(file);
  });
}

/** Draw the photo and each hand's card boxes and role label on the canvas. */
async function drawHands(canvas, file, answer) {
  const image = await loadImage(file);
  const [width, height] = answer.size;
  canvas.width = width;
  canvas.height = height;
  const context = canvas.getContext("2d");
  context.drawImage(image, 0, 0, width, height);
  URL.revokeObjectURL(image.src);
  const line = Math.max(2, Math.round(Math.min(width, height) / 300));
  context.lineWidth = line;
  context.font = `${Math.max(12, line * 7)}px sans-serif`;
  context.textBaseline = "bottom";
  for (const hand of answer.hands) {
    const colour = hand.role === "player" && hand.seat > 0 ? SEAT_COLOURS[(hand.seat - 1) % SEAT_COLOURS.length] : ROLE_COLOURS[hand.role] || ROLE_COLOURS.hand;
    context.strokeStyle = colour;
    context.fillStyle = colour;
    for (const card of hand.cards) {
      const [x1, y1, x2, y2] = card.box;
      context.strokeRect(x1, y1, x2 - x1, y2 - y1);
      context.fillText(card.card + (card.uncertain ? "?" : ""), x1, y1 - line);
    }
    if (hand.box) {
      const [x1, y1, x2, y2] = hand.box;
      const pad = line * 4;
      context.setLineDash([line * 3, line * 2]);
      context.strokeRect(x1 - pad, y1 - pad, x2 - x1 + 2 * pad, y2 - y1 + 2 * pad);
      context.setLineDash([]);
      const label = hand.role === "player" && answer.game === "blackjack" ? `player ${hand.seat}` : hand.role;
      context.fillText(label, x1 - pad, y1 - pad - line * 8);
    }
  }
}

// --- the flow ----------------------------------------------------------------------------------

async function read(file) {
  const game = $("photo-game").value;
  const options = photoOptions(game);
  if (chosenDeck()) options.deck = chosenDeck();
  const results = $("photo-results");
  const picture = $("photo-annotated");
  const canvas = $("photo-canvas");
  showError($("photo-error"), null);
  results.replaceChildren();
  $("photo-status").textContent = "Reading\u2026";
  const started = performance.now();
  try {
    if (game === "niuniu" || game === "pits") {
      const query = game === "pits" ? "?game=pits&format=jpeg" : "?format=jpeg";
      const [scored, drawing] = await Promise.all([
        request(GAME_ENDPOINTS[game], { method: "POST", body: imageForm(file, options) }).then((r) => r.json()),
        request(`/v1/annotated${query}`, { method: "POST", body: imageForm(file, options) }).then((r) => r.blob()),
      ]);
      if (annotatedUrl) URL.revokeObjectURL(annotatedUrl);
      annotatedUrl = URL.createObjectURL(drawing);
      picture.src = annotatedUrl;
      picture.hidden = false;
      canvas.hidden = true;
      results.replaceChildren(...(game === "pits" ? pitsResults(scored) : niuniuResults(scored)));
    } else {
      const response = await request(GAME_ENDPOINTS[game], { method: "POST", body: imageForm(file, options) });
      const answer = await response.json();
      await drawHands(canvas, file, answer);
      canvas.hidden = false;
      picture.hidden = true;
      results.replaceChildren(...gamePhotoResults(game, answer));
    }
    $("photo-status").textContent = `Read in ${Math.round(performance.now() - started)} ms`;
  } catch (error) {
    $("photo-status").textContent = "";
    showError($("photo-error"), error);
  }
}

export function setupPhoto() {
  const input = $("photo-file");
  const drop = $("photo-drop");
  showGameOptions();
  $("photo-game").addEventListener("change", () => {
    showGameOptions();
    if (input.files && input.files[0]) read(input.files[0]);
  });
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
