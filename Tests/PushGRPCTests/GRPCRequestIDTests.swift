import Testing

@testable import PushGRPC
@testable import PushHTTP2

@Suite("gRPC request ids and the head reader")
struct GRPCRequestIDTests {
    @Test("made-up ids are 16 lowercase hex digits and differ from call to call")
    func madeUp() {
        var ids = GRPCRequestID()
        let made = (0..<1000).map { _ in ids.make(from: []) }
        #expect(Set(made).count == 1000)
        #expect(
            made.allSatisfy {
                $0.utf8.count == 16 && $0.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
            })
        #expect(GRPCRequestID.hex(0x0123_4567_89ab_cdef) == "0123456789abcdef")
        #expect(GRPCRequestID.hex(1) == "0000000000000001")
    }

    @Test("a usable x-request-id is kept; an unusable one is replaced")
    func given() {
        var ids = GRPCRequestID()
        #expect(ids.make(from: [("x-request-id", "abc-123")]) == "abc-123")
        #expect(ids.make(from: [("x-request-id", "has space")]) != "has space")
        #expect(ids.make(from: [("x-request-id", String(repeating: "a", count: 65))]).utf8.count == 16)
    }

    @Test("the head reader: a repeated block gives the same head; a changed field is read anew")
    func headReader() {
        let reader = GRPCRequestHeadReader()
        func head(_ pairs: [(String, String)]) -> GRPCRequestHead {
            reader.read(pairs.map { HTTP2Header($0.0, $0.1) }, streamID: 1)
            return reader.head(router: nil)
        }
        let base = [
            (":method", "POST"), (":path", "/a.B/C"), ("content-type", "application/grpc"), ("te", "trailers"),
            ("authorization", "Bearer one"), ("grpc-timeout", "1S"),
        ]
        for _ in 0..<2 {
            let h = head(base)
            #expect(h.path == "/a.B/C" && h.httpRejection == nil && h.timeout == .some(.seconds(1)))
            #expect(h.metadata.map(\.value) == ["application/grpc", "trailers", "Bearer one"])
        }
        var changed = base
        changed[4].1 = "Bearer two"
        changed[5].1 = "5m"
        let h = head(changed)
        #expect(h.metadata.map(\.value) == ["application/grpc", "trailers", "Bearer two"])
        #expect(h.timeout == .some(.milliseconds(5)))
        // A shorter block, then one that is not gRPC, then the first again.
        #expect(head(Array(base.prefix(3))).metadata.map(\.name) == ["content-type"])
        reader.read([HTTP2Header(":method", "GET"), HTTP2Header(":path", "/health")], streamID: 3)
        #expect(!reader.isGRPC)
        #expect(reader.headers == [HTTP2Header(":method", "GET"), HTTP2Header(":path", "/health")])
        #expect(head(base).metadata.map(\.value) == ["application/grpc", "trailers", "Bearer one"])
        #expect(head(base + [("x-request-id", "r1"), ("x-request-id", "r2")]).requestID == "r1")
        // Blocks longer than the places kept are read whole each time.
        let long = base + (0..<(GRPCRequestHeadReader.keptFields + 10)).map { ("x-n\($0)", "v\($0)") }
        for _ in 0..<2 {
            let metadata = head(long).metadata
            #expect(metadata.count == 3 + GRPCRequestHeadReader.keptFields + 10)
            #expect(metadata.last?.value == "v\(GRPCRequestHeadReader.keptFields + 9)")
        }
        #expect(head(base).metadata.count == 3)
    }
}
