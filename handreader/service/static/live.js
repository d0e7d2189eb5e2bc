// Live mode: the device camera -> JPEG frames over the WebSocket /v1/live -> the server's
// tracked reading -> the overlay drawn on a canvas over the video. One frame is in flight at a
// time: the next is sent when the answer to the last has come, so frames never queue up.

import { $, showError, ApiError, ROLE_COLOURS, SEAT_COLOURS } from "./common.js";
import { niuniuResults } from "./photo.js";
import { chosenDeck, onDeckChange } from "./decks.js";

const CARD_COLOUR = "rgb(255, 214, 0)";
const state = { stream: null, socket: null, running: false, answers: 0, since: 0, shownKey: "" };

function socketUrl() {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const profile = encodeURIComponent($("live-profile").value);
  const deck = chosenDeck() ? `&deck=${encodeURIComponent(chosenDeck())}` : "";
  return `${scheme}://${location.host}/v1/live?profile=${profile}${deck}`;
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
    if (blob && state.running && state.socket.readyState === WebSocket.OPEN) state.socket.send(blob);
  }, "image/jpeg", 0.75);
}

function handColour(hand, table) {
  if (hand.role === "banker") return ROLE_COLOURS.banker;
  return SEAT_COLOURS[hand.seat % SEAT_COLOURS.length] || ROLE_COLOURS.hand;
}

function handLabel(hand, table) {
  let label = `${hand.seat} ${hand.role}`;
  if (hand.score) label += `: ${hand.score.label}`;
  else if (hand.status !== "scored") label += `: ${hand.status}`;
  const player = table.players.find((item) => item.seat === hand.seat);
  if (player && player.outcome) label += ` ${player.outcome} ${player.net > 0 ? "+" : ""}${player.net}`;
  if (table.mode === "trainer" && table.winners.includes(hand.seat)) label += " WINNER";
  return label;
}

/** Draw the answer's cards and hands on the overlay canvas (frame pixels; CSS scales it). */
export function drawOverlay(canvas, answer) {
  const [width, height] = answer.size;
  if (canvas.width !== width || canvas.height !== height) {
    canvas.width = width;
    canvas.height = height;
  }
  const context = canvas.getContext("2d");
  context.clearRect(0, 0, width, height);
  const line = Math.max(2, Math.round(Math.min(width, height) / 240));
  context.lineWidth = line;
  context.font = `bold ${Math.max(12, line * 6)}px sans-serif`;
  context.textBaseline = "bottom";
  for (const card of answer.cards) {
    const [x1, y1, x2, y2] = card.box;
    context.strokeStyle = card.uncertain ? "rgb(230, 30, 30)" : CARD_COLOUR;
    context.strokeRect(x1, y1, x2 - x1, y2 - y1);
    context.fillStyle = context.strokeStyle;
    context.fillText(card.card + (card.uncertain ? "?" : ""), x1, y1 - 2);
  }
  const table = answer.table;
  for (const hand of table.hands) {
    const colour = handColour(hand, table);
    context.fillStyle = colour;
    context.globalAlpha = 0.3;
    for (const card of hand.cards) {
      if (card.part === "bull" && card.box) {
        const [x1, y1, x2, y2] = card.box;
        context.fillRect(x1, y1, x2 - x1, y2 - y1);
      }
    }
    context.globalAlpha = 1;
    if (!hand.box) continue;
    const [x1, y1, x2, y2] = hand.box;
    const pad = line * 6;
    context.strokeStyle = colour;
    context.strokeRect(x1 - pad, y1 - pad, x2 - x1 + 2 * pad, y2 - y1 + 2 * pad);
    const label = handLabel(hand, table);
    const labelHeight = Math.max(12, line * 6) + 4;
    const labelWidth = context.measureText(label).width + 8;
    context.fillStyle = "rgba(0, 0, 0, 0.6)";
    context.fillRect(x1 - pad, y1 - pad - labelHeight, labelWidth, labelHeight);
    context.fillStyle = colour;
    context.fillText(label, x1 - pad + 4, y1 - pad - 2);
  }
}

function onAnswer(event) {
  let answer;
  try {
    answer = JSON.parse(event.data);
  } catch (_) {
    return;
  }
  if (answer.error) {
    showError($("live-error"), new ApiError(answer.error.code, answer.error.message, 0));
  } else if (!answer.ok) {
    showError($("live-error"), null);
    drawOverlay($("live-overlay"), answer);
    state.answers += 1;
    const seconds = (performance.now() - state.since) / 1000;
    const fps = seconds > 0 ? (state.answers / seconds).toFixed(1) : "\u2013";
    $("live-status").textContent = `${fps} frames/s \u00b7 ${answer.cards.length} cards \u00b7 server ${answer.ms.total ?? "?"} ms`;
    const key = JSON.stringify([answer.table.hands.map((hand) => [hand.seat, hand.cards.map((card) => card.card), hand.score && hand.score.label, hand.status]), answer.table.players]);
    if (key !== state.shownKey) {
      state.shownKey = key;
      $("live-results").replaceChildren(...niuniuResults(answer.table));
    }
  }
  if (answer.error || !answer.ok) sendFrame();
}

async function start() {
  showError($("live-error"), null);
  if (!navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) {
    showError($("live-error"), new Error("This browser gives no camera to this page: open it over https:// or from localhost (see \u201cUsing a phone\u201d)."));
    return;
  }
  try {
    state.stream = await navigator.mediaDevices.getUserMedia({
      video: { facingMode: { ideal: "environment" }, width: { ideal: 1280 }, height: { ideal: 720 } },
      audio: false,
    });
  } catch (error) {
    showError($("live-error"), new Error(`no camera: ${error.message}`));
    return;
  }
  const video = $("live-video");
  video.srcObject = state.stream;
  await video.play().catch(() => {});
  state.running = true;
  state.answers = 0;
  state.since = performance.now();
  state.shownKey = "";
  state.socket = new WebSocket(socketUrl());
  state.socket.addEventListener("open", () => {
    $("live-status").textContent = "Connected; reading\u2026";
    sendFrame();
  });
  state.socket.addEventListener("message", onAnswer);
  state.socket.addEventListener("close", () => {
    if (state.running) showError($("live-error"), new Error("the connection to the server closed"));
    stop();
  });
  $("live-start").disabled = true;
  $("live-stop").disabled = false;
}

function stop() {
  state.running = false;
  if (state.socket && state.socket.readyState <= WebSocket.OPEN) state.socket.close();
  state.socket = null;
  if (state.stream) for (const track of state.stream.getTracks()) track.stop();
  state.stream = null;
  const overlay = $("live-overlay");
  overlay.getContext("2d").clearRect(0, 0, overlay.width, overlay.height);
  $("live-start").disabled = false;
  $("live-stop").disabled = true;
}

export function setupLive() {
  $("live-start").addEventListener("click", start);
  $("live-stop").addEventListener("click", stop);
  $("live-profile").addEventListener("change", () => {
    if (state.socket && state.socket.readyState === WebSocket.OPEN) {
      state.socket.send(JSON.stringify({ profile: $("live-profile").value }));
    }
  });
  onDeckChange((deck) => {
    if (state.socket && state.socket.readyState === WebSocket.OPEN) {
      state.socket.send(JSON.stringify({ deck: deck || null }));
    }
  });
  if (!window.isSecureContext) {
    $("live-status").textContent = "This page is not on https:// or localhost: the browser will not open the camera (see \u201cUsing a phone\u201d).";
  }
}

export function stopLive() {
  if (state.running) stop();
}
