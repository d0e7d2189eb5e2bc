// Live mode: the device camera -> JPEG frames over the WebSocket /v1/live -> the server's
// tracked reading -> the overlay drawn on a canvas over the video. One frame is in flight at a
// time: the next is sent when the answer to the last has come, so frames never queue up.

import { $, showError, ApiError } from "./common.js";
import { niuniuResults } from "./photo.js";
import { chosenDeck, chosenIndices, onDeckChange, onIndicesChange } from "./decks.js";
import { drawScene, clearScene, niuniuScene } from "./draw.js";

const state = { stream: null, socket: null, running: false, answers: 0, since: 0, shownKey: "", locked: false };

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
    if (blob && state.running && state.socket.readyState === WebSocket.OPEN) state.socket.send(blob);
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
  button.textContent = state.locked ? "Unlock layout" : "Lock layout";
  button.setAttribute("aria-pressed", String(state.locked));
}

function onAnswer(event) {
  if (!state.running) return; // an answer that arrives after Stop shows nothing
  let answer;
  try {
    answer = JSON.parse(event.data);
  } catch (_) {
    return;
  }
  if (answer.error) {
    showError($("live-error"), new ApiError(answer.error.code, answer.error.message, 0));
  } else if (answer.ok) {
    showLock(answer.layout);
  } else {
    if (answer.table.hands.length) $("live-lock").disabled = false;
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
  clearScene($("live-overlay"));
  $("live-status").textContent = "Stopped";
  $("live-start").disabled = false;
  $("live-stop").disabled = true;
  $("live-lock").disabled = true;
  showLock(null);
}

export function setupLive() {
  $("live-start").addEventListener("click", start);
  $("live-stop").addEventListener("click", stop);
  $("live-lock").addEventListener("click", () => {
    if (state.socket && state.socket.readyState === WebSocket.OPEN) {
      state.socket.send(JSON.stringify({ lock: !state.locked }));
    }
  });
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
  onIndicesChange((indices) => {
    if (state.socket && state.socket.readyState === WebSocket.OPEN) {
      // an options message sets every table option: the page's own go with the letters
      const options = { profile: $("live-profile").value, deck: chosenDeck() || null, indices: indices || null };
      state.socket.send(JSON.stringify({ options }));
    }
  });
  if (!window.isSecureContext) {
    $("live-status").textContent = "This page is not on https:// or localhost: the browser will not open the camera (see \u201cUsing a phone\u201d).";
  }
}

export function stopLive() {
  if (state.running) stop();
}
