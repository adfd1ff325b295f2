// Send a test: one notification to a few tokens of an app; each token is its own Send (a few at a
// time), so each result shows as soon as its provider answers.
import { call } from "./api.js";
import { enumLabel, h, showError, table } from "./dom.js";

export function mount(root, context) {
  const apps = context.stats.apps ?? [];
  const app = h("select", { id: "send-app" }, apps.map((a) => h("option", { value: a.app }, `${a.app} (${a.platform})`)));
  const tokens = h("textarea", { id: "send-tokens", rows: 3, spellcheck: "false",
    placeholder: "one device token a line (Web Push: the subscription JSON, one a line)" });
  const title = h("input", { id: "send-title", value: "Hello from Pushgate" });
  const body = h("input", { id: "send-body", value: "A test push from the console" });
  const raw = h("textarea", { id: "send-raw", rows: 4, spellcheck: "false",
    placeholder: "optional: the whole platform payload as JSON, sent as is (title and body are then ignored)" });
  const button = h("button", { id: "send-button", type: "submit" }, "Send");
  const error = h("p", { id: "send-error", class: "error" });
  const results = h("div", { id: "send-results-box" });
  const form = h("form", { id: "send-form", class: "card" },
    h("label", {}, "App", app), h("label", {}, "Tokens", tokens),
    h("div", { class: "row" }, h("label", {}, "Title", title), h("label", {}, "Body", body)),
    h("label", {}, "Raw payload (JSON)", raw), button, error);
  root.append(h("h1", {}, "Send a test"), form, results);
  if (apps.length === 0) showError(error, { code: "permission_denied", message: "this key may send for no app" });

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const list = tokens.value.split("\n").map((t) => t.trim()).filter(Boolean);
    const notification = { app: app.value, tokens: list };
    if (raw.value.trim()) notification.payloadJson = raw.value.trim();
    else notification.alert = { title: title.value, body: body.value };
    showError(error, null);
    if (list.length === 0) return showError(error, { code: "invalid_argument", message: "tokens: at least one token" });
    button.disabled = true;
    const rows = list.map((token) => h("tr", { class: "result pending", dataset: { status: "pending" } },
      h("td", { class: "mono token" }, token), h("td", { class: "status" }, "sending…"), h("td", { class: "http" }),
      h("td", { class: "reason" }), h("td", { class: "mono provider-id" }), h("td", { class: "attempts" })));
    results.replaceChildren(table("send-results", ["Token", "Status", "HTTP", "Reason", "Provider id", "Attempts"], rows));
    let next = 0;
    const worker = async () => {
      while (next < list.length) {
        const index = next++;
        const row = rows[index];
        try {
          const reply = await call("pushgate.v1.Push/Send", { notifications: [{ ...notification, tokens: [list[index]] }] });
          const r = reply.results?.[0] ?? {};
          const status = enumLabel(r.status, "STATUS_");
          row.replaceChildren(h("td", { class: "mono token" }, r.token ?? list[index]),
            h("td", { class: `status status-${status}` }, status), h("td", { class: "http" }, r.httpStatus ?? ""),
            h("td", { class: "reason" }, r.reason ?? ""), h("td", { class: "mono provider-id" }, r.id ?? ""),
            h("td", { class: "attempts" }, r.attempts ?? 0));
          row.className = "result";
          row.dataset.status = status;
        } catch (e) {
          row.className = "result";
          row.dataset.status = "error";
          row.children[1].textContent = "not sent";
          row.children[3].textContent = `${e.code}: ${e.message}`;
          showError(error, e);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(4, list.length) }, worker));
    button.disabled = false;
  });
  return () => {};
}
