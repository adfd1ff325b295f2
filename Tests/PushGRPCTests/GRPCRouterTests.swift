import PushHTTP2
import Testing

@testable import PushGRPC

@Suite("gRPC routing and request heads")
struct GRPCRouterTests {
    let router = GRPCRouter(services: [
        GRPCService(name: "a.B", methods: [.unary("Call") { bytes, _ in bytes }])
    ])

    @Test("routes by exact, case-sensitive path")
    func routes() {
        #expect(router.method(forPath: "/a.B/Call") != nil)
        #expect(router.method(forPath: "/a.B/call") == nil)
        #expect(router.method(forPath: "/a.b/Call") == nil)
        #expect(router.route(forPath: "/a.B/Call")?.path == "/a.B/Call")
    }

    @Test("a head read with the router has its route, the same object for every call")
    func routeOfHead() {
        let headers = [
            HTTP2Header(":method", "POST"), HTTP2Header(":path", "/a.B/Call"),
            HTTP2Header("content-type", "application/grpc"),
        ]
        let first = GRPCRequestHead(headers: headers, router: router).route
        #expect(first != nil && first === router.route(forPath: "/a.B/Call"))
        #expect(GRPCRequestHead(headers: [HTTP2Header(":path", "/a.B/Nope")], router: router).route == nil)
    }

    @Test("UNIMPLEMENTED messages say what is unknown")
    func messages() {
        #expect(router.unimplementedMessage(forPath: "/a.B/Nope") == "unknown method Nope of service a.B")
        #expect(router.unimplementedMessage(forPath: "/x.Y/Call") == "unknown service x.Y")
        #expect(router.unimplementedMessage(forPath: "/nonsense").hasPrefix("malformed method path"))
    }
}

@Suite("gRPC request heads")
struct GRPCRequestHeadTests {
    func head(_ pairs: [(String, String)]) -> GRPCRequestHead {
        GRPCRequestHead(headers: pairs.map { HTTP2Header($0.0, $0.1) })
    }

    @Test("reads path, timeout and metadata; pseudo-headers are not metadata")
    func reads() {
        let h = head([
            (":method", "POST"), (":path", "/a.B/C"), (":scheme", "http"), (":authority", "x"),
            ("content-type", "application/grpc+proto"), ("te", "trailers"), ("grpc-timeout", "250m"),
            ("authorization", "Bearer k"),
        ])
        #expect(h.httpRejection == nil)
        #expect(h.path == "/a.B/C")
        #expect(h.timeout == .some(.milliseconds(250)))
        #expect(h.metadata.map(\.name) == ["content-type", "te", "authorization"])
    }

    @Test("an invalid grpc-timeout is told apart from none")
    func invalidTimeout() {
        #expect(head([(":method", "POST"), ("content-type", "application/grpc")]).timeout == nil)
        let bad = head([(":method", "POST"), ("content-type", "application/grpc"), ("grpc-timeout", "soon")])
        #expect(bad.timeout == .some(nil))
    }

    @Test("requests that are not gRPC get an HTTP status")
    func notGRPC() {
        #expect(head([(":method", "GET"), ("content-type", "application/grpc")]).httpRejection == 405)
        #expect(head([(":method", "POST"), ("content-type", "text/plain")]).httpRejection == 415)
        #expect(head([(":method", "POST")]).httpRejection == 415)
    }
}
