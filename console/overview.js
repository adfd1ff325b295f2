// Overview: the apps the key may use, their provider connections, and results per second by status
// with the top failure reasons over the last minutes, from GetStats every few seconds.
import { call, num } from "./api.js";
import { drawLines } from "./chart.js";
import { count, enumLabel, h, showError, svg, table } from "./dom.js";

const REFRESH_MS = 2000;
const WINDOW_MS = 5 * 60_000;
const STATUSES = ["delivered", "rejected", "failed"];

/** Samples survive page changes, so the chart keeps its history while the operator looks elsewhere. */
const samples = [];

function totals(stats) {
  const byStatus = { delivered: 0, rejected: 0, failed: 0 };
  const reasons = new Map();
  for (const app of stats.apps ?? []) {
    for (const outcome of app.outcomes ?? []) {
      const status = enumLabel(outcome.status, "STATUS_");
      const value = num(outcome.count);
      if (status in byStatus) byStatus[status] += value;
      if (status !== "delivered") {
        const key = `${app.app}\u0000${status}\u0000${outcome.reason ?? ""}`;
        reasons.set(key, (reasons.get(key) ?? 0) + value);
      }
    }
  }
  return { time: num(stats.time), startedAt: num(stats.startedAt), byStatus, reasons };
}

function record(stats) {
  const sample = totals(stats);
  const last = samples[samples.length - 1];
  // A restarted gateway starts its counts again: the history before it no longer subtracts.
  if (last && last.startedAt !== sample.startedAt) samples.length = 0;
  samples.push(sample);
  while (samples.length > 2 && sample.time - samples[0].time > WINDOW_MS) samples.shift();
}

function rates() {
  const series = STATUSES.map((name) => ({ name, points: [] }));
  for (let i = 1; i < samples.length; i++) {
    const [a, b] = [samples[i - 1], samples[i]];
    const seconds = (b.time - a.time) / 1000;
    if (seconds <= 0) continue;
    STATUSES.forEach((status, k) => {
      series[k].points.push([b.time, Math.max(0, b.byStatus[status] - a.byStatus[status]) / seconds]);
    });
  }
  return series;
}

function topReasons(limit = 8) {
  if (samples.length === 0) return [];
  const [first, last] = [samples[0], samples[samples.length - 1]];
  const rows = [];
  for (const [key, value] of last.reasons) {
    const delta = value - (first.reasons.get(key) ?? 0);
    if (delta > 0 || samples.length === 1) {
      const [app, status, reason] = key.split("\u0000");
      if (value > 0) rows.push({ app, status, reason, count: samples.length === 1 ? value : delta });
    }
  }
  return rows.sort((a, b) => b.count - a.count).slice(0, limit);
}

function connectionState(app) {
  const open = num(app.connectionsOpen);
  if (open > 0) return "connected";
  return num(app.queueDepth) > 0 ? "connecting" : "idle (connects on first send)";
}

export function mount(root, context) {
  const chart = svg("svg", { id: "throughput-chart", class: "chart", role: "img", "aria-label": "results per second" });
  const tiles = h("div", { class: "tiles", id: "overview-tiles" });
  const appsBox = h("div", { id: "apps-box" });
  const reasonsBox = h("div", { id: "reasons-box" });
  const error = h("p", { id: "overview-error", class: "error" });
  root.append(
    h("h1", {}, "Overview"), error, tiles,
    h("h2", {}, "Results per second (this instance, last 5 minutes)"), chart,
    h("div", { class: "legend" }, STATUSES.map((s) => h("span", { class: s }, s))),
    h("h2", {}, "Apps and their provider connections"), appsBox,
    h("h2", {}, "Top failure reasons (last 5 minutes)"), reasonsBox);

  let applications = new Map();
  call("pushgate.v1.Registry/ListApplications", { pageSize: 1000 }).then((reply) => {
    applications = new Map((reply.applications ?? []).map((a) => [a.name, a]));
  }, (e) => showError(error, e));

  async function refresh() {
    let stats;
    try {
      stats = await call("pushgate.v1.Push/GetStats", {});
    } catch (e) {
      return showError(error, e);
    }
    showError(error, null);
    record(stats);
    const last = samples[samples.length - 1];
    tiles.replaceChildren(
      tile("Delivered", count(last.byStatus.delivered)), tile("Rejected", count(last.byStatus.rejected)),
      tile("Failed", count(last.byStatus.failed)), tile("Fan-outs running", count(stats.fanoutsRunning)),
      tile("Gateway memory", `${(num(stats.residentMemoryBytes) / 1048576).toFixed(1)} MiB`),
      tile("Up since", new Date(num(stats.startedAt)).toLocaleTimeString()));
    drawLines(chart, rates());
    const apps = stats.apps ?? [];
    appsBox.replaceChildren(table("apps-table",
      ["App", "Platform", "Topic / bundle", "Connections", "State", { label: "In flight", num: true },
        { label: "Queued", num: true }, { label: "Delivered", num: true }, { label: "Rejected", num: true },
        { label: "Failed", num: true }],
      apps.map((app) => {
        const byStatus = { delivered: 0, rejected: 0, failed: 0 };
        for (const o of app.outcomes ?? []) byStatus[enumLabel(o.status, "STATUS_")] += num(o.count);
        return h("tr", { dataset: { app: app.app } },
          h("td", { class: "name" }, app.app), h("td", { class: "platform" }, app.platform),
          h("td", { class: "mono" }, applications.get(app.app)?.bundleId ?? ""),
          h("td", { class: "connections" }, `${num(app.connectionsOpen)} of ${num(app.connectionsConfigured)}`),
          h("td", { class: "state" }, connectionState(app)),
          h("td", { class: "num in-flight" }, count(app.streamsInFlight)),
          h("td", { class: "num queue" }, count(app.queueDepth)),
          h("td", { class: "num delivered" }, count(byStatus.delivered)),
          h("td", { class: "num rejected" }, count(byStatus.rejected)),
          h("td", { class: "num failed" }, count(byStatus.failed)));
      })));
    const reasons = topReasons();
    reasonsBox.replaceChildren(reasons.length === 0 ? h("p", { class: "hint", id: "no-reasons" }, "None.") :
      table("top-reasons", ["App", "Status", "Reason", { label: "Results", num: true }], reasons.map((r) =>
        h("tr", {}, h("td", {}, r.app), h("td", { class: `status-${r.status}` }, r.status),
          h("td", { class: "reason" }, r.reason || "-"), h("td", { class: "num" }, count(r.count))))));
    context.onStats?.(stats);
  }

  refresh();
  const timer = setInterval(refresh, REFRESH_MS);
  return () => clearInterval(timer);
}

function tile(label, value) {
  return h("div", { class: "tile" }, h("div", { class: "label" }, label), h("div", { class: "value" }, value));
}
