import PushCore
import PushGzip
import PushHTTP2
import Testing

@testable import PushGRPC

/// gRPC message compression without sockets: the headers read, the request messages inflated
/// against the budget, the answers framed.
@Suite("gRPC compression")
struct GRPCCompressionTests {
    private static let large = Array(String(repeating: "a large answer compresses well. ", count: 100).utf8)

    @Test("grpc-encoding and grpc-accept-encoding are read by name and by token")
    func headers() {
        #expect(GRPCCompression.encoding(named: Array("gzip".utf8)) == .gzip)
        #expect(GRPCCompression.encoding(named: Array("GZIP".utf8)) == .gzip)
        #expect(GRPCCompression.encoding(named: Array("identity".utf8)) == .identity)
        #expect(GRPCCompression.encoding(named: []) == .identity)
        #expect(GRPCCompression.encoding(named: Array("deflate".utf8)) == .unsupported("deflate"))
        for accepting in ["identity,deflate,gzip", "gzip", " gzip ", "identity, GZip", "gzip,br"] {
            #expect(GRPCCompression.acceptsGzip(Array(accepting.utf8)), "\(accepting)")
        }
        for refusing in ["", "identity", "identity,deflate", "gzipx", "x-gzip", "g zip", ","] {
            #expect(!GRPCCompression.acceptsGzip(Array(refusing.utf8)), "\(refusing)")
        }
        let head = GRPCRequestHead(
            headers: [
                HTTP2Header(":method", "POST"), HTTP2Header("content-type", "application/grpc"),
                HTTP2Header("grpc-encoding", "gzip"), HTTP2Header("grpc-accept-encoding", "identity,deflate,gzip"),
            ])
        #expect(head.compression == GRPCCompression(encoding: .gzip, acceptsGzip: true))
        #expect(!head.metadata.contains { $0.name.hasPrefix("grpc-") }, "transport headers, not metadata")
    }

    @Test("an unknown grpc-encoding is UNIMPLEMENTED naming it and what is supported")
    func unknownEncoding() throws {
        let refusal = try #require(GRPCCompression(encoding: .unsupported("snappy")).refusal)
        #expect(refusal.code == .unimplemented)
        #expect(refusal.message == "grpc-encoding \"snappy\" is not supported; supported: gzip, identity")
        #expect(GRPCCompression(encoding: .gzip).refusal == nil)
        #expect(GRPCCompression().refusal == nil)
        #expect(GRPCHeaders.responseHeaders.contains(HTTP2Header("grpc-accept-encoding", "gzip")))
    }

    @Test("a compressed flag without grpc-encoding gzip is INTERNAL, and the budget is as it was")
    func flagWithoutEncoding() throws {
        let budget = GRPCRequestBudget(limit: 1 << 20, owner: "this connection")
        #expect(budget.reserve(100))
        var reserved = 100
        let gzipped = try #require(Gzip.compress(Self.large))
        #expect(throws: GRPCStatus.self) {
            try GRPCCompression().inflate(gzipped, maxSize: 1 << 20, budget: budget, reserved: &reserved)
        }
        do {
            _ = try GRPCCompression().inflate(gzipped, maxSize: 1 << 20, budget: budget, reserved: &reserved)
        } catch {
            #expect(error.code == .internalError)
            #expect(error.message.contains("compressed flag"))
        }
        #expect(reserved == 100 && budget.reserved == 100)
    }

    @Test("a gzip message is inflated; the budget then holds its inflated bytes instead of its wire bytes")
    func inflates() throws {
        let budget = GRPCRequestBudget(limit: 1 << 20, owner: "this connection")
        let gzipped = try #require(Gzip.compress(Self.large))
        #expect(budget.reserve(gzipped.count + 5))
        var reserved = gzipped.count + 5
        let bytes = try GRPCCompression(encoding: .gzip).inflate(
            gzipped, maxSize: 1 << 20, budget: budget, reserved: &reserved)
        #expect(bytes == Self.large)
        #expect(reserved >= Self.large.count && reserved == budget.reserved)
        // Corrupt data: INTERNAL, and only the wire bytes stay reserved.
        var corrupt = gzipped
        corrupt[12] ^= 0xff
        var wire = 50
        #expect(budget.reserve(50))
        do {
            _ = try GRPCCompression(encoding: .gzip).inflate(corrupt, maxSize: 1 << 20, budget: budget, reserved: &wire)
            Issue.record("corrupt data inflated")
        } catch {
            #expect(error.code == .internalError)
        }
        #expect(wire == 50 && budget.reserved == reserved + 50)
    }

    @Test("a bomb is RESOURCE_EXHAUSTED at the message limit, holding nothing afterwards")
    func bomb() throws {
        let budget = GRPCRequestBudget(limit: 64 << 20, owner: "this connection")
        let bomb = try #require(Gzip.compress([UInt8](repeating: 0, count: 5_000_000), level: 9))
        var reserved = 0
        do {
            _ = try GRPCCompression(encoding: .gzip).inflate(
                bomb, maxSize: 1 << 20, budget: budget, reserved: &reserved)
            Issue.record("the bomb inflated")
        } catch {
            #expect(error.code == .resourceExhausted)
            #expect(error.message.contains("1048576"))
        }
        #expect(budget.reserved == 0)
    }

    @Test("inflation that does not fit the budget is RESOURCE_EXHAUSTED naming it, and is reported")
    func budgetRefusal() throws {
        let server = GRPCRequestBudget(limit: 40_000, owner: "all connections")
        let budget = GRPCRequestBudget(limit: 1 << 20, owner: "this connection", parent: server)
        let gzipped = try #require(Gzip.compress([UInt8](repeating: 3, count: 100_000)))
        var reserved = 0
        var reported = false
        do {
            _ = try GRPCCompression(encoding: .gzip).inflate(
                gzipped, maxSize: 1 << 20, budget: budget, reserved: &reserved
            ) { reported = true }
            Issue.record("inflated past the budget")
        } catch {
            #expect(error.code == .resourceExhausted)
            #expect(error.message.contains("does not fit in the request budget of all connections (40000 bytes)"))
        }
        #expect(reported && budget.reserved == 0 && server.reserved == 0)
    }

    @Test("answers are compressed only for a client that accepts gzip, and only from 1 KiB on")
    func answers() throws {
        let small = [UInt8](repeating: 1, count: GRPCCompression.minCompressedResponseBytes - 1)
        let accepting = GRPCCompression(acceptsGzip: true)
        #expect(accepting.frame(small) == GRPCMessageFramer.frame(small))
        #expect(GRPCCompression().frame(Self.large) == GRPCMessageFramer.frame(Self.large))
        let framed = accepting.frame(Self.large)
        #expect(framed[0] == 1 && framed.count < Self.large.count / 4)
        #expect(try Gzip.decompress(Array(framed.dropFirst(5)), maxSize: 1 << 20) == Self.large)
        // Incompressible bytes go as they are, even to a client that accepts gzip.
        var random = SystemRandomNumberGenerator()
        let noise = (0..<4_096).map { _ in UInt8.random(in: 0...255, using: &random) }
        #expect(accepting.frame(noise) == GRPCMessageFramer.frame(noise))
    }

    @Test("answers after room for their prefix are framed as answers without it")
    func prefixedAnswers() {
        var random = SystemRandomNumberGenerator()
        let noise = (0..<4_096).map { _ in UInt8.random(in: 0...255, using: &random) }
        let small = [UInt8](repeating: 1, count: GRPCCompression.minCompressedResponseBytes - 1)
        let room = [UInt8](repeating: 0, count: GRPCMessageFramer.prefixSize)
        for compression in [GRPCCompression(), GRPCCompression(acceptsGzip: true)] {
            for message in [[], small, Self.large, noise] {
                #expect(compression.frame(prefixed: room + message) == compression.frame(message))
            }
        }
    }
}
