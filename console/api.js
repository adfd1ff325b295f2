// The gateway's Connect API (docs/api.md) as the console calls it: unary calls as JSON POSTs, and
// server streaming (WatchEvents) as Connect's enveloped JSON read from a fetch body. The key stays in
// this tab's session storage and goes only in the Authorization header of same-origin requests.

const KEY_ITEM = "pushgate.console.key";

export function storedKey() {
  return sessionStorage.getItem(KEY_ITEM);
}

export function storeKey(key) {
  sessionStorage.setItem(KEY_ITEM, key);
}

export function forgetKey() {
  sessionStorage.removeItem(KEY_ITEM);
}

/** An answer that is not a success: the Connect error code (`permission_denied`, ...) and message. */
export class APIError extends Error {
  constructor(code, message, httpStatus) {
    super(message);
    this.code = code;
    this.httpStatus = httpStatus;
  }

  toString() {
    return `${this.code}: ${this.message}`;
  }
}

function headers(contentType) {
  const result = { "content-type": contentType, "connect-protocol-version": "1" };
  const key = storedKey();
  if (key) result.authorization = `Bearer ${key}`;
  return result;
}

/** Calls `service/Method` (e.g. "pushgate.v1.Registry/ListApplications") with a JSON body. */
export async function call(path, body = {}) {
  let response;
  try {
    response = await fetch(`/${path}`, {
      method: "POST", headers: headers("application/json"), body: JSON.stringify(body),
      credentials: "omit", cache: "no-store",
    });
  } catch (error) {
    throw new APIError("unavailable", `the gateway did not answer (${error.message})`, 0);
  }
  const text = await response.text();
  let json;
  try {
    json = text ? JSON.parse(text) : {};
  } catch {
    json = undefined;
  }
  if (!response.ok) {
    const error = new APIError(json?.code ?? `http_${response.status}`, json?.message ?? (text || response.statusText),
      response.status);
    if (error.code === "unauthenticated") window.dispatchEvent(new CustomEvent("pushgate:unauthenticated", { detail: error }));
    throw error;
  }
  if (json === undefined) throw new APIError("internal", "the answer was not JSON", response.status);
  return json;
}

function envelope(object) {
  const payload = new TextEncoder().encode(JSON.stringify(object));
  const framed = new Uint8Array(5 + payload.length);
  new DataView(framed.buffer).setUint32(1, payload.length);
  framed.set(payload, 5);
  return framed;
}

/**
 * Opens a server-streaming call: `onMessage(object)` per message, `onEnd(error | null)` once.
 * Returns a function that stops it.
 */
export function stream(path, body, onMessage, onEnd) {
  const controller = new AbortController();
  let ended = false;
  const end = (error) => {
    if (!ended) {
      ended = true;
      onEnd(error);
    }
  };
  (async () => {
    const response = await fetch(`/${path}`, {
      method: "POST", headers: headers("application/connect+json"), body: envelope(body),
      credentials: "omit", cache: "no-store", signal: controller.signal,
    });
    if (!response.ok) {
      const text = await response.text();
      let json;
      try { json = JSON.parse(text); } catch { json = undefined; }
      return end(new APIError(json?.code ?? `http_${response.status}`, json?.message ?? text, response.status));
    }
    const reader = response.body.getReader();
    let buffer = new Uint8Array(0);
    const decoder = new TextDecoder();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      const joined = new Uint8Array(buffer.length + value.length);
      joined.set(buffer);
      joined.set(value, buffer.length);
      buffer = joined;
      while (buffer.length >= 5) {
        const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
        const flags = view.getUint8(0);
        const length = view.getUint32(1);
        if (flags & 0x01) return end(new APIError("internal", "a compressed message, which the console did not ask for", 200));
        if (buffer.length < 5 + length) break;
        const message = JSON.parse(decoder.decode(buffer.subarray(5, 5 + length)));
        buffer = buffer.slice(5 + length);
        if (flags & 0x02) {
          const error = message.error;
          return end(error ? new APIError(error.code ?? "unknown", error.message ?? "", 200) : null);
        }
        onMessage(message);
      }
    }
    // The body ended without Connect's end-of-stream message: cut off (a restart, a proxy).
    end(new APIError("unavailable", "the stream was cut off before it ended", 200));
  })().catch((error) => {
    if (error.name === "AbortError") return end(null);
    end(new APIError("unavailable", `the stream ended (${error.message})`, 0));
  });
  return () => controller.abort();
}

/** int64 fields come as strings in proto3 JSON; absent fields are their zero value. */
export function num(value) {
  return value === undefined || value === null ? 0 : Number(value);
}

/** Runs `refresh` now and again `ms` after each run ends (never two at once on a slow gateway). */
export function poll(ms, refresh) {
  let timer;
  let stopped = false;
  const run = async () => {
    await refresh();
    if (!stopped) timer = setTimeout(run, ms);
  };
  run();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
