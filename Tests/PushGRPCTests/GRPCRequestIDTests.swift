import Testing

@testable import PushGRPC
@testable import PushHTTP2

@Suite("gRPC request ids and header strings")
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

    @Test("header strings: the same for plain fields as for received, shared ones")
    func headerStrings() {
        var strings = GRPCHeaderStrings()
        let plain = HTTP2Header(":path", "/pushgate.v1.Push/Send")
        #expect(strings.name(plain) == ":path")
        #expect(strings.value(plain) == "/pushgate.v1.Push/Send")
        // Fields as a session receives them (shared arrays) are covered through GRPCRequestHead
        // by the interop tests; here, many different values never return a stale string.
        for index in 0..<100 {
            let header = HTTP2Header("x-n", "value-\(index)")
            #expect(strings.value(header) == "value-\(index)")
        }
    }

    @Test("header strings of shared arrays are remembered by identity, past the ring's capacity too")
    func sharedStrings() {
        var strings = GRPCHeaderStrings()
        func shared(_ value: String) -> HTTP2Header {
            var header = HTTP2Header(":path", value)
            header.isInterned = true
            return header
        }
        let send = shared("/pushgate.v1.Push/Send")
        #expect(strings.value(send) == "/pushgate.v1.Push/Send")
        #expect(strings.value(send) == "/pushgate.v1.Push/Send")
        #expect(strings.name(send) == ":path")
        let many = (0..<(GRPCHeaderStrings.capacity + 8)).map { shared("/svc/M\($0)") }
        for _ in 0..<2 {
            for (index, header) in many.enumerated() { #expect(strings.value(header) == "/svc/M\(index)") }
        }
        #expect(strings.value(send) == "/pushgate.v1.Push/Send")
    }
}
