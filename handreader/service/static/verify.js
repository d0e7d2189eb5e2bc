// Dealer verification: a photo of the finished round and the declared results per player;
// the server answers match / mismatch / unverified with each difference, and logs it. The
// answer shows its evidence: the photo with the hands read drawn over it, each seat's cards
// and score. The audit log can be listed and exported here too. Both need the operator token.

import { $, el, markStale, request, imageForm, showError, table, money, typedStake, disableKeepingFocus, enableTakingFocus, enlargeable, markInvalid, pageWords } from "./common.js";
import { chosenDeck, chosenIndices, onDeckChange, onIndicesChange } from "./decks.js";
import { drawScene, clearScene, loadPicture, niuniuScene } from "./draw.js";
import { niuniuResults } from "./photo.js";

/** Enlarge the evidence or take it back (common.js enlargeable; set in setupVerify). */
let enlargeVerify = () => {};

let generation = 0; // a check or a newer photo makes an answer still on its way out of date
let verdicts = 0; // the checks whose verdict was shown: a seats read started before one is past

/** The most bytes the server takes in a photo (HANDREADER_MAX_BYTES' default). The dealer
 *  check sends the photo as it is, never shrunk: the audit log keeps its SHA-256, which must be
 *  the photo's own. */
const CHECK_MAX_BYTES = 20 * 1024 * 1024;

/** The chosen photo; an Error naming the limit when it is over it. */
function checkedPhoto(file) {
  if (file.size > CHECK_MAX_BYTES) {
    const mib = (file.size / 1024 / 1024).toFixed(1);
    throw new Error(`the photo is ${mib} MiB: the dealer check sends it as it is (its SHA-256 goes into the audit log), and the server takes at most 20 MiB; save it as a JPEG first`);
  }
  return file;
}

function addRow(seat = "", outcome = "win", payout = "") {
  const row = el("tr", { class: "declared-row" },
    el("td", {}, el("input", { type: "number", min: 0, step: 1, class: "seat", value: seat, "aria-label": "player's seat", placeholder: "seat" })),
    el("td", {}, (() => {
      const select = el("select", { class: "outcome", "aria-label": "player's outcome" },
        ...["win", "lose", "tie"].map((name) => el("option", { value: name }, name)));
      select.value = outcome;
      return select;
    })()),
    el("td", {}, el("input", { type: "number", step: "any", class: "payout", value: payout, "aria-label": "payout (player's net, optional)", placeholder: "payout" })),
    el("td", {}, el("button", { type: "button", class: "secondary remove" }, "Remove")),
  );
  const remove = row.querySelector(".remove");
  const name = () => remove.setAttribute("aria-label", `Remove seat ${row.querySelector(".seat").value || "(no seat yet)"}`);
  name();
  row.querySelector(".seat").addEventListener("input", name);
  remove.addEventListener("click", () => row.remove());
  $("verify-rows").append(row);
}

/** The declaration typed in the form: {"players": [{seat, outcome, payout?}], "banker_net"?}. */
export function declaration() {
  const players = [];
  for (const row of $("verify-rows").querySelectorAll("tr")) {
    const seat = row.querySelector(".seat").value;
    if (seat === "") continue;
    const entry = { seat: Number(seat), outcome: row.querySelector(".outcome").value };
    const payout = row.querySelector(".payout").value;
    if (payout !== "") entry.payout = Number(payout);
    players.push(entry);
  }
  const declared = { players };
  if ($("verify-banker-net").value !== "") declared.banker_net = Number($("verify-banker-net").value);
  return declared;
}

function authorization() {
  const token = $("verify-token").value.trim();
  return token ? { Authorization: `Bearer ${token}` } : {};
}

function showVerification(answer, picture) {
  const parts = [el("p", {},
    el("span", { class: `verdict ${answer.verdict}`, id: "verify-verdict" }, answer.verdict),
    ` record ${answer.record_id} \u00b7 photo SHA-256 ${answer.image_sha256.slice(0, 16)}\u2026`,
  )];
  if (answer.differences.length) {
    parts.push(table("Differences", ["Seat", "What", "Declared", "Computed", "Why"],
      answer.differences.map((d) => [d.seat === null ? (d.kind === "banker_net" ? "banker" : "table") : String(d.seat), d.kind.replace("_", " "), d.declared, d.computed, d.message]),
      { id: "verify-differences" }));
  } else {
    parts.push(el("p", {}, "Every declared result matches the table."));
  }
  const computed = answer.computed;
  if (computed.players.length) {
    parts.push(table(`Computed (banker: seat ${computed.banker ?? "\u2013"})`, ["Seat", "Outcome", "Payout", "Note"],
      computed.players.map((p) => [String(p.seat), p.outcome, money(p.payout), p.problem]), { id: "verify-computed" }));
  } else {
    parts.push(el("p", { id: "verify-computed" }, "No player to settle: the photo shows no hand besides the banker's."));
  }
  parts.push(el("p", { class: "summary" }, `Banker's net: ${money(computed.banker_net)}`));
  // the evidence: each seat's cards and score as read from the photo
  const evidence = niuniuResults(answer.table).filter((part) => part.id === "photo-hands");
  for (const part of evidence) part.id = "verify-hands";
  parts.push(...evidence);
  $("verify-results").replaceChildren(...parts);
  const canvas = $("verify-canvas");
  if (picture) {
    canvas.hidden = false;
    $("verify-enlarge").hidden = false;
    drawScene(canvas, picture, niuniuScene(answer.table));
  }
}

function clearVerification() {
  const canvas = $("verify-canvas");
  enlargeVerify(false);
  clearScene(canvas);
  canvas.hidden = true;
  $("verify-enlarge").hidden = true;
  $("verify-results").replaceChildren();
  markStale([$("verify-results"), $("verify-figure")], null);
  $("verify-status").textContent = "";
}

/** The form changed after a check: the result shown is out of date (it is not checked again by
 *  itself: each check is written to the audit log). */
function formChanged() {
  if (!$("verify-results").childElementCount) return;
  markStale([$("verify-results"), $("verify-figure")], "Out of date: the form changed since this check; check again");
  $("verify-status").textContent = "Out of date: the form changed since this check; check again.";
}

let checking = false;
/** A seats read that ended while a check was on its way, of the photo checked: said with the
 *  check's refusal ({file, table, picture}); a verdict shown makes it past. */
let readMeanwhile = null;

/** The seats ``table`` read in the chosen photo said in the status and drawn over ``picture``. */
function showSeatsRead(table, picture) {
  const seats = table.hands.map((hand) => (table.banker === hand.seat ? `${hand.seat} (banker)` : String(hand.seat)));
  $("verify-status").textContent = seats.length ? `Seats read: ${seats.join(", ")}. Declare each player's result by its seat, then Check.` : "No hand read in this photo.";
  $("verify-status").dataset.seats = JSON.stringify(table.hands.map((hand) => hand.seat));
  if (picture) {
    $("verify-canvas").hidden = false;
    $("verify-enlarge").hidden = false;
    drawScene($("verify-canvas"), picture, niuniuScene(table));
  }
}

async function submit(event) {
  event.preventDefault();
  if (checking) return;  // a double click checks once: one audit record
  showError($("verify-error"), null);
  const file = $("verify-file").files && $("verify-file").files[0];
  if (!file) {
    clearVerification();
    showError($("verify-error"), new Error("choose the photo of the round first"));
    return;
  }
  let stake;
  try {
    stake = typedStake($("verify-stake"));
  } catch (error) {
    showError($("verify-error"), error);
    return;
  }
  const options = { profile: $("verify-profile").value, stake, declared: declaration() };
  if ($("verify-bet").value) options.bet = $("verify-bet").value;
  if (chosenDeck()) options.deck = chosenDeck();
  if (chosenIndices()) options.indices = chosenIndices();
  const seatsRead = $("verify-status").textContent;
  $("verify-status").textContent = "Checking\u2026";
  const mine = ++generation;
  checking = true;
  readMeanwhile = null;
  disableKeepingFocus($("verify-submit"), $("verify-status"));
  try {
    const [answer, picture] = await Promise.all([
      request("/v1/verify", { method: "POST", headers: authorization(), body: imageForm(checkedPhoto(file), options) }).then((r) => r.json()),
      loadPicture(file),
    ]);
    if (mine !== generation) {
      // another photo was chosen while the check was on its way: its verdict is the photo
      // before's, so it is named as such and never shown as the photo now chosen's
      showError($("verify-error"), new Error(`The check of ${file.name} answered after another photo was chosen: ` +
        `it was logged as record ${answer.record_id} (${answer.verdict}). Check the photo now chosen to verify it.`));
      return;
    }
    verdicts += 1;
    clearVerification();
    showVerification(answer, picture);
    const differences = answer.differences.length;
    $("verify-status").textContent = `Checked: ${answer.verdict}` +
      (differences ? `, ${differences} difference${differences === 1 ? "" : "s"}` : "") + ` (record ${answer.record_id}).`;
  } catch (error) {
    if (mine !== generation) {
      showError($("verify-error"), new Error(`The check of ${file.name} failed after another photo was chosen: ${error.message}`));
      return;
    }
    if (error.status >= 400 && error.status < 500) {
      // the token or the form is wrong: the status says so, and the seats read stay in view
      // while the dealer mends it (read before the check, or while it was on its way; a read
      // still on its way says them when it ends)
      let seats = seatsRead.startsWith("Seats read") ? ` ${seatsRead}` : "";
      if (!seats && readMeanwhile && readMeanwhile.file === file) {
        showSeatsRead(readMeanwhile.table, readMeanwhile.picture);
        seats = ` ${$("verify-status").textContent}`;
      }
      $("verify-status").textContent = `Not checked: ${pageWords(error)}.${seats}`;
      if (error.code === "unauthorized") markInvalid($("verify-token"), $("verify-error"));
      formChanged();
    } else {
      clearVerification();
    }
    showError($("verify-error"), error);
  } finally {
    checking = false;
    readMeanwhile = null;
    enableTakingFocus($("verify-submit"), $("verify-status"));
  }
}

function auditQuery(format) {
  const query = new URLSearchParams({ format });
  if ($("audit-verdict").value) query.set("verdict", $("audit-verdict").value);
  for (const name of ["since", "until"]) {
    const value = $(`audit-${name}`).value;
    if (value) query.set(name, new Date(value).toISOString());
  }
  return query;
}

const AUDIT_HEADERS = ["Id", "Time (UTC)", "Profile", "Verdict", "Differences"];

function auditRow(r) {
  return [String(r.id), r.time_utc, r.profile, r.verdict, String(r.differences.length)];
}

let listed = null; // the query List last asked: Show more goes on with it, whatever the filters say now

/** The records matching the filters, a page at a time (the server answers 100 a page): List
 *  shows the first, Show more adds the next below them, of the query listed (disabled while
 *  it asks, so a double click adds one page). */
async function listAudit(offset = 0) {
  showError($("audit-error"), null);
  const since = $("audit-since").value, until = $("audit-until").value;
  if (!offset && since && until && new Date(since) >= new Date(until)) {
    showError($("audit-error"), new Error("Since is not before Until: no record can lie between them"));
    return;
  }
  // Show more is disabled while it asks, then hidden after the last page: its focus is kept
  const moreHadFocus = Boolean(offset) && document.activeElement === $("audit-more");
  if (offset) $("audit-more").disabled = true;
  try {
    if (!offset) listed = auditQuery("json");
    const query = new URLSearchParams(listed);
    if (offset) query.set("offset", String(offset));
    const answer = await (await request(`/v1/audit?${query}`, { headers: authorization() })).json();
    const rows = answer.records.map(auditRow);
    if (!offset || !$("audit-table")) {
      $("audit-results").replaceChildren(
        el("p", { id: "audit-count", tabindex: "-1" }),
        table("Verifications", AUDIT_HEADERS, rows, { id: "audit-table" }),
        el("button", { type: "button", id: "audit-more" }, "Show more"),
      );
    } else {
      const added = table(null, AUDIT_HEADERS, rows).querySelector("tbody").children;
      $("audit-table").querySelector("tbody").append(...added);
    }
    const shown = $("audit-table").querySelector("tbody").children.length;
    $("audit-count").textContent = shown < answer.count
      ? `${answer.count} record(s), the first ${shown} shown`
      : `${answer.count} record(s)`;
    const more = $("audit-more");
    more.hidden = answer.next_offset === null || answer.next_offset === undefined;
    if (moreHadFocus && more.hidden) $("audit-count").focus(); // the last page: the count says so
    more.onclick = () => listAudit(answer.next_offset);
  } catch (error) {
    showError($("audit-error"), error);
  } finally {
    const more = document.getElementById("audit-more"); // none before a first listing worked
    if (more) more.disabled = false;
    if (more && moreHadFocus && !more.hidden) more.focus();
  }
}

async function downloadCsv() {
  showError($("audit-error"), null);
  try {
    const blob = await (await request(`/v1/audit?${auditQuery("csv")}`, { headers: authorization() })).blob();
    const link = el("a", { href: URL.createObjectURL(blob), download: "audit.csv" });
    document.body.append(link);
    link.click();
    link.remove();
  } catch (error) {
    showError($("audit-error"), error);
  }
}

/** The photo chosen: read it (``POST /v1/score``, nothing logged) and draw its hands with
 *  their seat numbers, so the dealer declares by the seats the check will use. */
async function preview() {
  const file = $("verify-file").files && $("verify-file").files[0];
  if (!file) return;
  const mine = ++generation;
  const shownBefore = verdicts;
  clearVerification();
  const options = { profile: $("verify-profile").value, stake: Number($("verify-stake").value) || 1 };
  if (chosenDeck()) options.deck = chosenDeck();
  if (chosenIndices()) options.indices = chosenIndices();
  showError($("verify-error"), null); // a mistake named before this photo was chosen is past
  $("verify-status").textContent = "Reading the seats\u2026";
  try {
    const [table, picture] = await Promise.all([
      request("/v1/score", { method: "POST", body: imageForm(checkedPhoto(file), options) }).then((r) => r.json()),
      loadPicture(file),
    ]);
    // another photo was chosen, or the round checked (a refused check leaves the read its say)
    const same = verdicts === shownBefore && $("verify-file").files[0] === file;
    if (mine !== generation && checking && same) readMeanwhile = { file, table, picture }; // said if the check is refused
    if (mine !== generation && (checking || !same)) return;
    showSeatsRead(table, picture);
  } catch (error) {
    if (mine !== generation) return;
    $("verify-status").textContent = "";
    showError($("verify-error"), error);
  }
}

export function setupVerify() {
  addRow(1);
  $("verify-file").addEventListener("change", preview);
  $("verify-add").addEventListener("click", () => {
    addRow();
    formChanged();
  });
  $("verify-form").addEventListener("change", formChanged);
  $("verify-rows").addEventListener("click", (event) => {
    if (event.target.closest(".remove")) formChanged();
  });
  onDeckChange(formChanged);
  onIndicesChange(formChanged);
  $("verify-form").addEventListener("submit", submit);
  enlargeVerify = enlargeable($("verify-figure"), $("verify-enlarge"), [$("verify-canvas")]);
  $("audit-list").addEventListener("click", () => listAudit());
  $("audit-csv").addEventListener("click", downloadCsv);
}
