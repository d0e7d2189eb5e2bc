// Trainer mode (seed 002): the server deals 2 to 4 hands, the user picks the winner, the server
// answers the correct reading (splits, scores, tie-break); the running score lives in the page.

import { $, el, request, postJson, showError, cardChips, table } from "./common.js";

const LETTERS = "ABCD";
// checking: a pick on its way to the server (one pick a deal is counted, and an answer is shown
// only under the deal it was asked for)
const state = { hands: null, profile: "trainer", answered: false, checking: false, right: 0, played: 0 };

function showScore() {
  $("trainer-score").textContent = `${state.right} / ${state.played}`;
}

async function deal() {
  showError($("trainer-error"), null);
  const query = new URLSearchParams({ hands: $("trainer-count").value, profile: $("trainer-profile").value });
  const seedText = $("trainer-seed").value.trim();
  if (seedText !== "") {
    if (!/^\d{1,19}$/.test(seedText) || BigInt(seedText) >= 2n ** 63n) {
      // the deal on screen stays as it was: only the seed typed is wrong
      showError($("trainer-error"), new Error(`a seed is a whole number from 0 to 2^63 - 1, not ${seedText}`));
      return;
    }
    query.set("seed", seedText);
  }
  $("trainer-answer").replaceChildren();
  try {
    // the seed as the server wrote it: a JSON number over 2^53 loses digits in JavaScript
    const text = await (await request(`/v1/trainer/deal?${query}`)).text();
    const dealt = JSON.parse(text);
    const seed = (text.match(/"seed"\s*:\s*(\d+)/) || [null, String(dealt.seed)])[1];
    state.hands = dealt.hands;
    state.profile = dealt.profile;
    state.answered = false;
    state.checking = false;
    const list = $("trainer-hands");
    list.replaceChildren(...dealt.hands.map((cards, index) => el(
      "li",
      { "data-hand": index },
      el("span", { class: "name" }, `Hand ${LETTERS[index]}`),
      cardChips(cards),
      el("button", { class: "pick", "data-hand": index, type: "button" }, `Hand ${LETTERS[index]} wins`),
    )));
    for (const button of list.querySelectorAll("button.pick")) {
      button.addEventListener("click", () => pick(Number(button.dataset.hand)));
    }
    list.querySelector("button.pick").focus();
    $("trainer-prompt").textContent = `Which hand wins? (deal ${seed})`;
    $("trainer-prompt").dataset.seed = seed;
  } catch (error) {
    showError($("trainer-error"), error);
  }
}

async function pick(index) {
  if (!state.hands || state.answered || state.checking) return;
  const hands = state.hands;
  state.checking = true;
  showError($("trainer-error"), null);
  try {
    const answer = await postJson("/v1/trainer/check", { hands, pick: index, profile: state.profile });
    if (hands !== state.hands) return; // another deal came meanwhile: this answer is not its
    state.answered = true;
    state.played += 1;
    if (answer.correct) state.right += 1;
    showScore();
    const items = $("trainer-hands").querySelectorAll("li");
    items.forEach((item, seat) => {
      item.classList.toggle("winner", answer.winners.includes(seat));
      item.classList.toggle("picked", seat === index);
      const button = item.querySelector("button.pick");
      if (button) button.disabled = true;
    });
    showAnswer(answer);
  } catch (error) {
    if (hands === state.hands) showError($("trainer-error"), error);
  } finally {
    if (hands === state.hands) state.checking = false;
  }
}

function showAnswer(answer) {
  const winners = answer.winners.map((seat) => `Hand ${LETTERS[seat]}`).join(" and ");
  const verdict = el("p", { id: "trainer-result", tabindex: "-1" },
    el("span", { class: `verdict ${answer.correct ? "correct" : "wrong"}`, id: "trainer-verdict" }, answer.correct ? "Right" : "Wrong"),
    el("span", { class: "visually-hidden" }, ":"), // read as two sentences, not one
    ` ${winners} ${answer.tie ? "tie for first place" : "wins"}.`,
  );
  const rows = answer.hands.map((hand) => {
    const score = hand.score;
    const split = score && score.bull
      ? el("span", {}, cardChips(score.bull), " | ", cardChips(score.rest))
      : "no three cards make a multiple of ten";
    return [`Hand ${LETTERS[hand.seat]}`, split, score ? score.label : hand.status, String(answer.places ? answer.places[hand.seat] : "\u2013")];
  });
  const parts = [verdict, table("The correct reading", ["Hand", "Split (bull | rest)", "Score", "Place"], rows, { id: "trainer-reading" })];
  if (answer.tie_break) parts.push(el("p", { id: "trainer-tie-break" }, `Tie-break: ${answer.tie_break.text}`));
  parts.push(el("button", { type: "button", id: "trainer-next" }, "Next deal"));
  $("trainer-answer").replaceChildren(...parts);
  $("trainer-next").addEventListener("click", deal);
  const seed = $("trainer-prompt").dataset.seed;
  const again = seed ? ` (deal ${seed}: give it as the seed to play it again)` : "";
  $("trainer-prompt").textContent = (answer.correct ? "Well read." : "Look at the splits and try the next deal.") + again;
  $("trainer-result").focus(); // the pick's button is now disabled: focus the answer, not the page
}

export function setupTrainer() {
  $("trainer-deal").addEventListener("click", deal);
  showScore();
}
