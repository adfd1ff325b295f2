import PushCore
import PushHTTP2
import PushPosix
import PushTransport
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

// `pushgate bench`: the load generator. gRPC over h2c on PushTransport + PushHTTP2 directly (not
// through Swift tasks), one connection confined to one loop, so the client costs as little CPU as
// possible on a machine it shares with the gateway and the mock. Requests are serialized once and
// the same bytes are sent every time (HTTP2Session shares them, it does not copy them).

/// One h2c connection to the gateway running its share of a phase. Confined to its loop.
final class BenchConnection: HTTP2SessionDelegate, HTTPTransportOwner, @unchecked Sendable {
    private final class Call {
        var deframer = GRPCMessageDeframer(maxMessageSize: 256 << 20)
        /// Submission times of requests still waiting for their response (stream mode: in order).
        var sentAt: [UInt64] = []
        var head = 0
        var grpcStatus: Int?
        var grpcMessage = ""
        var httpStatus: String?
        var ended = false
        var outstanding: Int { sentAt.count - head }
    }

    let loop: EventLoop
    private let authority: String
    private var transport: HTTPTransport?
    private var calls: [Int32: Call] = [:]
    private var headers: [HTTP2Header] = []
    private var framed: [UInt8] = []

    private var shared: BenchShared!
    /// This connection's share of the concurrency (unary: RPCs; stream: calls).
    private var slots = 0
    private var inFlight = 0
    private var interval: UInt64 = 0
    private var nextDue: UInt64 = 0
    private var finished = false
    private(set) var report = BenchConnectionReport()

    init(loop: EventLoop, authority: String) {
        self.loop = loop
        self.authority = authority
    }

    func connect(host: String, port: Int) async throws {
        try await HTTPTransport.connectCleartextHTTP2(
            host: host, port: port, loop: loop, timeout: .seconds(10), client: self
        ) { [self] in transport = $0 }
    }

    /// Starts a phase with `slots` of the concurrency and `rate` RPC/s (nil: closed loop). Loop thread.
    func start(shared: BenchShared, slots: Int, rate: Double?) {
        self.shared = shared
        self.slots = slots
        finished = false
        inFlight = 0
        report = BenchConnectionReport()
        let workload = shared.workload
        framed = GRPCMessageFramer.frame(workload.message)
        headers = [
            HTTP2Header(":method", "POST"), HTTP2Header(":scheme", "http"), HTTP2Header(":path", workload.mode.path),
            HTTP2Header(":authority", authority), HTTP2Header("content-type", "application/grpc"),
            HTTP2Header("te", "trailers"),
        ]
        if let authorization = workload.authorization { headers.append(HTTP2Header("authorization", authorization)) }
        if workload.mode != .stream {
            let (seconds, attoseconds) = workload.timeout.components
            let millis = max(1, seconds * 1000 + attoseconds / 1_000_000_000_000_000)
            headers.append(HTTP2Header("grpc-timeout", "\(min(millis, 99_999_999))m"))
        }
        if slots == 0 {
            finish()
            return
        }
        if let rate, rate > 0 {
            interval = UInt64(1e9 / rate)
            nextDue = loop.now
            tick()
        } else if workload.mode == .stream {
            for _ in 0..<slots { openStream() }
        } else {
            for _ in 0..<slots where shared.claim() { submitUnary(dueAt: nil) }
        }
        transport?.setNeedsFlush()
        checkFinished()
    }

    /// Called after the shared stop flag is set, so an idle connection notices. Loop thread.
    func poke() {
        if shared.workload.mode == .stream {
            for (streamID, call) in calls { endStreamIfDone(streamID, call) }
            transport?.setNeedsFlush()
        }
        checkFinished()
    }

    /// Gives up on what is still in flight (the drain limit passed). Loop thread.
    func collect() -> BenchConnectionReport {
        report.unfinished = calls.values.reduce(0) { $0 + max(1, $1.outstanding) }
        return report
    }

    func close() {
        transport?.close(flushFirst: true)
    }

    // MARK: Issuing

    private func tick() {
        guard !finished else { return }
        let now = loop.now
        while nextDue <= now {
            if shared.exhausted { break }
            if inFlight < slots {
                guard shared.claim() else { break }
                report.maxScheduleLagNanos = max(report.maxScheduleLagNanos, now - nextDue)
                submitUnary(dueAt: nextDue)
            } else {
                report.skippedSends += 1
            }
            nextDue += interval
        }
        transport?.setNeedsFlush()
        if shared.exhausted {
            checkFinished()
            return
        }
        loop.schedule(at: nextDue) { [self] in tick() }
    }

    private func submitUnary(dueAt: UInt64?) {
        guard let transport, !transport.isClosed else {
            report.rpcErrors["UNAVAILABLE (connection closed)", default: 0] += 1
            shared.failedRequests.add(1, ordering: .relaxed)
            return
        }
        do {
            let streamID = try transport.session.submitRequest(headers: headers, body: framed)
            let call = Call()
            call.sentAt.append(loop.now)
            calls[streamID] = call
            inFlight += 1
        } catch {
            report.rpcErrors["submit failed: \(error)", default: 0] += 1
            shared.failedRequests.add(1, ordering: .relaxed)
        }
    }

    private func openStream() {
        guard let transport, !transport.isClosed else { return }
        do {
            let streamID = try transport.session.submitRequest(headers: headers, streamingBody: true)
            let call = Call()
            calls[streamID] = call
            inFlight += 1
            fillStream(streamID, call)
        } catch {
            report.rpcErrors["submit failed: \(error)", default: 0] += 1
        }
    }

    private func fillStream(_ streamID: Int32, _ call: Call) {
        guard let transport, !call.ended else { return }
        while call.outstanding < shared.workload.pipeline, shared.claim() {
            do {
                try transport.session.sendData(streamID: streamID, framed, endStream: false)
                call.sentAt.append(loop.now)
            } catch {
                report.rpcErrors["send failed: \(error)", default: 0] += 1
                break
            }
        }
        endStreamIfDone(streamID, call)
    }

    private func endStreamIfDone(_ streamID: Int32, _ call: Call) {
        guard !call.ended, call.outstanding == 0, shared.exhausted, let transport else { return }
        call.ended = true
        try? transport.session.sendData(streamID: streamID, [], endStream: true)
    }

    private func checkFinished() {
        guard !finished, inFlight == 0, shared.exhausted else { return }
        finish()
    }

    private func finish() {
        finished = true
        shared.finishedConnections.add(1, ordering: .relaxed)
    }

    // MARK: Responses

    private func completed(_ call: Call, message: [UInt8]) {
        guard call.head < call.sentAt.count else { return }
        let sentAt = call.sentAt[call.head]
        call.head += 1
        if call.head > 64 && call.head * 2 > call.sentAt.count {
            call.sentAt.removeFirst(call.head)
            call.head = 0
        }
        let latency = loop.now &- sentAt
        report.latency.record(latency)
        if shared.workload.rate != nil {
            // Past the limit the split covers the first RPCs only (the table says how many).
            if report.samples.count < BenchConnectionReport.sampleLimit {
                report.samples.append(RPCSample(sentAt: sentAt, latency: latency))
            }
        }
        report.requests += 1
        shared.completedRequests.add(1, ordering: .relaxed)
        if shared.workload.mode == .publish { return }
        var tally = ResultTally()
        if tally.scanSendResponse(message) {
            shared.completedResults.add(tally.results, ordering: .relaxed)
            shared.deliveredResults.add(tally.delivered, ordering: .relaxed)
            if tally.results != shared.workload.tokensPerRequest {
                report.rpcErrors[
                    "wrong result count (\(tally.results), expected \(shared.workload.tokensPerRequest))", default: 0] +=
                    1
            }
            report.tally.merge(tally)
        } else {
            report.rpcErrors["unparseable SendResponse", default: 0] += 1
        }
    }

    private func failed(_ key: String, count: Int) {
        guard count > 0 else { return }
        report.rpcErrors[key, default: 0] += count
        shared.failedRequests.add(count, ordering: .relaxed)
    }

    func transportDidBecomeReady(_ transport: HTTPTransport) {}  // cleartext: ready once connected

    func transport(_ transport: HTTPTransport, didCloseWith error: (any Error)?) {
        let reason = "UNAVAILABLE (connection closed\(error.map { ": \($0)" } ?? ""))"
        for call in calls.values { failed(reason, count: max(1, call.outstanding)) }
        calls.removeAll()
        inFlight = 0
        if shared != nil {
            shared.stopping.store(true, ordering: .relaxed)
            checkFinished()
        }
    }

    override func http2Session(
        _ session: HTTP2Session, didReceiveHeaders headers: [HTTP2Header], streamID: Int32, endStream: Bool
    ) {
        guard let call = calls[streamID] else { return }
        for header in headers {
            switch header.nameString {
            case "grpc-status": call.grpcStatus = Int(header.valueString)
            case "grpc-message": call.grpcMessage = GRPCPercentEncoding.decode(header.valueString)
            case ":status" where header.valueString != "200": call.httpStatus = header.valueString
            default: break
            }
        }
    }

    override func http2Session(
        _ session: HTTP2Session, didReceiveData data: UnsafeRawBufferPointer, streamID: Int32, endStream: Bool
    ) {
        guard let call = calls[streamID], data.count > 0 else { return }
        call.deframer.append(data)
        do {
            while let message = try call.deframer.next() {
                if shared.workload.mode == .stream {
                    completed(call, message: message.bytes)
                    fillStream(streamID, call)
                    transport?.setNeedsFlush()
                } else {
                    // Unary: the response is complete only with an OK status; keep it until then.
                    pendingMessages[streamID] = message.bytes
                }
            }
        } catch {
            call.grpcStatus = error.code.rawValue
            call.grpcMessage = "client deframer: \(error.message)"
        }
    }

    private var pendingMessages: [Int32: [UInt8]] = [:]

    override func http2Session(_ session: HTTP2Session, streamDidClose streamID: Int32, errorCode: HTTP2ErrorCode) {
        guard let call = calls.removeValue(forKey: streamID) else { return }
        let message = pendingMessages.removeValue(forKey: streamID)
        inFlight -= 1
        let code = call.grpcStatus.flatMap(GRPCStatusCode.init(rawValue:))
        if code == .ok, shared.workload.mode != .stream {
            if let message {
                completed(call, message: message)
            } else {
                failed("OK without a response message", count: 1)
            }
        } else if code != .ok {
            let key: String
            if let code {
                // The message, with its numbers as N so that one cause is one reason.
                let message = String(call.grpcMessage.prefix(120))
                    .split(whereSeparator: \.isNumber).joined(separator: "N")
                key = code.name + (message.isEmpty ? "" : ": " + message)
            } else if let http = call.httpStatus {
                key = "HTTP \(http)"
            } else {
                key = "stream closed without a status (\(errorCode))"
            }
            failed(key, count: shared.workload.mode == .stream ? max(1, call.outstanding) : 1)
        } else if call.outstanding > 0 {
            failed("SendStream ended with requests unanswered", count: call.outstanding)
        }
        if !shared.exhausted {
            // Keep the concurrency: replace the finished call.
            if shared.workload.rate == nil {
                if shared.workload.mode == .stream {
                    openStream()
                } else if shared.claim() {
                    submitUnary(dueAt: nil)
                }
                transport?.setNeedsFlush()
            }
        }
        checkFinished()
    }
}
