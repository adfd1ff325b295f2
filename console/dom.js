// Building the page: every value goes in as a text node or an attribute value, never as markup,
// since tokens, reasons and custom data are whatever a client sent.

export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "class") element.className = value;
    else if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    else if (name === "dataset") Object.assign(element.dataset, value);
    else if (name === "value") element.value = value;
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  add(element, children);
  return element;
}

function add(element, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function svg(tag, attributes = {}, ...children) {
  const element = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value !== undefined && value !== null) element.setAttribute(name, String(value));
  }
  add(element, children);
  return element;
}

/** An API error as the API said it. */
export function errorText(error) {
  return error && error.code ? `${error.code}: ${error.message}` : String(error);
}

export function showError(element, error) {
  element.textContent = error ? errorText(error) : "";
}

const numberFormat = new Intl.NumberFormat("en-US");

export function count(value) {
  return numberFormat.format(Number(value ?? 0));
}

export function time(ms) {
  const value = Number(ms ?? 0);
  return value > 0 ? new Date(value).toLocaleString() : "-";
}

/** MESSAGE_STATE_FANNING_OUT → "fanning out", STATUS_REJECTED → "rejected". */
export function enumLabel(value, prefix) {
  if (!value) return "-";
  return String(value).replace(prefix, "").toLowerCase().replaceAll("_", " ");
}

/** A table with a header row; `rows` are <tr> elements. */
export function table(id, columns, rows) {
  return h("table", { id },
    h("thead", {}, h("tr", {}, columns.map((c) => h("th", { class: c.num ? "num" : undefined }, c.label ?? c)))),
    h("tbody", {}, rows));
}
