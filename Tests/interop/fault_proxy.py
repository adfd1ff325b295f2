"""A TCP proxy between the gateway and a mock provider that injects the faults a mock cannot show
from inside its own HTTP/2 stack: the provider down (connections refused) for a while, a TCP reset
in the middle of a connection, a peer that accepts and never answers (not even the TLS handshake),
and a handshake that fails (bytes that are not TLS). TLS passes through untouched, so the gateway
still verifies the mock's certificate.

Modes (change `mode` at any time; it applies to connections accepted from then on, except "down",
which closes the listener at once):
  "pass"       forward both ways
  "down"       the listener is closed: connects are refused (ECONNREFUSED); "pass" reopens it
               on the same port
  "blackhole"  accept, read and drop everything, never write
  "garbage"    accept, answer a few bytes that are not TLS, close
  "reset"      forward, but after `reset_after_bytes` from the provider, reset both sides (RST:
               SO_LINGER 0) — the gateway sees ECONNRESET mid-stream
"""
import asyncio
import socket
import struct
import threading


class FaultProxy:
    def __init__(self, upstream_port, mode="pass", reset_after_bytes=64 * 1024, reset_connections=None):
        self.upstream_port = upstream_port
        self.mode = mode
        self.reset_after_bytes = reset_after_bytes
        # In "reset" mode, only this many connections are reset (then they pass); None = all.
        self.reset_connections = reset_connections
        self.port = None
        self.accepted = 0
        self.resets = 0
        self.blackholed = 0
        self.garbage_sent = 0
        self._loop = None
        self._server = None
        self._ready = threading.Event()
        self._writers = set()

    # MARK: control (any thread)

    def start(self):
        threading.Thread(target=self._run, daemon=True).start()
        if not self._ready.wait(10):
            raise RuntimeError("fault proxy did not start")
        return self

    def set_mode(self, mode):
        """Switches mode; "down" closes the listener and every open connection, leaving it down
        returns to listening on the same port."""
        done = threading.Event()

        def switch():
            async def go():
                previous, self.mode = self.mode, mode
                if mode == "down" and self._server is not None:
                    self._server.close()
                    self._server = None
                    for writer in list(self._writers):
                        self._abort(writer)
                elif mode != "down" and previous == "down":
                    await self._listen()
                done.set()
            asyncio.ensure_future(go())
        self._loop.call_soon_threadsafe(switch)
        if not done.wait(10):
            raise RuntimeError("fault proxy did not switch to %s" % mode)

    def stop(self):
        if self._loop:
            self._loop.call_soon_threadsafe(self._loop.stop)

    # MARK: the loop

    def _run(self):
        self._loop = asyncio.new_event_loop()
        self._loop.run_until_complete(self._listen())
        self._ready.set()
        self._loop.run_forever()

    async def _listen(self):
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port or 0, reuse_address=True)
        self.port = self._server.sockets[0].getsockname()[1]

    @staticmethod
    def _abort(writer):
        sock = writer.get_extra_info("socket")
        try:
            if sock is not None:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
        writer.transport.abort()

    async def _serve(self, reader, writer):
        self.accepted += 1
        self._writers.add(writer)
        try:
            mode = self.mode
            if mode == "blackhole":
                self.blackholed += 1
                while await reader.read(65536):
                    pass
                return
            if mode == "garbage":
                self.garbage_sent += 1
                await reader.read(1024)  # the ClientHello
                writer.write(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")
                await writer.drain()
                return
            reset = mode == "reset" and (self.reset_connections is None or self.resets < self.reset_connections)
            if reset:
                self.resets += 1
            try:
                up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
            except OSError:
                self._abort(writer)
                return
            self._writers.add(up_writer)
            budget = [self.reset_after_bytes if reset else None]

            async def pump(src, dst, counted):
                try:
                    while True:
                        data = await src.read(65536)
                        if not data:
                            break
                        if counted and budget[0] is not None:
                            if len(data) >= budget[0]:
                                dst.write(data[:budget[0]])
                                await dst.drain()
                                self._abort(writer)
                                self._abort(up_writer)
                                return
                            budget[0] -= len(data)
                        dst.write(data)
                        await dst.drain()
                except (ConnectionError, OSError):
                    pass
                finally:
                    try:
                        dst.close()
                    except Exception:
                        pass

            await asyncio.gather(pump(reader, up_writer, False), pump(up_reader, writer, True))
            self._writers.discard(up_writer)
        except (ConnectionError, OSError):
            pass
        finally:
            self._writers.discard(writer)
            try:
                writer.close()
            except Exception:
                pass
