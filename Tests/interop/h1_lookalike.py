"""An HTTP/1.1-only TLS server for look-alikes of providers that speak HTTP/1.1 (Amazon's ADM and
Login with Amazon): Python's own `http.server` (keep-alive, `Content-Length` bodies) behind `ssl`
offering ALPN `http/1.1` only, on a thread per connection. Independent of Pushgate's code.

Subclasses implement `_answer(conn, stream_id, headers, body)` as for `H2Lookalike` (headers are
lowercased, with `:method` and `:path` added; `stream_id` is always None) and answer with
`send_json`."""
import http.server
import json
import ssl
import threading


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive unless the client says otherwise

    def setup(self):
        super().setup()
        owner = self.server.owner
        with owner.lock:
            owner.connections += 1
            owner.alpn.append(self.request.selected_alpn_protocol())
        self.served = 0

    def log_message(self, *args):
        pass

    def do_POST(self):
        owner = self.server.owner
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        headers = {k.lower(): v for k, v in self.headers.items()}
        headers[":method"], headers[":path"] = self.command, self.path
        with owner.lock:
            owner.in_flight += 1
            owner.max_open_streams = max(owner.max_open_streams, owner.in_flight)
            owner.requests += 1
            owner.versions.add(self.request_version)
        self.served += 1
        owner.max_requests_per_connection = max(owner.max_requests_per_connection, self.served)
        try:
            owner._answer(self, None, headers, body)
        finally:
            with owner.lock:
                owner.in_flight -= 1
        if owner.close_after and self.served >= owner.close_after:
            self.close_connection = True

    do_GET = do_POST


class H1Lookalike:
    name = "HTTP/1.1 look-alike"

    def __init__(self, cert, key, close_after=None):
        self.cert, self.key = cert, key
        self.close_after = close_after      # close each connection after this many requests
        self.lock = threading.Lock()
        self.connections = 0
        self.requests = 0
        self.in_flight = 0
        self.max_open_streams = 0           # requests in flight at once, over all connections
        self.max_requests_per_connection = 0
        self.versions = set()               # HTTP versions of the requests seen
        self.alpn = []                      # the ALPN protocol of each connection
        self.port = None
        self._server = None

    def start(self):
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert, self.key)
        context.set_alpn_protocols(["http/1.1"])
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        server.daemon_threads = True
        server.socket = context.wrap_socket(server.socket, server_side=True)
        server.owner = self
        self._server = server
        self.port = server.server_address[1]
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return self

    def stop(self):
        if self._server:
            self._server.shutdown()
            self._server.server_close()

    def _answer(self, conn, stream_id, headers, body):
        raise NotImplementedError

    @staticmethod
    def send_json(conn, stream_id, status, payload, extra_headers=()):
        data = json.dumps(payload).encode()
        conn.send_response(status)
        conn.send_header("Content-Type", "application/json")
        for name, value in extra_headers:
            conn.send_header(name, value)
        conn.send_header("Content-Length", str(len(data)))
        conn.end_headers()
        conn.wfile.write(data)
