import PushCore
import PushHTTP2
import PushPosix

/// A request on an HTTP/2 stream of a gRPC server connection that is not gRPC (its content type is
/// not `application/grpc…`): a Connect call or a plain route, decided at its HEADERS
/// (``ConnectDoor``), its body collected within the limit, answered on the stream. Confined to the
/// connection's loop.
final class ConnectHTTP2Stream: ConnectExchange, @unchecked Sendable {
    let streamID: Int32
    private unowned let server: GRPCServerConnection
    private var decision: ConnectDoor.Decision
    private var reserved = 0
    private var bodyLimit = 0
    private var body: [UInt8] = []
    private var bodyLength = 0
    private var call: ConnectCall?
    private var target = ""
    private var method = ""
    private var headers: [(name: String, value: String)] = []
    private(set) var done = false
    /// Decided at the head: see ``ConnectDoor/Decision/keepsConnectionBusy``.
    let keepsConnectionBusy: Bool
    /// The request's body is complete (END_STREAM).
    private var requestEnded = false

    init(server: GRPCServerConnection, streamID: Int32, headers: [HTTP2Header], requestIDs: inout GRPCRequestID) {
        self.server = server
        self.streamID = streamID
        var authority: String?
        for header in headers {
            let name = header.nameString
            switch name {
            case ":method": method = header.valueString
            case ":path": target = header.valueString
            case ":authority": authority = header.valueString
            case ":scheme": continue
            default: self.headers.append((name, header.valueString))
            }
        }
        // HTTP/2 carries the host as `:authority` (RFC 9113 §8.3.1); a route reads it as `host`
        // (an SNS request's signature signs it), as over HTTP/1.1.
        if let authority, !self.headers.contains(where: { $0.name == "host" }) {
            self.headers.append(("host", authority))
        }
        decision = ConnectDoor.decide(
            method: method, target: target, headers: self.headers, router: server.router, routes: server.routes,
            peer: server.peerInfo, maxMessageSize: server.configuration.maxMessageSize,
            allowsHost: server.configuration.allowsHost, requestIDs: &requestIDs)
        let declared = self.headers.first { $0.name == "content-length" }?.value
        (decision, reserved) = ConnectDoor.reserveBody(
            decision, declared: declared, budget: server.requestBudget
        ) { [target] in server.requestBudgetExceeded(path: target) }
        switch decision {
        case .connect(_, _, _, let limit), .route(_, let limit): bodyLimit = limit
        case .refuse: bodyLimit = 0
        }
        keepsConnectionBusy = decision.keepsConnectionBusy
    }

    private var bodyTimer: TimerID?

    /// Answers at once what was refused at the head (the body is not read); otherwise the body
    /// must be complete within `requestTimeout`, or the request is answered 408 and the stream reset.
    func startIfRefused() {
        if case .refuse(let status, let headers, let body) = decision {
            respond(status: status, headers: headers, body: body)
            return
        }
        guard let limit = server.configuration.requestTimeout else { return }
        bodyTimer = server.loop.schedule(after: limit) { [weak self] in
            guard let self else { return }
            bodyTimer = nil
            guard !requestEnded else { return }
            server.requestBudget.release(reserved)
            reserved = 0
            // Answered already (a body over the limit) or not: the client that never ends its
            // body is reset either way.
            respond(
                status: 408, headers: [("content-type", "application/json")],
                body: ConnectProtocol.errorBody(
                    GRPCStatus(.deadlineExceeded, "the request was not completed within \(limit) (request_timeout)")))
            server.resetAfterNextFlush(streamID)
        }
    }

    private func stopBodyTimer() {
        if let bodyTimer { server.loop.cancelTimer(bodyTimer) }
        bodyTimer = nil
    }

    /// Body bytes: kept up to the limit (and one more, to tell an oversized body), the rest counted.
    func receive(_ bytes: UnsafeRawBufferPointer) {
        guard !done, !requestEnded else { return }
        let room = bodyLimit + 1 - body.count
        if room > 0 { body.append(contentsOf: bytes.prefix(room)) }
        bodyLength += bytes.count
        if bodyLength > bodyLimit, call == nil {
            server.requestBudget.release(reserved)
            reserved = 0
            if case .refuse(let status, let headers, let body) = ConnectDoor.bodyOverLimit(
                decision, bodyLimit: bodyLimit)
            {
                respond(status: status, headers: headers, body: body)
            }
        }
    }

    /// END_STREAM: the request is complete.
    func receiveEnd() {
        guard !done, !requestEnded else { return }
        requestEnded = true
        stopBodyTimer()
        switch decision {
        case .refuse:
            break
        case .route(let route, _):
            // Released once the handler has read the body (``HTTPRoute/handle``).
            let (budget, held) = (server.requestBudget, reserved)
            reserved = 0
            let loop = server.loop
            let request = HTTPRouteRequest(
                method: method, target: target, headers: headers, body: body, peer: server.peerInfo.address,
                isLoopbackPeer: server.peerInfo.isLoopback, isTLS: server.peerInfo.isTLS)
            route.handle(
                request,
                HTTPRouteResponder { [self] response in
                    loop.execute {
                        self.respond(status: response.status, headers: response.headers, body: response.body)
                    }
                }
            ) { budget.release(held) }
        case .connect(let head, let method, let context, _):
            let call = ConnectCall(
                exchange: self, loop: server.loop, head: head, method: method, context: context,
                maxMessageSize: server.configuration.maxMessageSize, budget: server.requestBudget, reserved: reserved,
                observer: server.configuration.callObserver)
            reserved = 0
            self.call = call
            call.start(body: body, bodyLength: bodyLength)
        }
    }

    /// The stream is gone (reset, connection closed).
    func cancel() {
        stopBodyTimer()
        server.requestBudget.release(reserved)
        reserved = 0
        done = true
        call?.cancel()
    }

    // MARK: ConnectExchange

    func respond(status: Int, headers: [(name: String, value: String)], body: [UInt8]) {
        guard !done else { return }
        done = true
        var fields = [HTTP2Header(":status", String(status))]
        for (name, value) in headers { fields.append(HTTP2Header(name.lowercased(), value)) }
        fields.append(HTTP2Header("content-length", String(body.count)))
        do {
            try server.session.sendResponseHeaders(streamID: streamID, headers: fields, endStream: body.isEmpty)
            if !body.isEmpty { try server.session.sendData(streamID: streamID, body, endStream: true) }
        } catch {
            server.connectStreamFailed(streamID)
        }
        // A client still sending a body nobody reads is not reset (as gRPC's early answers are):
        // HTTP clients such as curl take a reset after the answer for a failed request. What it
        // sends is dropped as it comes, its flow-control window reopened.
        server.flush()
    }

    func beginStream(headers: [(name: String, value: String)]) {
        guard !done else { return }
        var fields = [HTTP2Header(":status", "200")]
        for (name, value) in headers { fields.append(HTTP2Header(name.lowercased(), value)) }
        do {
            try server.session.sendResponseHeaders(streamID: streamID, headers: fields, endStream: false)
        } catch {
            server.connectStreamFailed(streamID)
        }
        server.flush()
    }

    func sendStream(_ bytes: [UInt8], end: Bool) {
        guard !done else { return }
        if end { done = true }
        do {
            try server.session.sendData(streamID: streamID, bytes, endStream: end)
        } catch {
            server.connectStreamFailed(streamID)
        }
        server.flush()
        server.responseQueued()
    }

    var unsentBytes: Int { server.session.queuedBodyBytes(streamID: streamID) }

    func waitForDrain(_ call: ConnectCall) { server.waitForDrain(call) }
}
