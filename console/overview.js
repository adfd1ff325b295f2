// Overview: the apps the key may use, their provider connections, and results per second by status
// with the top failure reasons over the last minutes, from GetStats every few seconds.
import { call, num, poll } from "./api.js";
import { drawLines } from "./chart.js";
import { count, enumLabel, h, showError, svg, table } from "./dom.js";

const REFRESH_MS = 2000;
const WINDOW_MS = 5 * 60_000;
const STATUSES = ["delivered", "rejected", "failed"];

/**
 * Samples per instance (GetStats' `instance`: behind a load balancer each refresh may come from
 * another one, and each counts from its own start). They survive page changes, so the chart keeps
 * its history while the operator looks elsewhere; signing in or out starts them again.
 */
const history = new Map();

export function forgetHistory() {
  history.clear();
}

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
  const refusals = new Map((stats.apps ?? []).map((a) => [a.app, num(a.handshakeRefusals)]));
  return { time: num(stats.time), startedAt: num(stats.startedAt), byStatus, reasons, refusals };
}

/** Records a sample of the answering instance; its history (oldest first). */
function record(stats) {
  const sample = totals(stats);
  const key = stats.instance ?? "";
  let samples = history.get(key);
  // A restarted instance has a new id; the same id with another start would be a clock jump.
  if (!samples || (samples.length && samples[samples.length - 1].startedAt !== sample.startedAt)) {
    samples = [];
    history.set(key, samples);
  }
  samples.push(sample);
  while (samples.length > 2 && sample.time - samples[0].time > WINDOW_MS) samples.shift();
  return samples;
}

function rates(samples) {
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

/** The failure reasons counted between the window's first sample and its last. */
function topReasons(samples, limit = 8) {
  if (samples.length < 2) return [];
  const [first, last] = [samples[0], samples[samples.length - 1]];
  const rows = [];
  for (const [key, value] of last.reasons) {
    const delta = value - (first.reasons.get(key) ?? 0);
    if (delta > 0) {
      const [app, status, reason] = key.split("\u0000");
      rows.push({ app, status, reason, count: delta });
    }
  }
  return rows.sort((a, b) => b.count - a.count).slice(0, limit);
}

/** What the counts say of an app's provider connections; refusals are those within the window. */
function connectionState(app, samples) {
  const first = samples[0]?.refusals.get(app.app) ?? 0;
  const refused = num(app.handshakeRefusals) - first;
  const open = num(app.connectionsOpen);
  if (refused > 0 && open === 0) return `refused: ${refused} TLS handshake(s) failed (see the gateway's log)`;
  if (open > 0) return refused > 0 ? `connected (${refused} handshake(s) refused lately)` : "connected";
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
    const samples = record(stats);
    const last = samples[samples.length - 1];
    tiles.replaceChildren(
      tile("Delivered", count(last.byStatus.delivered)), tile("Rejected", count(last.byStatus.rejected)),
      tile("Failed", count(last.byStatus.failed)), tile("Fan-outs running", count(stats.fanoutsRunning)),
      tile("Gateway memory", `${(num(stats.residentMemoryBytes) / 1048576).toFixed(1)} MiB`),
      tile("Up since", new Date(num(stats.startedAt)).toLocaleTimeString()));
    drawLines(chart, rates(samples), { end: last.time });
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
          h("td", { class: "connections" }, app.platform === "webpush"
            ? `${num(app.connectionsOpen)} (up to ${num(app.connectionsConfigured)} per push service)`
            : `${num(app.connectionsOpen)} of ${num(app.connectionsConfigured)}`),
          h("td", { class: "state" }, connectionState(app, samples)),
          h("td", { class: "num in-flight" }, count(app.streamsInFlight)),
          h("td", { class: "num queue" }, count(app.queueDepth)),
          h("td", { class: "num delivered" }, count(byStatus.delivered)),
          h("td", { class: "num rejected" }, count(byStatus.rejected)),
          h("td", { class: "num failed" }, count(byStatus.failed)));
      })));
    const reasons = topReasons(samples);
    reasonsBox.replaceChildren(reasons.length === 0 ? h("p", { class: "hint", id: "no-reasons" },
      samples.length < 2 ? "Counting from now…" : "None.") :
      table("top-reasons", ["App", "Status", "Reason", { label: "Results", num: true }], reasons.map((r) =>
        h("tr", {}, h("td", {}, r.app), h("td", { class: `status-${r.status}` }, r.status),
          h("td", { class: "reason" }, r.reason || "-"), h("td", { class: "num" }, count(r.count))))));
    context.onStats?.(stats);
  }

  return poll(REFRESH_MS, refresh);
}

function tile(label, value) {
  return h("div", { class: "tile" }, h("div", { class: "label" }, label), h("div", { class: "value" }, value));
}
