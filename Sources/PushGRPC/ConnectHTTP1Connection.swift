import PushCore
import PushHTTP1
import PushPosix
import PushTransport

/// The HTTP/1.1 side of a gRPC server connection: Connect calls and plain routes, read by an
/// ``HTTP1ServerSession`` (pipelined requests answered in order) and decided at each request's head
/// (``ConnectDoor``). Confined to the connection's loop.
final class ConnectHTTP1Connection: HTTP1ServerSessionDelegate {
    let session: HTTP1ServerSession
    private unowned let server: GRPCServerConnection
    /// The decision taken at each request's head, until its body is complete.
    /// `busy`: it keeps the connection from idling (decided at the head, kept if the decision
    /// becomes a refusal later).
    private var decisions: [Int: (decision: ConnectDoor.Decision, reserved: Int, busy: Bool)] = [:]
    /// Calls running, by request sequence.
    private var calls: [Int: ConnectCall] = [:]
    private var exchanges: [Int: ConnectHTTP1Exchange] = [:]
    private var requestIDs = GRPCRequestID()
    /// The sequence of the last request read (for a graceful close).
    private var lastRead = -1
    /// Ends the connection when a request's body is not complete within `requestTimeout`.
    private var bodyTimer: TimerID?

    init(server: GRPCServerConnection) {
        self.server = server
        session = HTTP1ServerSession(maxBodyBytes: server.configuration.maxMessageSize)
        session.delegate = self
    }

    var hasRequestsInFlight: Bool { session.unanswered > 0 || !decisions.isEmpty }

    func http1Session(_ session: HTTP1ServerSession, bodyLimitFor request: HTTP1Request) -> Int {
        if let limit = server.configuration.requestTimeout {
            // A client that stops inside a body holds its request (and its budget) no longer than
            // this; HTTP/1.1 cannot answer it before the body ends, so the connection closes.
            bodyTimer = server.loop.schedule(after: limit) { [weak self] in
                guard let self else { return }
                bodyTimer = nil
                server.closeStalledClient(
                    "a request body was not completed within \(limit) (request_timeout)")
            }
        }
        let decided = ConnectDoor.decide(
            method: request.method, target: request.target, headers: request.headers, router: server.router,
            routes: server.routes, peer: server.peerInfo, maxMessageSize: server.configuration.maxMessageSize,
            allowsHost: server.configuration.allowsHost, requestIDs: &requestIDs)
        var (decision, reserved) = ConnectDoor.reserveBody(
            decided, declared: request.header("content-length"), budget: server.requestBudget
        ) { server.requestBudgetExceeded(path: request.target) }
        // A route that takes no body (the console's files) refuses a chunked one at its head: a
        // limit of 0 tells the session the request was answered before its body, so the body
        // could never pass it (a declared length is refused by reserveBody).
        if case .route(_, 0) = decision, request.declaresBody {
            server.requestBudget.release(reserved)
            reserved = 0
            decision = ConnectDoor.bodyOverLimit(decision, bodyLimit: 0)
        }
        let busy = decision.keepsConnectionBusy
        server.requestBegan(busy: busy)
        switch decision {
        case .connect(_, _, _, let bodyLimit), .route(_, let bodyLimit):
            decisions[request.sequence] = (decision, reserved, busy)
            return bodyLimit
        case .refuse(let status, let headers, let body) where request.declaresBody:
            // Answered now, as HTTP/2 answers at HEADERS: a client without a key, or with a body
            // over the limit, is told before it sends the body, and holds nothing meanwhile.
            if let bodyTimer { server.loop.cancelTimer(bodyTimer) }
            bodyTimer = nil
            let exchange = ConnectHTTP1Exchange(connection: self, sequence: request.sequence, keepsConnectionBusy: busy)
            exchanges[request.sequence] = exchange
            if !exchange.respondBeforeBody(status: status, headers: headers, body: body) {
                // Answered after its body, as any request is.
                exchanges[request.sequence] = nil
                decisions[request.sequence] = (decision, reserved, busy)
            }
            return 0
        case .refuse:
            decisions[request.sequence] = (decision, reserved, busy)
            return 0
        }
    }

    /// A body over its limit is refused as it passes it, as HTTP/2 refuses it: the client need
    /// not send the rest (and this is the connection's last answer).
    func http1Session(_ session: HTTP1ServerSession, bodyPassedLimitOf request: HTTP1Request) {
        guard let (decision, reserved, busy) = decisions.removeValue(forKey: request.sequence) else { return }
        server.requestBudget.release(reserved)
        if let bodyTimer { server.loop.cancelTimer(bodyTimer) }
        bodyTimer = nil
        var bodyLimit = 0
        switch decision {
        case .connect(_, _, _, let limit), .route(_, let limit): bodyLimit = limit
        case .refuse: break
        }
        let refusal = ConnectDoor.bodyOverLimit(decision, bodyLimit: bodyLimit)
        let exchange = ConnectHTTP1Exchange(connection: self, sequence: request.sequence, keepsConnectionBusy: busy)
        exchanges[request.sequence] = exchange
        guard case .refuse(let status, let headers, let body) = refusal,
            exchange.respondBeforeBody(status: status, headers: headers, body: body)
        else {
            // Refused once its body ends, as any request is.
            exchanges[request.sequence] = nil
            decisions[request.sequence] = (refusal, 0, busy)
            return
        }
    }

    func http1Session(_ session: HTTP1ServerSession, didReceive request: HTTP1Request) {
        lastRead = request.sequence
        if let bodyTimer { server.loop.cancelTimer(bodyTimer) }
        bodyTimer = nil
        guard let (decision, reserved, busy) = decisions.removeValue(forKey: request.sequence) else { return }
        let exchange = ConnectHTTP1Exchange(connection: self, sequence: request.sequence, keepsConnectionBusy: busy)
        exchanges[request.sequence] = exchange
        switch decision {
        case .refuse(let status, let headers, let body):
            exchange.respond(status: status, headers: headers, body: body)
        case .route(let route, let bodyLimit):
            guard request.bodyLength <= bodyLimit else {
                server.requestBudget.release(reserved)
                // Refused as the body passed the limit (``http1Session(_:bodyPassedLimitOf:)``);
                // here only if that could not be said then.
                if case .refuse(let status, let headers, let body) = ConnectDoor.bodyOverLimit(
                    decision, bodyLimit: bodyLimit)
                {
                    exchange.respond(status: status, headers: headers, body: body)
                }
                return
            }
            let loop = server.loop
            let routeRequest = HTTPRouteRequest(
                method: request.method, target: request.target, headers: request.headers, body: request.body,
                peer: server.peerInfo.address, isLoopbackPeer: server.peerInfo.isLoopback, isTLS: server.peerInfo.isTLS)
            let responder = HTTPRouteResponder { response in
                loop.execute {
                    exchange.respond(status: response.status, headers: response.headers, body: response.body)
                }
            }
            let budget = server.requestBudget
            route.handle(routeRequest, responder) { budget.release(reserved) }
        case .connect(let head, let method, let context, _):
            let call = ConnectCall(
                exchange: exchange, loop: server.loop, head: head, method: method, context: context,
                maxMessageSize: server.configuration.maxMessageSize, budget: server.requestBudget, reserved: reserved,
                observer: server.configuration.callObserver)
            calls[request.sequence] = call
            call.start(body: request.body, bodyLength: request.bodyLength)
        }
    }

    /// Request `sequence` is answered whole.
    fileprivate func answered(_ exchange: ConnectHTTP1Exchange) {
        calls[exchange.sequence] = nil
        exchanges[exchange.sequence] = nil
        server.requestEnded(busy: exchange.keepsConnectionBusy)
        answerQueued()
    }

    /// Answer bytes were given: the client watch looks at what it has not taken.
    fileprivate func answerQueued() {
        server.responseQueued()
        server.flush()
    }

    /// Graceful shutdown: answer what was read, then close.
    func shutDownGracefully() {
        session.closeAfter(sequence: lastRead)
        server.flush()
    }

    /// The connection closed: running calls stop, reservations are given back, and every
    /// exchange is closed, so an answer that comes later (a route's responder, a call's task)
    /// finds nothing to write to and is dropped.
    func closed() {
        if let bodyTimer { server.loop.cancelTimer(bodyTimer) }
        bodyTimer = nil
        for (_, pending) in decisions {
            server.requestBudget.release(pending.reserved)
            server.requestEnded(busy: pending.busy)
        }
        decisions.removeAll()
        let open = exchanges.values
        exchanges.removeAll()
        for exchange in open where exchange.close() { server.requestEnded(busy: exchange.keepsConnectionBusy) }
        for call in calls.values { call.cancel() }
        calls.removeAll()
    }

    fileprivate func waitForDrain(_ call: ConnectCall) { server.waitForDrain(call) }
    fileprivate var unsentBytes: Int { server.transport.unsentBytes }
}

/// One HTTP/1.1 request's answer, in its place on the connection. It can outlive the connection
/// (a route's responder holds it until its work is done): once closed, it writes nothing.
final class ConnectHTTP1Exchange: ConnectExchange, @unchecked Sendable {
    private weak var connection: ConnectHTTP1Connection?
    let sequence: Int
    let keepsConnectionBusy: Bool
    private var done = false

    init(connection: ConnectHTTP1Connection, sequence: Int, keepsConnectionBusy: Bool) {
        self.connection = connection
        self.sequence = sequence
        self.keepsConnectionBusy = keepsConnectionBusy
    }

    /// The connection closed: true if this was still unanswered (its request ends now).
    func close() -> Bool {
        defer { done = true }
        return !done
    }

    func respond(status: Int, headers: [(name: String, value: String)], body: [UInt8]) {
        guard !done, let connection else { return }
        done = true
        try? connection.session.respond(
            to: sequence, status: status, reason: HTTP1Writer.reasonPhrase(status), headers: headers, body: body)
        connection.answered(self)
    }

    /// A refusal of the request being read, before (the rest of) its body, and the connection's
    /// last answer; false if the session could not answer it so (nothing was said).
    func respondBeforeBody(status: Int, headers: [(name: String, value: String)], body: [UInt8]) -> Bool {
        guard !done, let connection else { return false }
        let answered =
            (try? connection.session.respondBeforeBody(
                status: status, reason: HTTP1Writer.reasonPhrase(status), headers: headers, body: body)) ?? false
        guard answered else { return false }
        done = true
        connection.answered(self)
        return true
    }

    func beginStream(headers: [(name: String, value: String)]) {
        guard !done, let connection else { return }
        try? connection.session.respondHead(to: sequence, status: 200, reason: "OK", headers: headers)
    }

    func sendStream(_ bytes: [UInt8], end: Bool) {
        guard !done, let connection else { return }
        connection.session.respondChunk(to: sequence, bytes)
        if end {
            done = true
            connection.session.respondEnd(to: sequence)
            connection.answered(self)
        } else {
            connection.answerQueued()
        }
    }

    var unsentBytes: Int { connection?.unsentBytes ?? 0 }

    func waitForDrain(_ call: ConnectCall) { connection?.waitForDrain(call) }
}
