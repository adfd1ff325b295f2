// The console's shell: signing in with an API key (kept in this tab's session storage), the
// navigation, and one page mounted at a time (each returns a function that stops its timers).
import { call, forgetKey, storedKey, storeKey } from "./api.js";
import { h, showError } from "./dom.js";
import * as endpoints from "./endpoints.js";
import * as events from "./events.js";
import * as messages from "./messages.js";
import * as overview from "./overview.js";
import * as send from "./send.js";

const PAGES = { overview, send, messages, endpoints, events };
const page = document.getElementById("page");
const nav = document.getElementById("nav");
const whoami = document.getElementById("whoami");
const logout = document.getElementById("logout");
const context = { stats: null };
let unmount = () => {};

/** A key that stopped working (removed by a reload) sends the operator back to sign in. */
window.addEventListener("pushgate:unauthenticated", (event) => {
  if (!context.stats) return;
  forgetKey();
  context.stats = null;
  showLogin(event.detail);
});

function showLogin(problem) {
  unmount();
  unmount = () => {};
  nav.hidden = true;
  logout.hidden = true;
  whoami.textContent = "";
  const key = h("input", { id: "api-key", type: "password", autocomplete: "off", spellcheck: "false" });
  const error = h("p", { id: "login-error", class: "error" });
  const form = h("form", { id: "login-form", class: "card" },
    h("label", {}, "API key", key), h("button", { id: "login-button", type: "submit" }, "Sign in"),
    h("p", { class: "hint" }, "Kept in this browser tab only (session storage) and sent as Authorization: Bearer. ",
      "On a gateway without api_keys, leave it empty (loopback clients only)."), error);
  page.replaceChildren(h("section", { id: "login" }, h("h1", {}, "Sign in"), form));
  if (problem) showError(error, problem);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    storeKey(key.value.trim());
    await signIn();
  });
  key.focus();
}

async function signIn() {
  overview.forgetHistory();
  try {
    context.stats = await call("pushgate.v1.Push/GetStats", {});
  } catch (error) {
    forgetKey();
    return showLogin(error);
  }
  nav.hidden = false;
  logout.hidden = false;
  whoami.textContent = `${context.stats.keyName}${context.stats.admin ? " (admin)" : ""}`;
  whoami.dataset.admin = String(Boolean(context.stats.admin));
  route();
}

function route() {
  if (!context.stats) return;
  const [name, ...rest] = location.hash.replace(/^#\/?/, "").split("/");
  const current = Object.hasOwn(PAGES, name) ? name : "overview";
  for (const link of nav.querySelectorAll("a")) link.classList.toggle("active", link.dataset.page === current);
  unmount();
  page.replaceChildren();
  const section = h("section", { id: `page-${current}`, class: "page" });
  page.append(section);
  unmount = PAGES[current].mount(section, context, rest) ?? (() => {});
}

window.addEventListener("hashchange", route);
logout.addEventListener("click", () => {
  overview.forgetHistory();
  forgetKey();
  context.stats = null;
  showLogin(null);
});

if (storedKey() === null) showLogin(null);
else signIn();
