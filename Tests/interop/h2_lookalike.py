"""The HTTP/2 server part the independent provider look-alikes share: Python's `ssl` for TLS and
the `h2` library (hyper-h2) for HTTP/2, on a thread with its own asyncio loop. A subclass answers
each complete request in `_answer(conn, stream_id, headers, body)`."""
import asyncio
import json
import ssl
import subprocess
import threading

import h2.config
import h2.connection
import h2.events
import h2.settings


def make_certificate(directory):
    """A self-signed certificate for 127.0.0.1 made with the openssl command line."""
    cert, key = directory + "/lookalike.pem", directory + "/lookalike.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
                   check=True, capture_output=True)
    return cert, key


class H2Lookalike:
    """Runs on its own thread with its own asyncio loop."""

    name = "look-alike"

    def __init__(self, cert, key, max_streams=1000):
        self.cert, self.key = cert, key
        self.max_streams = max_streams
        self.max_open_streams = 0
        self.connections = 0
        self.port = None
        self._ready = threading.Event()
        self._loop = None
        self._server = None

    def start(self):
        threading.Thread(target=self._run, daemon=True).start()
        if not self._ready.wait(10):
            raise RuntimeError(self.name + " did not start")
        return self

    def stop(self):
        if self._loop:
            self._loop.call_soon_threadsafe(self._loop.stop)

    def _run(self):
        self._loop = asyncio.new_event_loop()
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert, self.key)
        context.set_alpn_protocols(["h2"])
        self._server = self._loop.run_until_complete(
            asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=context))
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()

    async def _serve(self, reader, writer):
        self.connections += 1
        conn = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=False,
                                                                           header_encoding="utf-8"))
        conn.initiate_connection()
        conn.update_settings({h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: self.max_streams})
        writer.write(conn.data_to_send())
        streams = {}
        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    break
                for event in conn.receive_data(data):
                    if isinstance(event, h2.events.RequestReceived):
                        streams[event.stream_id] = (dict(event.headers), bytearray())
                        self.max_open_streams = max(self.max_open_streams, len(streams))
                    elif isinstance(event, h2.events.DataReceived):
                        streams[event.stream_id][1].extend(event.data)
                        conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                    elif isinstance(event, h2.events.StreamEnded):
                        headers, body = streams.pop(event.stream_id)
                        self._answer(conn, event.stream_id, headers, bytes(body))
                    else:
                        self._event(conn, event)
                writer.write(conn.data_to_send())
                await writer.drain()
        except (ConnectionError, ssl.SSLError):
            pass
        finally:
            writer.close()

    def _answer(self, conn, stream_id, headers, body):
        raise NotImplementedError

    def _event(self, conn, event):
        """Any other h2 event (a reset, a window update): for look-alikes that care."""

    @staticmethod
    def send_json(conn, stream_id, status, payload, extra_headers=()):
        """A JSON answer: HEADERS then one DATA frame with END_STREAM."""
        data = json.dumps(payload).encode()
        conn.send_headers(stream_id, [(":status", str(status)), ("content-type", "application/json")]
                          + list(extra_headers))
        conn.send_data(stream_id, data, end_stream=True)
