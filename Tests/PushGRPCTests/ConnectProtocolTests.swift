import PushCore
import PushGzip
import PushSync
import Testing

@testable import PushGRPC

@Suite("Connect protocol: heads, errors, envelopes, bodies")
struct ConnectProtocolTests {
    static func head(
        _ headers: [(String, String)], method: String = "POST", path: String = "/a.B/Call"
    ) throws(ConnectRequestHead.Refusal) -> ConnectRequestHead {
        try ConnectRequestHead(method: method, path: path, headers: headers.map { (name: $0.0, value: $0.1) })
    }

    static func refusal(_ headers: [(String, String)], method: String = "POST") -> ConnectRequestHead.Refusal? {
        do throws(ConnectRequestHead.Refusal) {
            _ = try head(headers, method: method)
            return nil
        } catch {
            return error
        }
    }

    @Test("content types choose the shape and the codec; parameters and case do not matter")
    func contentTypes() throws {
        #expect(ConnectProtocol.contentType("application/json")! == (.unary, .json))
        #expect(ConnectProtocol.contentType("Application/JSON; charset=utf-8")! == (.unary, .json))
        #expect(ConnectProtocol.contentType("application/proto")! == (.unary, .proto))
        #expect(ConnectProtocol.contentType("application/connect+json")! == (.streaming, .json))
        #expect(ConnectProtocol.contentType("application/connect+proto")! == (.streaming, .proto))
        #expect(ConnectProtocol.contentType("application/grpc") == nil)
        #expect(ConnectProtocol.contentType("text/plain") == nil)
        #expect(ConnectProtocol.contentType("") == nil)
    }

    @Test("an unknown or missing content type is 415, a method other than POST 405")
    func refusedHeads() {
        #expect(Self.refusal([("content-type", "text/plain")])?.httpStatus == 415)
        #expect(Self.refusal([])?.httpStatus == 415)
        #expect(Self.refusal([("content-type", "application/json")], method: "GET")?.httpStatus == 405)
        #expect(
            Self.refusal([("content-type", "application/json"), ("connect-protocol-version", "2")])?.httpStatus == 400)
        #expect(Self.refusal([("content-type", "application/json"), ("connect-protocol-version", "1")]) == nil)
    }

    @Test("Connect-Timeout-Ms: 1 to 10 digits, positive; anything else is invalid_argument 400")
    func timeouts() throws {
        #expect(ConnectProtocol.timeout("1") == .milliseconds(1))
        #expect(ConnectProtocol.timeout("9999999999") == .milliseconds(9_999_999_999))
        for bad in ["", "0", "-1", "1.5", "12345678901", " 5", "5s", "0x10"] {
            #expect(ConnectProtocol.timeout(bad) == nil, "\(bad)")
        }
        let head = try Self.head([("content-type", "application/json"), ("connect-timeout-ms", "2500")])
        #expect(head.timeout == .milliseconds(2500))
        let refused = Self.refusal([("content-type", "application/json"), ("connect-timeout-ms", "soon")])
        #expect(refused?.httpStatus == 400)
        #expect(refused?.status.code == .invalidArgument)
        #expect(refused?.status.message.contains("connect-timeout-ms") == true)
    }

    @Test("encodings: unary reads Content-Encoding, streaming Connect-Content-Encoding; others are unimplemented")
    func encodings() throws {
        let gzipUnary = try Self.head([("content-type", "application/json"), ("content-encoding", "gzip")])
        #expect(gzipUnary.compression.encoding == .gzip)
        #expect(gzipUnary.compression.acceptsGzip, "without Accept-Encoding the client takes what it sent")
        let identity = try Self.head([
            ("content-type", "application/json"), ("content-encoding", "gzip"), ("accept-encoding", "identity"),
        ])
        #expect(!identity.compression.acceptsGzip)
        let streaming = try Self.head([
            ("content-type", "application/connect+proto"), ("content-encoding", "br"),
            ("connect-content-encoding", "gzip"), ("connect-accept-encoding", "br, gzip"),
        ])
        #expect(streaming.shape == .streaming && streaming.compression.encoding == .gzip)
        #expect(streaming.compression.acceptsGzip)
        let br = Self.refusal([("content-type", "application/json"), ("content-encoding", "br")])
        #expect(br?.status.code == .unimplemented && br?.httpStatus == 501)
        #expect(br?.status.message.contains("gzip") == true)
    }

    @Test("metadata keeps the caller's headers and drops what the protocol reads")
    func metadata() throws {
        let head = try Self.head([
            ("content-type", "application/json"), ("authorization", "Bearer k"), ("x-request-id", "r1"),
            ("content-length", "2"), ("connect-timeout-ms", "5"), ("host", "h"),
        ])
        #expect(head.metadata.map(\.name) == ["authorization", "x-request-id"])
    }

    @Test("every code has the spec's HTTP status and snake_case name")
    func statusMapping() {
        let expected: [(GRPCStatusCode, Int, String)] = [
            (.cancelled, 499, "canceled"), (.unknown, 500, "unknown"), (.invalidArgument, 400, "invalid_argument"),
            (.deadlineExceeded, 504, "deadline_exceeded"), (.notFound, 404, "not_found"),
            (.alreadyExists, 409, "already_exists"), (.permissionDenied, 403, "permission_denied"),
            (.resourceExhausted, 429, "resource_exhausted"), (.failedPrecondition, 400, "failed_precondition"),
            (.aborted, 409, "aborted"), (.outOfRange, 400, "out_of_range"), (.unimplemented, 501, "unimplemented"),
            (.internalError, 500, "internal"), (.unavailable, 503, "unavailable"), (.dataLoss, 500, "data_loss"),
            (.unauthenticated, 401, "unauthenticated"),
        ]
        #expect(expected.count == GRPCStatusCode.allCases.count - 1)
        for (code, status, name) in expected {
            #expect(ConnectProtocol.httpStatus(code) == status, "\(code)")
            #expect(ConnectProtocol.codeName(code) == name)
        }
    }

    @Test("error bodies and end-of-stream messages are Connect's JSON")
    func errorJSON() throws {
        let body = ConnectProtocol.errorBody(GRPCStatus(.invalidArgument, "notifications[0].tokens[1]: \"bad\""))
        #expect(
            String(decoding: body, as: UTF8.self)
                == #"{"code":"invalid_argument","message":"notifications[0].tokens[1]: \"bad\""}"#)
        #expect(
            String(decoding: ConnectProtocol.errorBody(GRPCStatus(.unavailable, "")), as: UTF8.self)
                == #"{"code":"unavailable"}"#)
        let ok = ConnectProtocol.endStream(.ok)
        #expect(ok == [0x02, 0, 0, 0, 2] + Array("{}".utf8))
        let failed = ConnectProtocol.endStream(GRPCStatus(.deadlineExceeded, "late"))
        #expect(failed[0] == 0x02)
        let json = Array(failed[5...])
        #expect(Int(failed[4]) == json.count)
        #expect(String(decoding: json, as: UTF8.self) == #"{"error":{"code":"deadline_exceeded","message":"late"}}"#)
        #expect(ConnectProtocol.envelope([1, 2, 3], flags: 1) == [1, 0, 0, 0, 3, 1, 2, 3])
    }

    // MARK: Bodies

    static let echoJSON = GRPCJSONTranscoding(
        request: { bytes throws(GRPCStatus) in
            guard bytes.first == UInt8(ascii: "{") else { throw GRPCStatus(.invalidArgument, "field: not JSON") }
            return Array("binary".utf8)
        },
        response: { bytes throws(GRPCStatus) in bytes })

    static func decode(
        _ body: [UInt8], length: Int? = nil, _ headers: [(String, String)], limit: Int = 100,
        budget: GRPCRequestBudget = GRPCRequestBudget(limit: 1 << 20, owner: "test")
    ) throws -> Result<[UInt8], GRPCStatus> {
        let head = try head(headers)
        var reserved = 0
        do throws(GRPCStatus) {
            let message = try ConnectRequestBody.decode(
                body, bodyLength: length ?? body.count, head: head, maxMessageSize: limit, json: echoJSON,
                budget: budget, reserved: &reserved)
            budget.release(reserved)
            return .success(message)
        } catch {
            return .failure(error)
        }
    }

    @Test("a unary body is the message; JSON goes through the method's transcoding")
    func unaryBodies() throws {
        #expect(try Self.decode([9, 9], [("content-type", "application/proto")]) == .success([9, 9]))
        #expect(
            try Self.decode(Array("{}".utf8), [("content-type", "application/json")]) == .success(Array("binary".utf8)))
        guard case .failure(let bad) = try Self.decode(Array("x".utf8), [("content-type", "application/json")]) else {
            Issue.record("expected a failure")
            return
        }
        #expect(bad.code == .invalidArgument && bad.message == "field: not JSON")
    }

    @Test("over the limit is resource_exhausted, before and after inflation (a gzip bomb costs nothing)")
    func limits() throws {
        guard case .failure(let big) = try Self.decode([1], length: 101, [("content-type", "application/proto")])
        else {
            Issue.record("expected a failure")
            return
        }
        #expect(big.code == .resourceExhausted)
        let bomb = try #require(Gzip.compress([UInt8](repeating: 0, count: 1 << 20), level: 9))
        #expect(bomb.count < 2000)
        let budget = GRPCRequestBudget(limit: 1 << 20, owner: "test")
        guard
            case .failure(let inflated) = try Self.decode(
                bomb, [("content-type", "application/proto"), ("content-encoding", "gzip")], limit: 2000,
                budget: budget)
        else {
            Issue.record("expected a failure")
            return
        }
        #expect(inflated.code == .resourceExhausted)
        #expect(budget.reserved == 0)
        let small = try #require(Gzip.compress(Array("{}".utf8), level: 1))
        #expect(
            try Self.decode(small, [("content-type", "application/json"), ("content-encoding", "gzip")])
                == .success(Array("binary".utf8)))
    }

    @Test("a streaming body is exactly one envelope; its compressed flag needs connect-content-encoding")
    func streamingBodies() throws {
        let streaming = [("content-type", "application/connect+proto")]
        #expect(try Self.decode(ConnectProtocol.envelope([7]), streaming) == .success([7]))
        for bad in [[0, 0, 0], ConnectProtocol.envelope([7]) + ConnectProtocol.envelope([8]), [0, 0, 0, 0, 5, 1]] {
            guard case .failure(let error) = try Self.decode(bad, streaming) else {
                Issue.record("expected a failure for \(bad)")
                continue
            }
            #expect(error.code == .invalidArgument)
        }
        guard case .failure(let flagged) = try Self.decode(ConnectProtocol.envelope([7], flags: 1), streaming) else {
            Issue.record("expected a failure")
            return
        }
        #expect(flagged.code == .internalError)
        let gzipped = try #require(Gzip.compress([7, 7, 7], level: 1))
        #expect(
            try Self.decode(
                ConnectProtocol.envelope(gzipped, flags: 1), streaming + [("connect-content-encoding", "gzip")])
                == .success([7, 7, 7]))
    }
}

@Suite("Connect door: what a request head leads to")
struct ConnectDoorTests {
    let router = GRPCRouter(services: [
        GRPCService(
            name: "a.B",
            methods: [
                GRPCMethod.unary("Call") { bytes, _ in bytes }.transcodingJSON(ConnectProtocolTests.echoJSON),
                GRPCMethod.unary("Binary") { bytes, _ in bytes },
                GRPCMethod.serverStreaming("Watch") { _, _, _ in },
                GRPCMethod.bidirectionalStreaming("Chat") { _, _, _ in },
                GRPCMethod.unary("Keyed") { bytes, _ in bytes }.admitting { context throws(GRPCStatus) in
                    guard context.metadataValue("authorization") == "Bearer k" else {
                        throw GRPCStatus(.unauthenticated, "no key")
                    }
                    return nil
                },
            ])
    ])
    let routes = HTTPRoutes([
        HTTPRoute(path: "/api/push") { _, _ in },
        HTTPRoute(
            path: "/keyed",
            admission: { head in
                head.header("authorization") == "Bearer k" && head.body.isEmpty
                    ? nil : HTTPRouteResponse(status: 401, body: Array("no key".utf8))
            }, handler: { _, _ in }),
    ])

    func decide(_ target: String, _ contentType: String?, method: String = "POST", extra: [(String, String)] = [])
        -> ConnectDoor.Decision
    {
        var requestIDs = GRPCRequestID()
        var headers = contentType.map { [(name: "content-type", value: $0)] } ?? []
        headers += extra.map { (name: $0.0, value: $0.1) }
        return ConnectDoor.decide(
            method: method, target: target, headers: headers, router: router, routes: routes,
            peer: ConnectPeer(address: "127.0.0.1:1", isLoopback: true, isTLS: false), maxMessageSize: 100,
            requestIDs: &requestIDs)
    }

    func refusedStatus(_ decision: ConnectDoor.Decision) -> (Int, String)? {
        guard case .refuse(let status, _, let body) = decision else { return nil }
        return (status, String(decoding: body, as: UTF8.self))
    }

    @Test("unary and server-streaming methods are served; limits include the envelope")
    func served() {
        guard case .connect(let head, _, _, let limit) = decide("/a.B/Call", "application/json") else {
            Issue.record("not served")
            return
        }
        #expect(head.codec == .json && limit == 100)
        guard case .connect(_, _, _, let streamLimit) = decide("/a.B/Watch", "application/connect+proto") else {
            Issue.record("not served")
            return
        }
        #expect(streamLimit == 105)
    }

    @Test("unknown paths 404 (unimplemented), wrong shapes 415, request streams 501, JSON-less methods 415")
    func refused() {
        #expect(refusedStatus(decide("/a.B/Nope", "application/json"))?.0 == 404)
        #expect(refusedStatus(decide("/a.B/Nope", "application/json"))?.1.contains("unimplemented") == true)
        #expect(refusedStatus(decide("/a.B/Call", "application/connect+json"))?.0 == 415)
        #expect(refusedStatus(decide("/a.B/Watch", "application/json"))?.0 == 415)
        #expect(refusedStatus(decide("/a.B/Chat", "application/connect+proto"))?.0 == 501)
        #expect(refusedStatus(decide("/a.B/Binary", "application/json"))?.0 == 415)
        if case .connect = decide("/a.B/Binary", "application/proto") {} else { Issue.record("proto refused") }
    }

    @Test("admission runs on the head: no key is a 401 before any body is read")
    func admission() {
        let refused = refusedStatus(decide("/a.B/Keyed", "application/proto"))
        #expect(refused?.0 == 401)
        #expect(refused?.1 == #"{"code":"unauthenticated","message":"no key"}"#)
        if case .connect = decide("/a.B/Keyed", "application/proto", extra: [("authorization", "Bearer k")]) {
        } else {
            Issue.record("a valid key was refused")
        }
    }

    @Test("plain routes by path (query ignored), 405 for other methods")
    func plainRoutes() {
        if case .route(let route, let limit) = decide("/api/push?x=1", "application/json") {
            #expect(route.path == "/api/push" && limit == 100)
        } else {
            Issue.record("route not found")
        }
        #expect(refusedStatus(decide("/api/push", nil, method: "GET"))?.0 == 405)
    }

    @Test("a route's admission decides on the head, before any body is read")
    func routeAdmission() {
        #expect(refusedStatus(decide("/keyed", "application/json"))! == (401, "no key"))
        if case .route = decide("/keyed", "application/json", extra: [("authorization", "Bearer k")]) {
        } else {
            Issue.record("a valid key was refused")
        }
    }

    @Test("only admitted requests keep the connection busy: keyless calls, keyless routes and refusals never do")
    func busy() {
        #expect(decide("/a.B/Keyed", "application/proto", extra: [("authorization", "Bearer k")]).keepsConnectionBusy)
        #expect(decide("/keyed", "application/json", extra: [("authorization", "Bearer k")]).keepsConnectionBusy)
        #expect(!decide("/a.B/Call", "application/json").keepsConnectionBusy)
        #expect(!decide("/a.B/Watch", "application/connect+proto").keepsConnectionBusy)
        #expect(!decide("/api/push", "application/json").keepsConnectionBusy)
        #expect(!decide("/a.B/Keyed", "application/proto").keepsConnectionBusy)
    }

    @Test(
        "a body over the limit is refused in the door's words: Connect's 429, a route's own 413 (429 for a full budget)"
    )
    func overLimitShapes() {
        let connect = ConnectDoor.bodyOverLimit(decide("/a.B/Call", "application/json"), bodyLimit: 100)
        #expect(refusedStatus(connect)?.0 == 429)
        #expect(refusedStatus(connect)?.1.contains(#""code":"resource_exhausted""#) == true)
        let shaped = HTTPRoute(
            path: "/shaped",
            refusal: { status, message in
                HTTPRouteResponse(status: status, body: Array("{\"code\":\(status),\"message\":\"\(message)\"}".utf8))
            },
            handler: { _, _ in })
        let route = ConnectDoor.bodyOverLimit(.route(shaped, bodyLimit: 100), bodyLimit: 100)
        #expect(refusedStatus(route)?.0 == 413)
        #expect(refusedStatus(route)?.1 == #"{"code":413,"message":"the request body is over the limit of 100 bytes"}"#)
        let declared = ConnectDoor.reserveBody(
            .route(shaped, bodyLimit: 100), declared: "1000", budget: GRPCRequestBudget(limit: 1 << 20, owner: "t")
        ) {}
        #expect(refusedStatus(declared.0)?.0 == 413)
        #expect(refusedStatus(decide("/api/push", "application/json")).map { _ in true } == nil)
    }

    @Test("a route's handler runs inline for a small body, and is handed off the loop for a large one")
    func largeBodiesOffTheLoop() {
        let handled = Locked<[Int]>([])
        let done = Locked(0)
        let route = HTTPRoute(path: "/r") { request, _ in handled.withLock { $0.append(request.body.count) } }
        var handedOff: [@Sendable () -> Void] = []
        for size in [10, RequestDecoding.offLoopBytes, RequestDecoding.offLoopBytes + 1] {
            let request = HTTPRouteRequest(
                method: "POST", target: "/r", headers: [], body: Array(repeating: 0, count: size), peer: "p",
                isLoopbackPeer: true, isTLS: false)
            route.handle(
                request, HTTPRouteResponder { _ in }, offLoop: { handedOff.append($0) },
                handled: { done.withLock { $0 += 1 } })
        }
        #expect(handled.withLock { $0 } == [10, RequestDecoding.offLoopBytes])
        #expect(handedOff.count == 1)
        #expect(done.withLock { $0 } == 2, "the large body's reservation is held until its handler has run")
        for work in handedOff { work() }
        #expect(handled.withLock { $0 } == [10, RequestDecoding.offLoopBytes, RequestDecoding.offLoopBytes + 1])
        #expect(done.withLock { $0 } == 3)
    }

    @Test("a Connect GET, its message in the query, is the documented 405, not a 404")
    func getWithQuery() {
        let refused = refusedStatus(decide("/a.B/Call?encoding=json&message=%7B%7D", nil, method: "GET"))
        #expect(refused?.0 == 405)
        #expect(refusedStatus(decide("/a.B/Nope?encoding=json", nil, method: "GET"))?.0 == 404)
        // A POST with a query is the path's call: its context (metrics, logs) never names the query.
        guard
            case .connect(let head, _, let context, _) = decide(
                "/a.B/Call?x=\(UInt64.random(in: 0...UInt64.max))", "application/json")
        else {
            Issue.record("not served")
            return
        }
        #expect(head.path == "/a.B/Call" && context.path == "/a.B/Call")
    }

    @Test("budget reservations: the declared length within the limit, else the limit and one byte")
    func reservations() {
        #expect(ConnectDoor.reservation(declared: "10", bodyLimit: 100) == 10)
        #expect(ConnectDoor.reservation(declared: "1000", bodyLimit: 100) == 101)
        #expect(ConnectDoor.reservation(declared: nil, bodyLimit: 100) == 101)
        #expect(ConnectDoor.reservation(declared: "x", bodyLimit: 100) == 101)
    }
}
