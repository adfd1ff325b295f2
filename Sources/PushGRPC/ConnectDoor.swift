import PushCore
import PushPosix

/// What a connection knows of its client, for the calls it carries.
struct ConnectPeer: Sendable {
    var address: String
    var isLoopback: Bool
    var isTLS: Bool
    var clientCertificateCommonName: String?
}

/// What to do with a request that is not gRPC (HTTP/1.1, or HTTP/2 without `application/grpc`),
/// decided from its head alone, before any of its body is kept: a Connect call of a method
/// (admitted: its API key was checked here), a plain route, or an answer now.
enum ConnectDoor {
    enum Decision {
        /// A Connect call: read the body (at most `bodyLimit` bytes), then run it.
        case connect(ConnectRequestHead, GRPCMethod, GRPCCallContext, bodyLimit: Int)
        /// A plain route's request: read the body (at most `bodyLimit` bytes), then hand it over.
        case route(HTTPRoute, bodyLimit: Int)
        /// Answer this now; the body is not kept.
        case refuse(status: Int, headers: [(name: String, value: String)], body: [UInt8])

        /// An admitted request (its API key was checked at the head) keeps its connection from
        /// being idle; a keyless one (a health check or watch, a refusal) does not, so no client
        /// without a key holds a connection open past the idle timeout, as on the gRPC path.
        var keepsConnectionBusy: Bool {
            switch self {
            case .connect(_, let method, _, _): method.admission != nil
            case .route(let route, _): route.admission != nil
            case .refuse: false
            }
        }
    }

    static func decide(
        method: String, target: String, headers: [(name: String, value: String)], router: GRPCRouter,
        routes: HTTPRoutes, peer: ConnectPeer, maxMessageSize: Int,
        allowsHost: (@Sendable (String) -> Bool)? = nil, requestIDs: inout GRPCRequestID
    ) -> Decision {
        let route = routes.route(forTarget: target)
        if let allowsHost, let host = headers.first(where: { $0.name == "host" })?.value, !allowsHost(host) {
            let message =
                "host \(TextCap.quoted(host)) is not served: without api_keys only loopback names (localhost, IP "
                + "addresses) are (a guard against DNS rebinding); configure api_keys to serve other names"
            if let route {
                let answer = route.refusal(403, message)
                return .refuse(status: 403, headers: answer.headers, body: answer.body)
            }
            return refusal(403, GRPCStatus(.permissionDenied, message))
        }
        if let route {
            guard route.methods.contains(method) else {
                // In the route's own form (an SNS client reads XML, a gorush client JSON).
                let answer = route.refusal(405, "method \(method) not allowed on \(target)")
                return .refuse(
                    status: 405, headers: answer.headers + [("allow", route.methods.sorted().joined(separator: ", "))],
                    body: answer.body)
            }
            if let admission = route.admission {
                let head = HTTPRouteRequest(
                    method: method, target: target, headers: headers, body: [], peer: peer.address,
                    isLoopbackPeer: peer.isLoopback, isTLS: peer.isTLS)
                if let answer = admission(head) {
                    return .refuse(status: answer.status, headers: answer.headers, body: answer.body)
                }
            }
            return .route(route, bodyLimit: min(maxMessageSize, route.maxBodyBytes ?? .max))
        }
        // The method is named by the path; a query (a Connect GET carries its message there)
        // does not hide it, so a GET gets the 405 it is documented to, not a 404. The call is
        // the path's too: a query must never name a new metrics series or log a new method.
        let path = target.firstIndex(of: "?").map { String(target[..<$0]) } ?? target
        guard let grpcMethod = router.method(forPath: path) else {
            // The spec's HTTP 404 reads as `unimplemented` to a Connect client.
            return refusal(404, GRPCStatus(.unimplemented, router.unimplementedMessage(forPath: target)))
        }
        let head: ConnectRequestHead
        do throws(ConnectRequestHead.Refusal) {
            head = try ConnectRequestHead(method: method, path: path, headers: headers)
        } catch {
            return refusal(error.httpStatus, error.status)
        }
        switch (grpcMethod.kind, head.shape) {
        case (.unary, .unary), (.serverStreaming, .streaming):
            break
        case (.unary, .streaming), (.serverStreaming, .unary):
            let wanted =
                grpcMethod.kind == .unary
                ? "application/json or application/proto" : "application/connect+json or application/connect+proto"
            return refusal(
                415,
                GRPCStatus(
                    .unimplemented,
                    "\(target) is a \(grpcMethod.kind == .unary ? "unary" : "server-streaming") method: send \(wanted)")
            )
        case (.clientStreaming, _), (.bidirectionalStreaming, _):
            return refusal(
                ConnectProtocol.httpStatus(.unimplemented),
                GRPCStatus(.unimplemented, "\(target) streams requests: call it over gRPC (HTTP/2, application/grpc)"))
        }
        if head.codec == .json && grpcMethod.json == nil {
            return refusal(415, GRPCStatus(.unimplemented, "\(target) is served as application/proto only"))
        }
        let deadline = head.timeout.map { MonotonicDeadline.after($0, from: EventLoop.monotonicNow) }
        var context = GRPCCallContext(
            path: path, deadlineNanoseconds: deadline, metadata: head.metadata,
            peer: peer.address, isLoopbackPeer: peer.isLoopback, isTLS: peer.isTLS,
            clientCertificateCommonName: peer.clientCertificateCommonName,
            callRequestID: .given(requestIDs.make(from: head.metadata)))
        if let admission = grpcMethod.admission {
            do throws(GRPCStatus) {
                context.admission = try admission(context)
            } catch {
                return refusal(ConnectProtocol.httpStatus(error.code), error)
            }
        }
        let limit = min(maxMessageSize, grpcMethod.maxRequestMessageSize ?? .max)
        let bodyLimit = head.shape == .streaming ? limit + GRPCMessageFramer.prefixSize : limit
        return .connect(head, grpcMethod, context, bodyLimit: bodyLimit)
    }

    /// A Connect error answer.
    static func refusal(_ httpStatus: Int, _ status: GRPCStatus) -> Decision {
        .refuse(
            status: httpStatus, headers: [("content-type", "application/json")], body: ConnectProtocol.errorBody(status)
        )
    }

    /// The body's share of `budget`, for a decision to read one: refused (429) when the declared
    /// `content-length` is over the limit or the budget has no room; nothing is reserved then.
    /// `budgetExceeded` is told of a full budget (for the protection event).
    static func reserveBody(
        _ decision: Decision, declared: String?, budget: GRPCRequestBudget, budgetExceeded: () -> Void
    ) -> (Decision, reserved: Int) {
        let bodyLimit: Int
        switch decision {
        case .connect(_, _, _, let limit), .route(_, let limit): bodyLimit = limit
        case .refuse: return (decision, 0)
        }
        if let length = declared.flatMap({ Int($0) }), length > bodyLimit {
            return (
                overLimit(decision, "the request body of \(length) bytes is over the limit of \(bodyLimit) bytes"), 0
            )
        }
        let wanted = reservation(declared: declared, bodyLimit: bodyLimit)
        guard let full = budget.refusal(reserving: wanted) else { return (decision, wanted) }
        budgetExceeded()
        let message =
            "requests in progress on \(full.owner) already hold \(full.reserved) of its \(full.limit)-byte "
            + "request budget; this body does not fit (send smaller or fewer requests at once)"
        return (overLimit(decision, message, budgetFull: true), 0)
    }

    /// A body that does not fit, in the door's words: Connect's `resource_exhausted` (429), or the
    /// route's own refusal, 413 for a body over the limit and 429 for a full budget (try later).
    static func overLimit(_ decision: Decision, _ message: String, budgetFull: Bool = false) -> Decision {
        guard case .route(let route, _) = decision else {
            return refusal(429, GRPCStatus(.resourceExhausted, message))
        }
        let answer = route.refusal(budgetFull ? 429 : 413, message)
        return .refuse(status: answer.status, headers: answer.headers, body: answer.body)
    }

    /// The body passed `bodyLimit` as it arrived: the door's refusal (``overLimit``).
    static func bodyOverLimit(_ decision: Decision, bodyLimit: Int) -> Decision {
        overLimit(decision, "the request body is over the limit of \(bodyLimit) bytes")
    }

    /// The bytes to reserve in the request budget for a body whose `content-length` is
    /// `declared` (nil: chunked, so up to the limit).
    static func reservation(declared: String?, bodyLimit: Int) -> Int {
        guard let declared, let length = Int(declared), length >= 0 else { return bodyLimit + 1 }
        return min(length, bodyLimit + 1)
    }
}
