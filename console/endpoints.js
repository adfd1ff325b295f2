// Endpoints and topics: find an endpoint by token (in an app), id or user id; see and toggle
// `enabled` (admin keys), its subscriptions and recent deliveries; the topics with their counts.
import { call } from "./api.js";
import { count, enumLabel, h, showError, table, time } from "./dom.js";

export function mount(root, context) {
  const admin = Boolean(context.stats.admin);
  const kind = h("select", { id: "endpoint-search-kind" },
    h("option", { value: "token" }, "Token"), h("option", { value: "id" }, "Endpoint id"),
    h("option", { value: "user" }, "User id"));
  const app = h("select", { id: "endpoint-search-app" },
    (context.stats.apps ?? []).map((a) => h("option", { value: a.app }, a.app)));
  const appLabel = h("label", { id: "endpoint-search-app-label" }, "App", app);
  const query = h("input", { id: "endpoint-search", spellcheck: "false", placeholder: "what to look for" });
  const form = h("form", { id: "endpoint-find", class: "card" },
    h("div", { class: "row" }, h("label", {}, "Find by", kind), appLabel, h("label", {}, "Value", query),
      h("button", { type: "submit", id: "endpoint-find-button" }, "Find")));
  const error = h("p", { id: "endpoints-error", class: "error" });
  const results = h("div", { id: "endpoints-box" });
  const detailBox = h("div", { id: "endpoint-detail-box" });
  const topicsError = h("p", { id: "topics-error", class: "error" });
  const topics = h("div", { id: "topics-box" });
  root.append(h("h1", {}, "Endpoints and topics"), form, error, results, detailBox,
    h("h2", {}, "Topics"), topicsError, topics);
  kind.addEventListener("change", () => { appLabel.hidden = kind.value !== "token"; });

  let shown = [];

  function render() {
    results.replaceChildren(shown.length === 0 ? h("p", { class: "hint", id: "endpoints-none" }, "No endpoint found.") :
      table("endpoints-table", ["Endpoint", "App", "Token", "User", "Enabled", "Disabled because", "Created", ""],
        shown.map((e) => {
          const enabled = Boolean(e.enabled);
          const toggle = admin ? h("button", {
            class: "secondary toggle-enabled", type: "button",
            onclick: (event) => { event.stopPropagation(); setEnabled(e, !enabled); },
          }, enabled ? "Disable" : "Enable") : null;
          return h("tr", { class: "clickable", dataset: { endpoint: e.id, enabled: String(enabled) }, onclick: () => open(e) },
            h("td", { class: "mono id" }, e.id), h("td", { class: "app" }, e.app), h("td", { class: "mono token" }, e.token),
            h("td", { class: "user" }, e.userId ?? ""), h("td", { class: `enabled enabled-${enabled}` }, enabled ? "yes" : "no"),
            h("td", { class: "reason" }, e.disabledReason ?? ""), h("td", {}, time(e.createdAt)), h("td", {}, toggle));
        })));
  }

  async function setEnabled(endpoint, enabled) {
    try {
      const updated = await call("pushgate.v1.Registry/UpdateEndpoint", { id: endpoint.id, enabled });
      shown = shown.map((e) => (e.id === updated.id ? updated : e));
      showError(error, null);
      render();
    } catch (e) {
      showError(error, e);
    }
  }

  async function open(endpoint) {
    const subscriptions = h("div", { id: "endpoint-subscriptions" }, "…");
    const deliveries = h("div", { id: "endpoint-deliveries" }, "…");
    detailBox.replaceChildren(h("section", { class: "card", id: "endpoint-detail", dataset: { endpoint: endpoint.id } },
      h("h2", {}, "Endpoint ", h("span", { class: "mono" }, endpoint.id)),
      h("dl", { class: "facts" }, h("dt", {}, "Token"), h("dd", { class: "mono" }, endpoint.token),
        h("dt", {}, "Custom user data"), h("dd", { class: "mono" }, endpoint.customUserData ?? "")),
      h("h2", {}, "Subscriptions"), subscriptions, h("h2", {}, "Recent deliveries (delivery log)"), deliveries));
    try {
      const reply = await call("pushgate.v1.Registry/ListSubscriptions", { endpointId: endpoint.id, pageSize: 100 });
      const rows = reply.subscriptions ?? [];
      subscriptions.replaceChildren(rows.length === 0 ? h("p", { class: "hint" }, "None.") :
        table("endpoint-subscriptions-table", ["Topic", "Subscription", "Filter policy"], rows.map((s) =>
          h("tr", {}, h("td", {}, s.topic), h("td", { class: "mono" }, s.id), h("td", { class: "mono" }, s.filterPolicyJson ?? "")))));
    } catch (e) {
      subscriptions.replaceChildren(h("p", { class: "error" }, `${e.code}: ${e.message}`));
    }
    try {
      const reply = await call("pushgate.v1.Push/ListDeliveries", { endpointId: endpoint.id, pageSize: 20 });
      const rows = reply.deliveries ?? [];
      deliveries.replaceChildren(rows.length === 0 ? h("p", { class: "hint" }, "None logged.") :
        table("endpoint-deliveries-table", ["Message", "Status", "Reason", "When"], rows.map((d) => {
          const status = enumLabel(d.status, "STATUS_");
          return h("tr", {}, h("td", {}, h("a", { href: `#/messages/${encodeURIComponent(d.messageId)}`, class: "mono" }, d.messageId)),
            h("td", { class: `status-${status}` }, status), h("td", {}, d.reason ?? ""), h("td", {}, time(d.time)));
        })));
    } catch (e) {
      deliveries.replaceChildren(h("p", { class: "error" }, `${e.code}: ${e.message}`));
    }
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const value = query.value.trim();
    detailBox.replaceChildren();
    if (!value) return;
    try {
      if (kind.value === "id") {
        shown = [await call("pushgate.v1.Registry/GetEndpoint", { id: value })];
      } else {
        const request = kind.value === "token" ? { app: app.value, token: value, pageSize: 10 } : { userId: value, pageSize: 100 };
        shown = (await call("pushgate.v1.Registry/ListEndpoints", request)).endpoints ?? [];
      }
      showError(error, null);
    } catch (e) {
      shown = [];
      showError(error, e);
    }
    render();
  });

  call("pushgate.v1.Registry/ListTopics", { pageSize: 200, subscriberCounts: true }).then((reply) => {
    const rows = reply.topics ?? [];
    topics.replaceChildren(rows.length === 0 ? h("p", { class: "hint" }, "No topics.") :
      table("topics-table", ["Topic", { label: "Subscribers", num: true }], rows.map((t) =>
        h("tr", { dataset: { topic: t.name } }, h("td", { class: "name" }, t.name),
          h("td", { class: "num subscribers" }, count(t.subscribers))))));
  }, (e) => showError(topicsError, e));
  return () => {};
}
