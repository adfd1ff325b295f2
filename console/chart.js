// A line chart drawn as SVG: one polyline per series over a shared time axis.
import { svg } from "./dom.js";

const WIDTH = 800;
const HEIGHT = 220;
const PAD = { left: 56, right: 12, top: 12, bottom: 24 };

/**
 * Redraws `element` (an <svg>) with `series`: [{ name, points: [[timeMs, value], ...] }]. The
 * number of points drawn and the latest values are left on data attributes for tests and tools.
 */
export function drawLines(element, series, { unit = "/s", end: now } = {}) {
  element.setAttribute("viewBox", `0 0 ${WIDTH} ${HEIGHT}`);
  element.setAttribute("preserveAspectRatio", "none");
  const all = series.flatMap((s) => s.points);
  const times = all.map((p) => p[0]);
  // The window ends at the server's time of the last sample (the browser's clock may differ).
  const start = Math.min(...times, (now ?? Math.max(...times, 0)) - 60_000);
  const end = Math.max(...times, start + 1);
  const top = niceCeiling(Math.max(1, ...all.map((p) => p[1])));
  const x = (t) => PAD.left + ((t - start) / (end - start)) * (WIDTH - PAD.left - PAD.right);
  const y = (v) => HEIGHT - PAD.bottom - (v / top) * (HEIGHT - PAD.top - PAD.bottom);
  const parts = [];
  for (let i = 0; i <= 4; i++) {
    const value = (top * i) / 4;
    parts.push(svg("line", { class: "grid", x1: PAD.left, x2: WIDTH - PAD.right, y1: y(value), y2: y(value) }));
    parts.push(svg("text", { class: "axis", x: PAD.left - 6, y: y(value) + 4, "text-anchor": "end" },
      `${compact(value)}${i === 4 ? unit : ""}`));
  }
  parts.push(svg("text", { class: "axis", x: PAD.left, y: HEIGHT - 6 }, clock(start)));
  parts.push(svg("text", { class: "axis", x: WIDTH - PAD.right, y: HEIGHT - 6, "text-anchor": "end" }, clock(end)));
  for (const s of series) {
    if (s.points.length === 0) continue;
    const d = s.points.map((p, i) => `${i ? "L" : "M"}${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join(" ");
    parts.push(svg("path", { class: `series series-${s.name}`, d, "data-series": s.name }));
  }
  element.replaceChildren(...parts);
  element.dataset.points = String(Math.max(0, ...series.map((s) => s.points.length)));
  for (const s of series) {
    const last = s.points[s.points.length - 1];
    element.dataset[`last${s.name[0].toUpperCase()}${s.name.slice(1)}`] = last ? last[1].toFixed(1) : "0";
  }
}

function niceCeiling(value) {
  const magnitude = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 2.5, 5, 10]) {
    if (step * magnitude >= value) return step * magnitude;
  }
  return 10 * magnitude;
}

function compact(value) {
  if (value >= 1e6) return `${(value / 1e6).toFixed(value % 1e6 ? 1 : 0)}M`;
  if (value >= 1e3) return `${(value / 1e3).toFixed(value % 1e3 ? 1 : 0)}k`;
  return `${Math.round(value * 100) / 100}`;
}

function clock(ms) {
  return new Date(ms).toLocaleTimeString();
}
