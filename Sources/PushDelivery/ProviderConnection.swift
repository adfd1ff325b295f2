import PushCredentials
import PushHTTP1
import PushHTTP2
import PushMetrics
import PushPosix
import PushTransport
import Synchronization

/// One long-lived HTTP/2 or HTTP/1.1 connection to a provider (APNs, FCM, ADM) and its queue of
/// requests: the
/// driver around a ``ProviderConnectionMachine``, which decides everything (queue, limits, retries,
/// reconnects, liveness). This class only carries the machine's actions out on the transport and
/// the nghttp2 session, feeds it their events, and lets the dialect write requests and read answers.
///
/// Over HTTP/2, requests are multiplexed up to the server's current SETTINGS_MAX_CONCURRENT_STREAMS
/// (re-read on every SETTINGS; APNs starts at 1 until it has seen a valid token). Over HTTP/1.1
/// (the server's ALPN choice, or the app's `http_version`) one request is in flight at a time, on a
/// kept-alive connection; the app's `connections` are its parallelism. After a GOAWAY, a
/// `Connection: close`, or when the connection dies, the same object reconnects and goes on.
///
/// Confined to `loop` (hence `@unchecked Sendable`): the client hands work over with `loop.execute`.
///
/// One job a file: the work from the client and the HTTP/2 events here (overrides cannot live in
/// extensions), then `+Actions` (carrying out the machine's actions, its timer), `+Sending`,
/// `+Connecting` (and the transport's events) and `+HTTP1`. Its state is internal for those
/// extensions only.
final class ProviderConnection<Dialect: ProviderDialect>: HTTP2SessionDelegate, HTTP1ParserDelegate,
    HTTPTransportOwner, AuthorizationWaiter, @unchecked Sendable
{
    typealias Request = ProviderRequest
    typealias Machine = ProviderConnectionMachine

    let loop: EventLoop
    let app: ProviderAppContext<Dialect>
    /// Where this connection goes (its pool's origin), and the count its results give back to.
    let usage: ProviderOriginUsage
    var machine: Machine
    /// Actions the machine returned, carried out right after each event.
    var actions: [Machine.Action] = []
    var transport: HTTPTransport?
    /// Per slot (the machine's), the answer so far of the request in flight there.
    var answers: [ProviderResponse] = []
    /// The machine's one timer, and the deadline it is set for.
    var timer: TimerID?
    var timerDeadline: UInt64?
    /// The `authorization` value in use, as bytes; re-encoded only when its generation changes.
    var authorization: (value: [UInt8], generation: Int64)?
    /// A ``pump()`` is due at the end of this turn.
    var pumpScheduled = false
    /// Where the fields of the response header block being received go (one block at a time:
    /// HTTP/2 does not interleave header blocks).
    let responseHead: ResponseHead
    /// HTTP/1.1: the id of the request in flight (the machine keys requests by id), and the next.
    var http1InFlight: Int32?
    var nextHTTP1ID: Int32 = 1
    /// Per-token bytes the dialect builds (e.g. a `:path`), reused: no allocation per token.
    var scratch: [UInt8] = []
    /// For gauges read from other threads: whether the connection is open (ready or draining), and
    /// the streams open (published after each change; a plain store on the loop thread).
    let isOpen = Atomic<Bool>(false)
    let streamsInFlight = Atomic<Int>(0)

    /// The most streams ever open at once on this connection (tests check it against the limit).
    var peakInFlight: Int { machine.peakInFlight }

    init(loop: EventLoop, app: ProviderAppContext<Dialect>, usage: ProviderOriginUsage) {
        self.loop = loop
        self.app = app
        self.usage = usage
        var seed = SystemRandomNumberGenerator()
        machine = Machine(configuration: app.configuration, seed: seed.next())
        responseHead = ResponseHead(idHeader: app.dialect.idHeader)
    }

    // MARK: Work from the client

    func enqueue(_ requests: [Request]) {
        machine.enqueue(requests, into: &actions)
        perform()
    }

    func enqueue(_ request: consuming Request) {
        machine.enqueue(request, into: &actions)
        perform()
    }

    /// Final: what is queued fails (`Shutdown`), streams in flight fail when the connection closes
    /// (not retried), later work fails at once, and nothing reconnects.
    func shutdown() {
        machine.shutDown(into: &actions)
        perform()
    }

    // MARK: HTTP/2 events

    override func http2SessionDidReceiveSettings(_ session: HTTP2Session) {
        machine.peerAnsweredConnection()
        machine.peerSettings(maxConcurrent: session.remoteMaxConcurrentStreams, into: &actions)
        perform()
    }

    /// Response header blocks of our streams are read field by field into ``responseHead``.
    override func http2Session(
        _ session: HTTP2Session, headerFieldSinkForStream streamID: Int32
    ) -> HTTP2HeaderFieldSink? {
        guard machine.slot(of: streamID) != nil else { return nil }
        responseHead.reset()
        return responseHead
    }

    override func http2Session(
        _ session: HTTP2Session, didReceiveHeaders headers: [HTTP2Header], streamID: Int32, endStream: Bool
    ) {
        guard let slot = machine.slot(of: streamID) else { return }
        if headers.isEmpty {
            // Read through responseHead (a block has no fields only if it came that way).
            let head = responseHead
            if head.status != 0 { answers[slot].status = head.status }
            if let id = head.id { answers[slot].id = id }
            if let retryAfter = head.retryAfter { answers[slot].retryAfter = retryAfter }
            return
        }
        let idHeader = app.dialect.idHeader
        for header in headers {
            if header.name == ResponseHeaderName.status {
                answers[slot].status = Self.decimal(header.value)
            } else if let idHeader, header.name == idHeader {
                answers[slot].id = header.valueString
            } else if header.name == ResponseHeaderName.retryAfter {
                answers[slot].retryAfter = header.valueString
            }
        }
    }

    override func http2Session(
        _ session: HTTP2Session, didReceiveData data: UnsafeRawBufferPointer, streamID: Int32, endStream: Bool
    ) {
        guard data.count > 0, let slot = machine.slot(of: streamID), !answers[slot].truncated else { return }
        if !answers[slot].append(data) {
            // A body this large is not the provider's error JSON: stop it rather than read megabytes.
            // The answer counts with what was kept; the reset's close delivers it.
            try? session.resetStream(streamID: streamID, errorCode: .cancel)
            transport?.setNeedsFlush()
        }
    }

    override func http2Session(_ session: HTTP2Session, streamDidClose streamID: Int32, errorCode: HTTP2ErrorCode) {
        guard let (slot, entry) = machine.takeInFlight(streamID) else { return }
        // Moved out, not copied: the slot is left empty for its next stream.
        var response = ProviderResponse()
        swap(&response, &answers[slot])
        streamsInFlight.store(machine.inFlightCount, ordering: .relaxed)
        let time = self.time
        if response.status == 0 {
            machine.unanswered(
                entry, refused: errorCode == .refusedStream, reason: "StreamReset(\(errorCode))", at: time,
                into: &actions)
        } else {
            app.metrics.requestSeconds?.observe(nanoseconds: time.now &- entry.submittedAt)
            let outcome = app.dialect.outcome(of: response, token: entry.request.token, now: time.unixSeconds)
            machine.answered(consume entry, outcome, at: time, into: &actions)
        }
        // Once per turn, not once per answer: a read of many answers refills the streams in one pass.
        perform()
    }

    override func http2Session(
        _ session: HTTP2Session, didReceiveGoAway lastStreamID: Int32, errorCode: HTTP2ErrorCode, debugData: [UInt8]
    ) {
        // Streams at or below lastStreamID are still answered; nghttp2 refuses the others, which
        // are then resent on the next connection. The transport closes once the session is done.
        machine.goAwayReceived(
            "\(errorCode) \(String(decoding: debugData, as: UTF8.self))", at: time, into: &actions)
        perform()
    }

    // MARK: Small things

    private static func decimal(_ bytes: [UInt8]) -> Int {
        var value = 0
        for byte in bytes {
            guard byte >= 0x30 && byte <= 0x39 else { return 0 }
            value = value * 10 + Int(byte - 0x30)
        }
        return value
    }
}

/// Response headers every dialect needs read (static stored properties cannot live in a generic type).
enum ResponseHeaderName {
    static let status = Array(":status".utf8)
    static let retryAfter = Array("retry-after".utf8)
}
