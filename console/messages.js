// Messages: recent Publishes (ListMessages, admin keys), one message's progress while it fans out,
// its rejected and failed recipients from the delivery log, and cancelling one not yet finished.
import { call, num, poll } from "./api.js";
import { count, enumLabel, h, showError, table, time } from "./dom.js";

const LOG_ROWS = 200;
const FINAL = new Set(["MESSAGE_STATE_COMPLETED", "MESSAGE_STATE_EXPIRED", "MESSAGE_STATE_CANCELLED"]);

function target(message) {
  if (message.topic) return `topic ${message.topic}`;
  if (message.userId) return `user ${message.userId}`;
  if (message.endpointId) return `endpoint ${message.endpointId}`;
  return "-";
}

export function mount(root, context, [id]) {
  if (!id) return list(root, context);
  let decoded;
  try {
    decoded = decodeURIComponent(id);
  } catch {
    decoded = id;
  }
  return detail(root, context, decoded);
}


function list(root) {
  const input = h("input", { id: "message-id-input", placeholder: "message id", spellcheck: "false" });
  const find = h("form", { id: "message-find", class: "card row" }, h("label", {}, "Find a message by id", input),
    h("button", { type: "submit" }, "Open"));
  find.addEventListener("submit", (event) => {
    event.preventDefault();
    if (input.value.trim()) location.hash = `#/messages/${encodeURIComponent(input.value.trim())}`;
  });
  const error = h("p", { id: "messages-error", class: "error" });
  const box = h("div", { id: "messages-box" });
  root.append(h("h1", {}, "Messages"), find, error, box);

  let stop;
  async function refresh() {
    try {
      const reply = await call("pushgate.v1.Push/ListMessages", { pageSize: 50 });
      showError(error, null);
      box.replaceChildren(table("messages-table",
        ["Message", "State", "Target", "Published", { label: "Total", num: true }, { label: "Delivered", num: true },
          { label: "Rejected", num: true }, { label: "Failed", num: true }],
        (reply.messages ?? []).map((m) => h("tr", {
          class: "clickable", dataset: { message: m.messageId },
          onclick: () => { location.hash = `#/messages/${encodeURIComponent(m.messageId)}`; },
        },
        h("td", { class: "mono" }, m.messageId), h("td", { class: `state state-${enumLabel(m.state, "MESSAGE_STATE_").replaceAll(" ", "-")}` }, enumLabel(m.state, "MESSAGE_STATE_")),
        h("td", {}, target(m)), h("td", {}, time(m.publishedAt)), h("td", { class: "num" }, count(m.total)),
        h("td", { class: "num" }, count(m.delivered)), h("td", { class: "num" }, count(m.rejected)),
        h("td", { class: "num" }, count(m.failed))))));
    } catch (e) {
      showError(error, e);
      if (e.code === "permission_denied") {
        box.replaceChildren(h("p", { class: "hint" }, "Listing messages needs an admin key; any key may open a message it published by id."));
        stop?.();
      }
    }
  }
  stop = poll(3000, refresh);
  return () => stop();
}

function detail(root, context, id) {
  const error = h("p", { id: "message-error", class: "error" });
  const facts = h("dl", { class: "facts", id: "message-detail" });
  const progress = h("progress", { id: "message-progress", max: 1, value: 0 });
  const cancel = h("button", { id: "message-cancel", class: "danger", type: "button", hidden: true }, "Cancel this message");
  const deliveries = h("div", { id: "message-deliveries-box" });
  root.append(h("p", {}, h("a", { href: "#/messages" }, "← Messages")), h("h1", {}, "Message ", h("span", { class: "mono" }, id)),
    error, h("section", { class: "card" }, facts, progress, h("p", {}, cancel)),
    h("h2", {}, "Recipients not delivered (delivery log)"), deliveries);
  let stop;
  let finalSeen = false;

  cancel.addEventListener("click", async () => {
    cancel.disabled = true;
    try {
      await call("pushgate.v1.Push/CancelMessage", { messageId: id });
      showError(error, null);
    } catch (e) {
      showError(error, e);
    }
    cancel.disabled = false;
    refresh();
  });

  async function refresh() {
    let message;
    try {
      message = await call("pushgate.v1.Push/GetMessage", { messageId: id });
      showError(error, null);
    } catch (e) {
      showError(error, e);
      return;
    }
    const state = message.state ?? "MESSAGE_STATE_UNSPECIFIED";
    const done = num(message.delivered) + num(message.rejected) + num(message.failed) + num(message.skipped) + num(message.cancelled);
    const field = (label, value, fieldId) => [h("dt", {}, label), h("dd", { id: fieldId }, value)];
    facts.replaceChildren(
      ...field("State", enumLabel(state, "MESSAGE_STATE_"), "message-state"),
      ...field("Target", target(message), "message-target"),
      ...field("Published", time(message.publishedAt), "message-published"),
      ...(num(message.deliverAt) ? field("Scheduled for", time(message.deliverAt), "message-deliver-at") : []),
      ...(num(message.maxPerSecond) ? field("Rate cap", `${message.maxPerSecond}/s`, "message-rate") : []),
      ...field("Total", count(message.total), "message-total"),
      ...field("Delivered", count(message.delivered), "message-delivered"),
      ...field("Rejected", count(message.rejected), "message-rejected"),
      ...field("Failed", count(message.failed), "message-failed"),
      ...field("Skipped", count(message.skipped), "message-skipped"),
      ...field("Cancelled", count(message.cancelled), "message-cancelled"),
      ...field("Waiting for a provider", count(message.waitingForProvider), "message-waiting"));
    progress.max = Math.max(1, num(message.total));
    progress.value = done;
    facts.dataset.state = state;
    cancel.hidden = FINAL.has(state);
    await loadDeliveries();
    if (FINAL.has(state)) {
      if (finalSeen) stop?.();
      finalSeen = true;
    }
  }

  // The rejected and the failed, each asked for by status (the log may also hold sampled successes),
  // newest first, up to LOG_ROWS of each.
  async function loadDeliveries() {
    try {
      const pages = await Promise.all(["STATUS_REJECTED", "STATUS_FAILED"].map((status) =>
        call("pushgate.v1.Push/ListDeliveries", { messageId: id, status, pageSize: LOG_ROWS })));
      const rows = pages.flatMap((p) => p.deliveries ?? []).sort((a, b) => num(b.time) - num(a.time));
      const more = pages.some((p) => p.nextPageToken);
      deliveries.replaceChildren(...(rows.length === 0 ? [h("p", { class: "hint", id: "message-no-deliveries" }, "None so far.")] :
        [more ? h("p", { class: "hint", id: "message-deliveries-more" },
          `The newest ${LOG_ROWS} rejected and ${LOG_ROWS} failed are shown; ListDeliveries pages through the rest.`) : null,
        table("message-deliveries", ["Endpoint", "App", "Token", "Status", "Reason", "When"], rows.map((d) => {
          const status = enumLabel(d.status, "STATUS_");
          return h("tr", { dataset: { endpoint: d.endpointId } }, h("td", { class: "mono" }, d.endpointId),
            h("td", {}, d.app), h("td", { class: "mono token" }, d.token),
            h("td", { class: `status-${status}` }, status), h("td", { class: "reason" }, d.reason ?? ""),
            h("td", {}, time(d.time)));
        }))].filter(Boolean)));
    } catch (e) {
      deliveries.replaceChildren(h("p", { class: "error" }, `${e.code}: ${e.message}`));
    }
  }

  stop = poll(1000, refresh);
  return () => stop();
}
