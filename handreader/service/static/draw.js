// Drawing a reading over its picture, one way for photo mode, the live overlay and the dealer
// check: card boxes and codes, each hand's box in its colour with the bull's cards filled, and
// each hand's label (seat, score, outcome, WINNER) placed inside the frame.
//
// Sizes follow the picture as it is shown, not its pixels: a label is LABEL_CSS_PX CSS pixels
// tall on the screen and a card's code CODE_CSS_PX, whether the photo is 640 or 4,000 pixels
// wide, so that they read at a glance on a phone held at arm's length. The labels are placed
// as the annotated image places them (handreader/drawing/layout.py, the same steps): above the
// hand, below it, beside it, then farther out with a leader line, the first place that covers
// no code, no other label, no card's index and no other hand; when none is free, the one that
// covers least of the codes and labels, then of the cards' indices, then of the other hands. A label wider than the frame is broken into lines at " · ", then between words.
//
// The codes are placed first, as the annotated image places them (layout.py's place_codes, the
// same steps): at the card, unless a code there would overlap another code, a card's index or
// the frame's edge pushes it onto its card; then the whole hand's codes go in a row, in the
// cards' order from left to right, placed as a label is (above, below, beside, farther out),
// each joined to its card by a leader line. A tight fan on a phone shows every code apart.

import { ROLE_COLOURS, SEAT_COLOURS } from "./common.js";

export const CARD_COLOUR = "rgb(255, 214, 0)";
export const UNCERTAIN_COLOUR = "rgb(230, 30, 30)";
export const LEFT_OVER_COLOUR = "rgb(150, 150, 150)";
export const LABEL_CSS_PX = 18;
/** A card's code on the drawing, in CSS pixels (readable on a phone). */
export const CODE_CSS_PX = 14;
/** How many label heights farther out a label may go above or below its hand. */
const RINGS = 8;
/** The largest side of a drawn photo: a 12 MP photo is shown on a canvas of this size. */
export const MAX_CANVAS_SIDE = 1600;

const SEPARATOR = " \u00b7 ";
const BLACK = "rgb(0, 0, 0)";
const WHITE = "rgb(255, 255, 255)";
/** The fill under a card's code of the card colour (loose live cards): white reads on it. */
const CODE_SHADE = "rgba(0, 0, 0, 0.65)";

/** WCAG's relative luminance of an "rgb(r, g, b)" colour (0 for black, 1 for white). */
function luminance(colour) {
  const linear = (value) => (value <= 0.04045 ? value / 12.92 : ((value + 0.055) / 1.055) ** 2.4);
  const [red, green, blue] = colour.match(/[\d.]+/g).slice(0, 3).map((part) => linear(Number(part) / 255));
  return 0.2126 * red + 0.7152 * green + 0.0722 * blue;
}

/** WCAG's contrast ratio of two "rgb(r, g, b)" colours, from 1 to 21. */
export function contrastRatio(first, second) {
  const [light, dark] = [luminance(first), luminance(second)].sort((a, b) => b - a);
  return (light + 0.05) / (dark + 0.05);
}

/** Black or white, whichever contrasts more with ``background`` (at least 4.58:1, above
 *  WCAG 1.4.3's 4.5:1): the text colour of a code on its hand's colour, as the annotated
 *  image chooses it (handreader/drawing/contrast.py). */
export function textOn(background) {
  return contrastRatio(BLACK, background) >= contrastRatio(WHITE, background) ? BLACK : WHITE;
}

/** The colour of a hand: the banker's (or dealer's) gold, else a colour per seat. */
export function handColour(hand) {
  if (hand.role === "banker" || hand.role === "dealer") return ROLE_COLOURS.banker;
  return SEAT_COLOURS[hand.seat % SEAT_COLOURS.length];
}

function plural(count, word) {
  return `${count} ${word}${count === 1 ? "" : "s"}`;
}

/** A hand's status in words ("incomplete: 4 cards", "too many cards: 8"). */
export function statusText(hand) {
  const count = plural(hand.cards.length, "card");
  switch (hand.status) {
    case "incomplete": return `incomplete (${count})`;
    case "too_many": return `too many cards (${hand.cards.length})`;
    default: return hand.status;
  }
}

/** The label of a Niu Niu hand: seat and role, score, outcome and net, WINNER. */
export function niuniuLabel(hand, table) {
  const who = table.banker === hand.seat ? `Banker ${hand.seat}` : `Seat ${hand.seat}`;
  const parts = [who];
  if (hand.score) parts.push(hand.status === "scored" ? hand.score.label : hand.status === "uncertain" ? `unverified (${hand.score.label}?)` : `${hand.score.label}? (${hand.status})`);
  else parts.push(statusText(hand));
  const player = (table.players || []).find((item) => item.seat === hand.seat);
  if (player && player.outcome) parts.push(`${player.outcome} ${player.net > 0 ? "+" : ""}${player.net}`);
  if ((table.winners || []).includes(hand.seat)) parts.push(table.tie ? "TIE" : "WINNER");
  return parts.join(SEPARATOR);
}

/** What to draw for a Niu Niu table (TableOut); ``cards`` adds loose cards (live tracks). */
export function niuniuScene(table, cards = []) {
  return {
    size: table.size,
    cards,
    hands: table.hands.map((hand) => ({
      box: hand.box,
      colour: handColour(hand),
      label: niuniuLabel(hand, table),
      tag: String(hand.seat),
      cards: hand.cards,
    })),
    leftOver: table.left_over || [],
  };
}

/** Image pixels per CSS pixel of an element showing ``width`` image pixels. */
function imagePerCss(element, width) {
  const shown = element.getBoundingClientRect().width;
  return shown > 0 ? width / shown : 1;
}

function clampInside(rect, width, height) {
  return {
    ...rect,
    x: Math.min(Math.max(rect.x, 0), Math.max(width - rect.w, 0)),
    y: Math.min(Math.max(rect.y, 0), Math.max(height - rect.h, 0)),
  };
}

/** Lines of ``text`` no wider than ``room``: broken at the separator when needed, and a part
 *  still wider (a Pits verdict's reason) between its words. */
function lines(context, text, room) {
  if (context.measureText(text).width <= room) return [text];
  return packed(context, text.split(SEPARATOR), SEPARATOR, room)
    .flatMap((line) => (context.measureText(line).width <= room ? [line] : packed(context, line.split(" "), " ", room)));
}

/** ``parts`` joined by ``joint`` into as few lines no wider than ``room`` as they go (a part
 *  wider than ``room`` alone is a line of its own). */
function packed(context, parts, joint, room) {
  const found = [];
  let line = "";
  for (const part of parts) {
    const next = line ? line + joint + part : part;
    if (line && context.measureText(next).width > room) {
      found.push(line);
      line = part;
    } else {
      line = next;
    }
  }
  if (line) found.push(line);
  return found;
}

function area(a, b) {
  const w = Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x);
  const h = Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y);
  return w > 0 && h > 0 ? w * h : 0;
}

/** Below this shown width (CSS pixels: a phone), a label that covers a code or a card's index
 *  is drawn as its hand's numbered tag, its text in the canvas's legend. */
export const NARROW_CSS_PX = 600;

/** The places a label of ``w`` x ``h`` may take around a hand box, in order (see the module
 *  comment), each with whether it lies away from the hand. */
function labelCandidates(box, w, h, gap) {
  const [x1, y1, x2, y2] = box;
  const near = [[x1, y1 - gap - h], [x2 - w, y1 - gap - h], [x1, y2 + gap], [x2 - w, y2 + gap], [x1 - gap - w, y1], [x2 + gap, y1]];
  const places = near.map(([x, y]) => ({ x, y, w, h, away: false }));
  for (let ring = 1; ring <= RINGS; ring += 1) {
    const step = ring * (h + gap);
    for (const y of [y1 - gap - h - step, y2 + gap + step]) for (const x of [x1, x2 - w]) places.push({ x, y, w, h, away: true });
  }
  return places;
}

/** The first place of a ``w`` x ``h`` box around ``box`` (moved inside the frame) covering
 *  nothing of any of ``tiers`` (lists of boxes), else the one covering least of the first tier,
 *  then of the next...; with whether it lies away from the box. */
function bestPlace(box, w, h, gap, tiers, width, height) {
  let best = null;
  const less = (a, b) => {
    for (let index = 0; index < a.length; index += 1) if (a[index] !== b[index]) return a[index] < b[index];
    return false;
  };
  for (const candidate of labelCandidates(box, w, h, gap)) {
    const rect = clampInside(candidate, width, height);
    const covered = tiers.map((tier) => tier.reduce((sum, other) => sum + area(rect, other), 0));
    if (!best || less(covered, best.covered)) best = { rect, covered, away: candidate.away };
    if (covered.every((value) => value === 0)) break;
  }
  return best;
}

const asRect = ([a, b, c, d]) => ({ x: a, y: b, w: c - a, h: d - b });

/** Where a label box of ``w`` x ``h`` goes for a hand box (see the module comment): the place
 *  and, when it lies away from its hand, the leader line's two ends. */
export function placeLabel(box, w, h, gap, keepClear, placed, hands, width, height, indices = []) {
  const others = hands.filter((other) => other !== box).map(asRect);
  const best = bestPlace(box, w, h, gap, [[...keepClear, ...placed], indices, others], width, height);
  const { rect } = best;
  const hand = asRect(box);
  const touching = area({ x: rect.x - 2 * gap, y: rect.y - 2 * gap, w: rect.w + 4 * gap, h: rect.h + 4 * gap }, hand) > 0;
  let leader = null;
  if (best.away || !touching) {
    const cx = Math.min(Math.max(rect.x + rect.w / 2, box[0]), box[2]);
    if (rect.y + rect.h <= box[1]) leader = [cx, rect.y + rect.h, cx, box[1]];
    else if (rect.y >= box[3]) leader = [cx, rect.y, cx, box[3]];
    else {
      const cy = Math.min(Math.max(rect.y + rect.h / 2, box[1]), box[3]);
      leader = rect.x + rect.w <= box[0] ? [rect.x + rect.w, cy, box[0], cy] : [rect.x, cy, box[2], cy];
    }
  }
  return { x: rect.x, y: rect.y, w: rect.w, h: rect.h, leader, clear: best.covered[0] === 0 && best.covered[1] === 0 };
}

/** A line from the point of ``code`` nearest the card's centre to the point of ``card``
 *  nearest the code's centre (both {x, y, w, h}). */
function codeLeader(code, card) {
  const nearest = (r, x, y) => [Math.min(Math.max(x, r.x), r.x + r.w), Math.min(Math.max(y, r.y), r.y + r.h)];
  return [...nearest(code, card.x + card.w / 2, card.y + card.h / 2), ...nearest(card, code.x + code.w / 2, code.y + code.h / 2)];
}

/** Indices of ``widths`` packed in order into rows no wider than ``room``. */
function codeRows(widths, room, gap) {
  const rows = [];
  let used = 0;
  widths.forEach((width, index) => {
    if (rows.length && used + gap + width <= room) {
      rows[rows.length - 1].push(index);
      used += gap + width;
    } else {
      rows.push([index]);
      used = width;
    }
  });
  return rows;
}

/**
 * Where each card's code goes (see the module comment): ``cards`` the index boxes, ``atCards``
 * the codes' boxes at their cards (inside the frame), ``hands`` each card's hand (a key; a card
 * of no hand has one of its own), ``keepClear`` what else no code may cover; boxes are
 * {x, y, w, h}. Returns for each card {x, y, w, h, leader} (leader null at its card).
 */
export function placeCodes(cards, atCards, hands, keepClear, gap, width, height) {
  const crowded = new Set();
  atCards.forEach((box, index) => {
    const hit = [...cards, ...keepClear].some((other) => area(box, other) > 0)
      || atCards.some((other, at) => at !== index && area(box, other) > 0);
    if (hit) crowded.add(hands[index]);
  });
  const places = atCards.map((box) => ({ ...box, leader: null }));
  const fixed = atCards.filter((_, index) => !crowded.has(hands[index]));
  const members = new Map();
  hands.forEach((hand, index) => members.set(hand, [...(members.get(hand) || []), index]));
  const spans = new Map([...members].map(([hand, found]) => {
    const boxes = found.map((index) => cards[index]);
    return [hand, [Math.min(...boxes.map((b) => b.x)), Math.min(...boxes.map((b) => b.y)), Math.max(...boxes.map((b) => b.x + b.w)), Math.max(...boxes.map((b) => b.y + b.h))]];
  }));
  for (const [hand, found] of members) {
    if (!crowded.has(hand)) continue;
    const centre = (index) => cards[index].x + cards[index].w / 2;
    const order = [...found].sort((a, b) => centre(a) - centre(b) || cards[a].y - cards[b].y);
    const widths = order.map((index) => atCards[index].w);
    const tall = Math.max(...order.map((index) => atCards[index].h));
    const rows = codeRows(widths, width, gap);
    const blockW = Math.max(...rows.map((row) => row.reduce((sum, j) => sum + widths[j], 0) + gap * (row.length - 1)));
    const blockH = rows.length * tall + (rows.length - 1) * gap;
    const others = [...spans].filter(([other]) => other !== hand).map(([, span]) => asRect(span));
    const { rect } = bestPlace(spans.get(hand), blockW, blockH, gap, [[...keepClear, ...fixed], cards, others], width, height);
    rows.forEach((row, line) => {
      let x = rect.x;
      const y = rect.y + line * (tall + gap);
      for (const j of row) {
        const box = { x, y, w: widths[j], h: tall };
        places[order[j]] = { ...box, leader: codeLeader(box, cards[order[j]]) };
        fixed.push(box);
        x += widths[j] + gap;
      }
    });
  }
  return places;
}

function textBox(context, text, x, y, font, colour, background) {
  const padding = Math.round(font * 0.25);
  const width = context.measureText(text).width + 2 * padding;
  context.fillStyle = background;
  context.fillRect(x, y, width, font + 2 * padding);
  context.fillStyle = colour;
  context.fillText(text, x + padding, y + padding);
}

/**
 * Draw ``scene`` on ``canvas``: ``picture`` (an image or bitmap; null for an overlay over a
 * video) scaled to the canvas, then the cards and hands. ``scene.size`` is the picture's size
 * in the pixels of the boxes. The canvas takes that size, shrunk to MAX_CANVAS_SIDE at most.
 * Returns the labels drawn ({text, x, y, w, h} in canvas pixels) and writes them, with the
 * label height in CSS pixels, to ``canvas.dataset.labels`` (what the page's tests read).
 */
export function drawScene(canvas, picture, scene) {
  const [sizeW, sizeH] = scene.size;
  const factor = Math.min(1, MAX_CANVAS_SIDE / Math.max(sizeW, sizeH));
  const width = Math.round(sizeW * factor);
  const height = Math.round(sizeH * factor);
  if (canvas.width !== width || canvas.height !== height) {
    canvas.width = width;
    canvas.height = height;
  }
  const context = canvas.getContext("2d");
  context.clearRect(0, 0, width, height);
  if (picture) context.drawImage(picture, 0, 0, width, height);
  const scale = imagePerCss(canvas, width);
  const font = Math.max(10, Math.round(LABEL_CSS_PX * scale));
  const small = Math.max(9, Math.round(CODE_CSS_PX * scale));
  const cardBoxes = [];
  const line = Math.max(2, Math.round(2 * scale));
  const at = (box) => box.map((value) => value * factor);
  context.lineWidth = line;
  context.textBaseline = "top";
  context.font = `bold ${small}px sans-serif`;

  // each card drawn with a box: its outline now, its code once every code is placed
  const shown = [];
  const handCards = scene.hands.flatMap((hand, number) => hand.cards.filter((card) => card.box).map((card) => ({ card, number })));
  // a live track belongs to the hand holding a card of its code over it (the hands hold still
  // while the tracks move a little); a card of no hand is a group of its own
  const handOf = (card) => {
    const found = handCards.find((held) => held.card === card || (held.card.card === card.card && area(asRect(held.card.box), asRect(card.box)) > 0));
    return found ? found.number : undefined;
  };
  const drawCard = (card, colour, loose) => {
    if (!card.box) return;
    const [x1, y1, x2, y2] = at(card.box);
    const outline = card.uncertain ? UNCERTAIN_COLOUR : colour;
    context.strokeStyle = outline;
    context.strokeRect(x1, y1, x2 - x1, y2 - y1);
    const text = card.card + (card.uncertain ? "?" : "");
    const w = context.measureText(text).width + small * 0.5;
    const spot = clampInside({ x: x1, y: y1 - small * 1.5, w, h: small * 1.5 }, width, height);
    const hand = handOf(card);
    const group = loose || hand === undefined ? `card ${shown.length}` : `hand ${hand}`;
    shown.push({ text, outline, spot, group });
    cardBoxes.push({ x: x1, y: y1, w: x2 - x1, h: y2 - y1 });
  };

  for (const card of scene.cards || []) drawCard(card, CARD_COLOUR, false);
  for (const hand of scene.hands) {
    context.fillStyle = hand.colour;
    context.globalAlpha = 0.3;
    for (const card of hand.cards) {
      if (card.part === "bull" && card.box) {
        const [x1, y1, x2, y2] = at(card.box);
        context.fillRect(x1, y1, x2 - x1, y2 - y1);
      }
    }
    context.globalAlpha = 1;
    // the bull's cards framed twice (an inner outline too): not told by the fill's colour alone
    context.strokeStyle = hand.colour;
    for (const card of hand.cards) {
      if (card.part === "bull" && card.box) {
        const [x1, y1, x2, y2] = at(card.box);
        const inset = 2 * line;
        if (x2 - x1 > 3 * inset && y2 - y1 > 3 * inset) context.strokeRect(x1 + inset, y1 + inset, x2 - x1 - 2 * inset, y2 - y1 - 2 * inset);
      }
    }
    if (!(scene.cards || []).length) for (const card of hand.cards) drawCard(card, hand.colour, false);
  }
  for (const card of scene.leftOver || []) drawCard(card, LEFT_OVER_COLOUR, true);

  const codes = placeCodes(cardBoxes, shown.map((card) => card.spot), shown.map((card) => card.group), [], line * 2, width, height);

  const labels = [];
  const placed = [];
  const padding = Math.round(font * 0.3);
  context.font = `bold ${font}px sans-serif`;
  const pad = line * 3;
  const shownHands = scene.hands.filter((hand) => hand.box);
  const arounds = shownHands.map((hand) => {
    const [x1, y1, x2, y2] = at(hand.box);
    return [x1 - pad, y1 - pad, x2 + pad, y2 + pad];
  });
  const keepClear = codes;
  shownHands.forEach((hand, index) => {
    const around = arounds[index];
    context.strokeStyle = hand.colour;
    context.lineWidth = line;
    context.strokeRect(around[0], around[1], around[2] - around[0], around[3] - around[1]);
  });
  // the labels placed clear of the codes
  context.font = `bold ${font}px sans-serif`;
  // on a narrow screen, with a legend to write to, a label that covers a code or a card's
  // index gives way to a numbered tag (the seat's number, at the codes' size at least)
  const legend = canvas.dataset.legend ? document.getElementById(canvas.dataset.legend) : null;
  const tagging = Boolean(legend) && width / scale < NARROW_CSS_PX;
  const tagFont = Math.max(small, Math.round(16 * scale));
  const rects = shownHands.map((hand, index) => {
    const rows = lines(context, hand.label, width - 2 * padding);
    const textW = Math.max(...rows.map((row) => context.measureText(row).width)) + 2 * padding;
    const w = Math.min(width, textW);
    const h = rows.length * font * 1.2 + 2 * padding;
    const rect = placeLabel(arounds[index], w, h, line * 2, keepClear, placed, arounds, width, height, cardBoxes);
    if (tagging && !rect.clear) {
      const tag = hand.tag ?? String(index + 1);
      context.font = `bold ${tagFont}px sans-serif`;
      const tagPadding = Math.round(tagFont * 0.3);
      const tagW = context.measureText(tag).width + 2 * tagPadding + Math.max(3, line * 2);
      context.font = `bold ${font}px sans-serif`;
      const spot = placeLabel(arounds[index], tagW, tagFont + 2 * tagPadding, line * 2, keepClear, placed, arounds, width, height, cardBoxes);
      placed.push(spot);
      return { rect: spot, rows: [tag], textW: tagW, tag, tagFont, tagPadding };
    }
    placed.push(rect);
    return { rect, rows, textW };
  });
  // every leader line first, the codes' and the labels', so that none is drawn over a code or
  // a label; then the codes, over the card and hand boxes; then the labels
  const stroke = (leader, colour, thickness) => {
    context.strokeStyle = colour;
    context.lineWidth = thickness;
    context.beginPath();
    context.moveTo(leader[0], leader[1]);
    context.lineTo(leader[2], leader[3]);
    context.stroke();
  };
  shown.forEach((card, index) => {
    if (codes[index].leader) stroke(codes[index].leader, card.outline, Math.max(1, line / 2));
  });
  shownHands.forEach((hand, index) => {
    if (rects[index].rect.leader) stroke(rects[index].rect.leader, hand.colour, line);
  });
  const inks = [];
  context.font = `bold ${small}px sans-serif`;
  shown.forEach((card, index) => {
    const code = codes[index];
    const fill = card.outline === CARD_COLOUR ? CODE_SHADE : card.outline;
    const ink = fill === CODE_SHADE ? WHITE : textOn(fill);
    textBox(context, card.text, code.x, code.y, small, ink, fill);
    inks.push({ ink, fill });
  });
  context.lineWidth = line;
  context.font = `bold ${font}px sans-serif`;
  const tags = [];
  shownHands.forEach((hand, index) => {
    const { rect, rows, textW, tag } = rects[index];
    context.fillStyle = "rgba(0, 0, 0, 0.72)";
    context.fillRect(rect.x, rect.y, rect.w, rect.h);
    context.fillStyle = hand.colour;
    context.fillRect(rect.x, rect.y, Math.max(3, line * 2), rect.h);
    context.fillStyle = "#fff";
    if (tag !== undefined) {
      const { tagFont, tagPadding } = rects[index];
      context.font = `bold ${tagFont}px sans-serif`;
      context.fillText(tag, rect.x + Math.max(3, line * 2) + tagPadding, rect.y + tagPadding);
      context.font = `bold ${font}px sans-serif`;
      tags.push({ tag, text: hand.label, x: rect.x, y: rect.y, w: rect.w, h: rect.h });
      return;
    }
    rows.forEach((row, number) => context.fillText(row, rect.x + padding, rect.y + padding + number * font * 1.2));
    labels.push({ text: hand.label, x: rect.x, y: rect.y, w: rect.w, h: rect.h, textW, rows: rows.length });
  });
  if (legend) showLegend(legend, tags.length ? shownHands : [], shownHands.map((hand, index) => rects[index].tag ?? hand.tag ?? String(index + 1)));
  canvas.dataset.labels = JSON.stringify({ width, height, fontCss: font / scale, codeCss: small / scale, tagCss: tagFont / scale, labels, tags, codes, inks, cards: cardBoxes });
  drawn.set(canvas, [picture, scene]);
  return labels;
}

// What each canvas shows, drawn again when the window's width changes the shown size.
const drawn = new Map();
let resizing = 0;
window.addEventListener("resize", () => {
  clearTimeout(resizing);
  resizing = setTimeout(() => {
    for (const [canvas, [picture, scene]] of drawn) {
      if (canvas.isConnected && !canvas.hidden && canvas.dataset.labels) drawScene(canvas, picture, scene);
    }
  }, 150);
});

/** The legend under a photo whose labels gave way to tags: every hand's label, keyed by its
 *  number in a chip of its colour; hidden when no hand is tagged. */
function showLegend(legend, hands, keys) {
  legend.replaceChildren(...hands.map((hand, index) => {
    const item = document.createElement("li");
    const chip = document.createElement("span");
    chip.className = "chip";
    chip.style.background = hand.colour;
    chip.style.color = textOn(hand.colour);
    chip.textContent = keys[index];
    item.append(chip, " ", hand.label);
    return item;
  }));
  legend.hidden = hands.length === 0;
}

/** Clear a canvas drawn by drawScene and forget what it showed. */
export function clearScene(canvas) {
  const legend = canvas.dataset.legend ? document.getElementById(canvas.dataset.legend) : null;
  if (legend) showLegend(legend, [], []);
  drawn.delete(canvas);
  canvas.getContext("2d").clearRect(0, 0, canvas.width, canvas.height);
  delete canvas.dataset.labels;
}

/** The picture of a file as the browser shows it (EXIF orientation applied); null when the
 *  browser cannot decode it. */
export async function loadPicture(file) {
  try {
    return await createImageBitmap(file, { imageOrientation: "from-image" });
  } catch (_) {
    return null;
  }
}
