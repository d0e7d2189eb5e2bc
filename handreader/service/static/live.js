// Live mode: the device camera -> JPEG frames over the WebSocket /v1/live -> the server's
// tracked reading -> the overlay drawn on a canvas over the video. One frame is in flight at a
// time: the next is sent when the answer to the last has come, so frames never queue up.

import { $, showError, ApiError } from "./common.js";
import { niuniuResults, resultSummary } from "./photo.js";
import { chosenDeck, chosenIndices, onDeckChange, onIndicesChange } from "./decks.js";
import { drawScene, clearScene, niuniuScene } from "./draw.js";

// attempt: the number of the last Start or Stop; a camera granted after a later Stop (or a tab
// switch) is stopped at once, and only the socket of the session running is heard
// sent: what each answer still to come answers, in order ("frame" or "command": the server
// answers every message in turn), so that a refused command is told from a frame's error
const state = { stream: null, socket: null, running: false, starting: false, attempt: 0, answers: 0, since: 0, shownKey: "", locked: false, sent: [], commandError: false };

// The seats the dealer draws on the video: the banker's box first, then one box a player in
// seat order, each [x1, y1, x2, y2] in fractions of the frame (the API's banker_region and
// player_regions); the cards are then grouped by them.
const seats = { drawing: false, boxes: [], from: null, moving: null, corner: null, cross: [0.5, 0.5] };
/** How far an arrow key moves the cross on the video (Shift: five times as far). */
const CROSS_STEP = 0.02;
const SEAT_COLOUR = "#00e5ff";
const SMALLEST_SEAT = 0.02; // a box under 2% of the frame's side is a slip, not a seat

function socketUrl() {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const profile = encodeURIComponent($("live-profile").value);
  const deck = chosenDeck() ? `&deck=${encodeURIComponent(chosenDeck())}` : "";
  const indices = chosenIndices() ? `&indices=${encodeURIComponent(chosenIndices())}` : "";
  return `${scheme}://${location.host}/v1/live?profile=${profile}${deck}${indices}`;
}

function sendFrame() {
  if (!state.running || !state.socket || state.socket.readyState !== WebSocket.OPEN) return;
  const video = $("live-video");
  if (!video.videoWidth) {
    setTimeout(sendFrame, 100);
    return;
  }
  const width = Math.min(Number($("live-width").value), video.videoWidth);
  const height = Math.round((video.videoHeight * width) / video.videoWidth);
  const capture = sendFrame.canvas || (sendFrame.canvas = document.createElement("canvas"));
  capture.width = width;
  capture.height = height;
  capture.getContext("2d").drawImage(video, 0, 0, width, height);
  capture.toBlob((blob) => {
    if (blob && state.running && state.socket.readyState === WebSocket.OPEN) {
      state.sent.push("frame");
      state.socket.send(blob);
    }
  }, "image/jpeg", 0.75);
}

/** Draw the answer's tracked cards and scored hands on the overlay canvas (draw.js), and the
 * regions of a locked layout as dashed frames under them. */
export function drawOverlay(canvas, answer) {
  drawScene(canvas, null, { ...niuniuScene(answer.table, answer.cards), size: answer.size });
  if (answer.layout) drawLayout(canvas, answer.layout);
  else canvas.dataset.regions = "0";
}

function drawLayout(canvas, layout) {
  const context = canvas.getContext("2d");
  const regions = [layout.banker, ...layout.players].filter(Boolean);
  context.save();
  context.setLineDash([8, 6]);
  context.lineWidth = 2;
  context.strokeStyle = "rgba(255, 255, 255, 0.85)";
  for (const [x1, y1, x2, y2] of regions) {
    context.strokeRect(x1 * canvas.width, y1 * canvas.height, (x2 - x1) * canvas.width, (y2 - y1) * canvas.height);
  }
  context.restore();
  canvas.dataset.regions = String(regions.length);
}

function showLock(layout) {
  state.locked = Boolean(layout);
  const button = $("live-lock");
  button.textContent = state.locked ? "Unlock layout" : "Lock layout"; // the label says it: no aria-pressed
}

/** The table options the page sets, with the seats drawn (none: grouped by where cards lie). */
function tableOptions() {
  const options = { profile: $("live-profile").value, deck: chosenDeck() || null, indices: chosenIndices() || null };
  if (seats.boxes.length) {
    options.banker_region = seats.boxes[0];
    options.player_regions = seats.boxes.slice(1);
  }
  return options;
}

/** Send a command (options, lock, profile, deck) on the open stream. */
function sendCommand(command) {
  if (state.socket && state.socket.readyState === WebSocket.OPEN) {
    state.sent.push("command");
    state.socket.send(JSON.stringify(command));
  }
}

function sendOptions() {
  sendCommand({ options: tableOptions() }); // every table option: the page's own go with it
}

function fraction(event) {
  const rect = $("live-seat-boxes").getBoundingClientRect();
  const clamp = (value) => Math.min(1, Math.max(0, value));
  return [clamp((event.clientX - rect.left) / rect.width), clamp((event.clientY - rect.top) / rect.height)];
}

/** The box [x1, y1, x2, y2] two corners span, whichever way they were dragged. */
function spanned([ax, ay], [bx, by]) {
  return [Math.min(ax, bx), Math.min(ay, by), Math.max(ax, bx), Math.max(ay, by)];
}

function drawSeats() {
  const canvas = $("live-seat-boxes");
  const rect = canvas.getBoundingClientRect();
  canvas.width = Math.max(1, Math.round(rect.width));
  canvas.height = Math.max(1, Math.round(rect.height));
  const context = canvas.getContext("2d");
  context.clearRect(0, 0, canvas.width, canvas.height);
  const boxes = seats.moving ? [...seats.boxes, seats.moving] : seats.boxes;
  context.lineWidth = 2;
  context.font = "bold 14px system-ui, sans-serif";
  if (seats.drawing) { // the keyboard's cross, and a corner set by a tap or Enter
    for (const [x, y] of seats.corner ? [seats.cross, seats.corner] : [seats.cross]) {
      const [cx, cy] = [x * canvas.width, y * canvas.height];
      context.strokeStyle = SEAT_COLOUR;
      context.beginPath();
      context.moveTo(cx - 10, cy);
      context.lineTo(cx + 10, cy);
      context.moveTo(cx, cy - 10);
      context.lineTo(cx, cy + 10);
      context.stroke();
    }
  }
  boxes.forEach(([x1, y1, x2, y2], index) => {
    const [left, top] = [x1 * canvas.width, y1 * canvas.height];
    context.strokeStyle = SEAT_COLOUR;
    context.setLineDash([6, 4]);
    context.strokeRect(left, top, (x2 - x1) * canvas.width, (y2 - y1) * canvas.height);
    context.setLineDash([]);
    const label = index === 0 ? "Banker" : `Seat ${index}`;
    const width = context.measureText(label).width + 8;
    context.fillStyle = SEAT_COLOUR;
    context.fillRect(left, Math.max(0, top - 20), width, 20);
    context.fillStyle = "#000";
    context.fillText(label, left + 4, Math.max(0, top - 20) + 15);
  });
}

/** What to do next while drawing seats, said on the page (and to screen readers). */
function seatsHelp() {
  const next = seats.boxes.length === 0 ? "the banker's place" : `seat ${seats.boxes.length}'s place`;
  const corner = seats.corner ? "now the opposite corner" : "two opposite corners";
  return `Drawing seats: a box round ${next} (then one round each player's, in seat order). ` +
    `Drag it, or tap ${corner}; from the keyboard, the arrow keys move the cross (Shift: farther) ` +
    `and Enter sets a corner. ${seats.boxes.length} drawn. Done or Escape ends.`;
}

function showSeats() {
  const button = $("live-seats");
  const canvas = $("live-seat-boxes");
  button.textContent = seats.drawing ? "Done" : "Draw seats"; // the label says it: no aria-pressed
  canvas.classList.toggle("drawing", seats.drawing);
  if (seats.drawing) {
    canvas.setAttribute("tabindex", "0");
    canvas.setAttribute("aria-label", "the video, to draw the seats on: arrow keys move the cross, Enter sets a corner");
  } else {
    canvas.removeAttribute("tabindex");
    canvas.setAttribute("aria-label", "the seats drawn on the video");
  }
  $("live-seats-help").hidden = !seats.drawing;
  $("live-seats-help").textContent = seats.drawing ? seatsHelp() : "";
  $("live-seats-clear").disabled = !state.running || (!seats.boxes.length && !seats.drawing);
  drawSeats();
}

function toggleSeats() {
  if (seats.drawing) {
    const focused = document.activeElement === $("live-seat-boxes");
    seats.drawing = false;
    seats.corner = null;
    sendOptions();
    showSeats();
    if (focused) $("live-seats").focus(); // the video is no longer a control
    return;
  }
  seats.drawing = true;
  seats.boxes = [];
  seats.corner = null;
  seats.cross = [0.5, 0.5];
  showSeats();
}

/** A box for a seat from two corners, if it is no slip. */
function addSeat(from, to) {
  const box = spanned(from, to);
  if (box[2] - box[0] >= SMALLEST_SEAT && box[3] - box[1] >= SMALLEST_SEAT) {
    seats.boxes.push(box.map((value) => Math.round(value * 1000) / 1000));
    return true;
  }
  return false;
}

/** A corner set by a tap or Enter: the first waits for the second, which makes the box. */
function setCorner(point) {
  if (seats.corner) {
    addSeat(seats.corner, point);
    seats.corner = null;
  } else {
    seats.corner = point;
  }
  showSeats();
}

function seatKey(event) {
  if (!seats.drawing) return;
  const step = event.shiftKey ? 5 * CROSS_STEP : CROSS_STEP;
  const moves = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, -step], ArrowDown: [0, step] };
  if (moves[event.key]) {
    const [dx, dy] = moves[event.key];
    const clamp = (value) => Math.min(1, Math.max(0, Math.round(value * 1000) / 1000));
    seats.cross = [clamp(seats.cross[0] + dx), clamp(seats.cross[1] + dy)];
    drawSeats();
  } else if (event.key === "Enter" || event.key === " ") {
    setCorner(seats.cross);
  } else {
    return;
  }
  event.preventDefault();
}

function clearSeats() {
  const focused = document.activeElement === $("live-seats-clear");
  seats.drawing = false;
  seats.boxes = [];
  sendOptions();
  showSeats();
  if (focused) $("live-seats").focus(); // Clear seats is disabled now: the focus stays near
}

function setupSeats() {
  const canvas = $("live-seat-boxes");
  canvas.addEventListener("pointerdown", (event) => {
    if (!seats.drawing) return;
    seats.from = fraction(event);
    canvas.setPointerCapture(event.pointerId);
  });
  canvas.addEventListener("pointermove", (event) => {
    if (!seats.drawing || !seats.from) return;
    seats.moving = spanned(seats.from, fraction(event));
    drawSeats();
  });
  canvas.addEventListener("pointerup", (event) => {
    if (!seats.drawing || !seats.from) return;
    const [from, to] = [seats.from, fraction(event)];
    seats.from = null;
    seats.moving = null;
    if (seats.corner || !addSeat(from, to)) setCorner(to); // a tap (no drag) sets a corner
    else showSeats();
  });
  canvas.addEventListener("keydown", seatKey);
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && seats.drawing && !event.defaultPrevented) toggleSeats();
  });
  $("live-seats").addEventListener("click", toggleSeats);
  $("live-seats-clear").addEventListener("click", clearSeats);
  window.addEventListener("resize", drawSeats);
}

/** The least time between two announcements of the table to screen readers: the status line
 *  (frames per second) changes with every frame and is not announced; the table is, when what
 *  it shows changes, at most this often (the latest change is announced when the time is up). */
export const ANNOUNCE_EVERY_MS = 3000;
const announcing = { at: 0, timer: null, text: "" };

function announce(text) {
  if (text === announcing.text) return; // said already: only a change is announced
  announcing.text = text;
  clearTimeout(announcing.timer);
  const wait = announcing.at + ANNOUNCE_EVERY_MS - performance.now();
  const say = () => {
    announcing.at = performance.now();
    $("live-announce").textContent = text;
  };
  if (wait <= 0) say();
  else announcing.timer = setTimeout(say, wait);
}

function onAnswer(event) {
  if (!state.running) return; // an answer that arrives after Stop shows nothing
  let answer;
  try {
    answer = JSON.parse(event.data);
  } catch (_) {
    return;
  }
  const answered = state.sent.shift() || "frame";
  if (answer.error) {
    state.lastError = new ApiError(answer.error.code, answer.error.message, 0);
    // a refused command (a deck gone, a layout with no hand) stays shown until the next
    // command; a frame's error goes with the next frame read
    state.commandError = answered === "command";
    showError($("live-error"), state.lastError);
  } else if (answer.ok) {
    if (state.commandError) showError($("live-error"), null);
    state.commandError = false;
    showLock(answer.layout);
  } else {
    // a hand to lock is one holding a card (an empty seat drawn on the video is none)
    $("live-lock").disabled = !state.locked && !answer.table.hands.some((hand) => hand.cards.length);
    if (!state.commandError) showError($("live-error"), null);
    drawOverlay($("live-overlay"), answer);
    state.answers += 1;
    const seconds = (performance.now() - state.since) / 1000;
    const fps = seconds > 0 ? (state.answers / seconds).toFixed(1) : "\u2013";
    $("live-status").textContent = `${fps} frames/s \u00b7 ${answer.cards.length} cards \u00b7 server ${answer.ms.total ?? "?"} ms`;
    const key = JSON.stringify([answer.table.hands.map((hand) => [hand.seat, hand.cards.map((card) => card.card), hand.score && hand.score.label, hand.status]), answer.table.players]);
    if (key !== state.shownKey) {
      state.shownKey = key;
      $("live-results").replaceChildren(...niuniuResults(answer.table));
      announce(`${resultSummary("niuniu", answer.table)}.`);
    }
  }
  if (answer.error || !answer.ok) sendFrame();
}

async function start() {
  if (state.running || state.starting) return; // a second click while the camera is asked for
  showError($("live-error"), null);
  if (!navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) {
    showError($("live-error"), new Error("This browser gives no camera to this page: open it over https:// or from localhost (see \u201cUsing a phone\u201d)."));
    return;
  }
  const attempt = ++state.attempt;
  state.starting = true;
  // Start is disabled while the camera is asked for, and Stop cancels the asking
  $("live-stop").disabled = false;
  if (document.activeElement === $("live-start")) $("live-stop").focus();
  $("live-start").disabled = true;
  let stream;
  try {
    stream = await navigator.mediaDevices.getUserMedia({
      video: { facingMode: { ideal: "environment" }, width: { ideal: 1280 }, height: { ideal: 720 } },
      audio: false,
    });
  } catch (error) {
    if (attempt === state.attempt) {
      state.starting = false;
      $("live-start").disabled = false;
      if (document.activeElement === $("live-stop")) $("live-start").focus();
      $("live-stop").disabled = true;
      showError($("live-error"), new Error(`no camera: ${error.message}`));
    }
    return;
  }
  if (attempt !== state.attempt) { // stopped, or the tab left, while the camera was asked for
    for (const track of stream.getTracks()) track.stop();
    return;
  }
  state.stream = stream;
  const video = $("live-video");
  video.srcObject = state.stream;
  await video.play().catch(() => {});
  if (attempt !== state.attempt) return; // stop() has ended the stream meanwhile
  state.starting = false;
  state.running = true;
  state.answers = 0;
  state.since = performance.now();
  state.shownKey = "";
  state.lastError = null;
  state.sent = [];
  state.commandError = false;
  announcing.text = "";
  const socket = new WebSocket(socketUrl());
  state.socket = socket;
  socket.addEventListener("open", () => {
    if (socket !== state.socket) return;
    $("live-status").textContent = "Connected; reading\u2026";
    announce("Camera on: reading.");
    sendFrame();
  });
  socket.addEventListener("message", (event) => {
    if (socket === state.socket) onAnswer(event);
  });
  socket.addEventListener("close", () => {
    if (socket !== state.socket) return; // a session already stopped: it ends nothing now
    // the server's last word (busy, silent too long) says why; else the connection just closed
    const why = state.lastError && ["busy", "request_timeout"].includes(state.lastError.code) ? state.lastError : null;
    if (state.running) showError($("live-error"), why || new Error("the connection to the server closed"));
    stop();
  });

  $("live-seats").disabled = false;
  showSeats();
}

function stop() {
  const wasRunning = state.running;
  state.attempt += 1; // a camera still being asked for is stopped once granted
  state.starting = false;
  state.running = false;
  if (state.socket && state.socket.readyState <= WebSocket.OPEN) state.socket.close();
  state.socket = null;
  if (state.stream) for (const track of state.stream.getTracks()) track.stop();
  state.stream = null;
  clearScene($("live-overlay"));
  $("live-status").textContent = "Stopped";
  if (wasRunning) announce("Camera stopped.");
  $("live-start").disabled = false;
  if (document.activeElement === $("live-stop")) $("live-start").focus();
  $("live-stop").disabled = true;
  $("live-lock").disabled = true;
  showLock(null);
  seats.drawing = false;
  seats.boxes = [];
  $("live-seats").disabled = true;
  showSeats();
}

export function setupLive() {
  $("live-start").addEventListener("click", start);
  $("live-stop").addEventListener("click", stop);
  $("live-lock").addEventListener("click", () => sendCommand({ lock: !state.locked }));
  $("live-profile").addEventListener("change", () => sendCommand({ profile: $("live-profile").value }));
  onDeckChange((deck) => sendCommand({ deck: deck || null }));
  onIndicesChange(sendOptions);
  setupSeats();
  if (!window.isSecureContext) {
    $("live-status").textContent = "This page is not on https:// or localhost: the browser will not open the camera (see \u201cUsing a phone\u201d).";
  }
}

export function stopLive() {
  if (state.running || state.starting) stop();
}
