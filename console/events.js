// Live events: WatchEvents (Connect server streaming) as a scrolling list, newest first.
import { stream } from "./api.js";
import { enumLabel, h, showError } from "./dom.js";

const KEEP = 500;
const KINDS = ["delivered", "rejected", "failed", "endpoint disabled", "events dropped", "message cancelled"];

export function mount(root, context) {
  const apps = context.stats.apps ?? [];
  const appFilter = h("select", { id: "events-filter-app" }, h("option", { value: "" }, "All my apps"),
    apps.map((a) => h("option", { value: a.app }, a.app)));
  const kindFilter = h("select", { id: "events-filter-kind" }, h("option", { value: "" }, "Every kind"),
    KINDS.map((k) => h("option", { value: k }, k)));
  const sample = h("input", { id: "events-sample", type: "number", min: 0, value: "1" });
  const start = h("button", { id: "events-start", type: "button" }, "Watch");
  const stop = h("button", { id: "events-stop", type: "button", class: "secondary", disabled: true }, "Stop");
  const status = h("p", { id: "events-status", class: "hint" }, "Not watching.");
  const error = h("p", { id: "events-error", class: "error" });
  const list = h("ul", { id: "events-list", class: "events" });
  root.append(h("h1", {}, "Live events"),
    h("div", { class: "card row" }, h("label", {}, "App", appFilter), h("label", {}, "Kind", kindFilter),
      h("label", {}, "Successes: one in every (0: none)", sample), start, stop),
    status, error, list);

  let close = null;
  let received = 0;

  function visible(item) {
    return !kindFilter.value || item.dataset.kind === kindFilter.value;
  }

  kindFilter.addEventListener("change", () => {
    for (const item of list.children) item.hidden = !visible(item);
  });

  function add(event) {
    received += 1;
    const kind = enumLabel(event.kind, "KIND_");
    const when = event.time ? new Date(Number(event.time)).toLocaleTimeString() : "";
    const detail = [event.token, event.reason, event.httpStatus ? `HTTP ${event.httpStatus}` : "",
      event.messageId ? `message ${event.messageId}` : "", event.endpointId ? `endpoint ${event.endpointId}` : "",
      event.dropped ? `${event.dropped} dropped` : "", event.cancelled ? `${event.cancelled} cancelled` : ""]
      .filter(Boolean).join(" · ");
    const item = h("li", { class: "event", dataset: { kind, app: event.app ?? "" } },
      h("span", { class: "when" }, when), h("span", { class: `kind status-${kind.split(" ")[0]}` }, kind),
      h("span", { class: "app" }, event.app ?? ""), h("span", { class: "mono detail" }, detail));
    item.hidden = !visible(item);
    list.prepend(item);
    while (list.children.length > KEEP) list.lastElementChild.remove();
    status.textContent = `Watching: ${received} event(s) received.`;
  }

  function watch() {
    // A key limited to some apps must name them (an empty list means every app).
    const mine = context.stats.keyApps?.includes("*") ? [] : apps.map((a) => a.app);
    const request = { apps: appFilter.value ? [appFilter.value] : mine, deliveredSampleEvery: Number(sample.value) || 0 };
    showError(error, null);
    received = 0;
    start.disabled = true;
    stop.disabled = false;
    status.textContent = "Watching: 0 event(s) received.";
    close = stream("pushgate.v1.Push/WatchEvents", request, add, (e) => {
      start.disabled = false;
      stop.disabled = true;
      close = null;
      status.textContent = `Stopped after ${received} event(s).`;
      if (e) showError(error, e);
    });
  }

  start.addEventListener("click", watch);
  stop.addEventListener("click", () => close?.());
  return () => close?.();
}
