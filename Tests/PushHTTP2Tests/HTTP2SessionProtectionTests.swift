import PushHTTP2
import Testing

/// What a server session does against peers that send too much or read too little.
@Suite("HTTP2Session protections")
struct HTTP2SessionProtectionTests {
    @Test("a response block nghttp2 cannot send resets its stream instead of leaving it open")
    func unsendableTrailersResetTheStream() throws {
        let pair = try Pair()
        pair.serverEvents.onEndStream = { session, id in
            // Over nghttp2's 64 KiB limit for a header block it sends: it never goes out.
            let huge = HTTP2Header(name: Array("grpc-message".utf8), value: [UInt8](repeating: 0x61, count: 70_000))
            try session.sendResponseHeaders(
                streamID: id, headers: [HTTP2Header(":status", "200"), huge], endStream: true)
        }
        let id = try pair.client.submitRequest(headers: requestHeaders(path: "/a"), body: [0, 0, 0, 0, 0])
        try pair.interact()
        #expect(pair.serverEvents.notSent == [id])
        #expect(pair.clientEvents.closeCode(of: id) == .internalError)
        #expect(pair.server.openStreamCount == 0)
    }

    @Test("with manual flow control a stream gets no more than its window until its bytes are consumed")
    func manualFlowControlHoldsTheStream() throws {
        var settings = HTTP2Settings.serverDefaults
        settings.manualFlowControl = true
        settings.initialWindowSize = 65_535
        let pair = try Pair(server: settings)
        pair.serverEvents.consumeEachChunk = false
        try pair.interact()
        let id = try pair.client.submitRequest(headers: requestHeaders(path: "/up"), streamingBody: true)
        try pair.client.sendData(streamID: id, [UInt8](repeating: 1, count: 200_000), endStream: true)
        try pair.interact()
        #expect(pair.serverEvents.bodies[id]?.count == 65_535)
        // Returning what arrived lets the rest come.
        for _ in 0..<4 {
            pair.server.consume(streamID: id, bytes: pair.serverEvents.bodies[id]?.count ?? 0)
            pair.serverEvents.bodies[id] = []
            try pair.interact()
        }
        let received = pair.serverEvents.events.reduce(0) { total, event in
            if case .data(let stream, let bytes, _) = event, stream == id { total + bytes.count } else { total }
        }
        #expect(received == 200_000)
    }

    @Test("frames without headers or body bytes are reported one by one (WINDOW_UPDATE, PING, empty DATA)")
    func controlFrames() throws {
        let recorder = Recorder()
        let server = try HTTP2Session(role: .server, settings: .serverDefaults, delegate: recorder)
        var bytes = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8) + [0, 0, 0, 4, 0, 0, 0, 0, 0]
        let windowUpdate: [UInt8] = [0, 0, 4, 8, 0, 0, 0, 0, 0, 0, 0, 0, 1]
        let ping: [UInt8] = [0, 0, 8, 6, 0, 0, 0, 0, 0] + [UInt8](repeating: 0, count: 8)
        for _ in 0..<100 { bytes += windowUpdate }
        bytes += ping
        try server.receive(bytes)
        #expect(recorder.controlFrames == 102)  // SETTINGS, 100 WINDOW_UPDATEs, PING
    }

    @Test("queued and framed body bytes count what the peer has not taken and what it has")
    func unsentBodyTotals() throws {
        var clientSettings = HTTP2Settings.clientDefaults
        clientSettings.initialWindowSize = 0
        let pair = try Pair(client: clientSettings)
        pair.serverEvents.onEndStream = { session, id in
            try session.sendResponseHeaders(streamID: id, headers: [HTTP2Header(":status", "200")], endStream: false)
            try session.sendData(streamID: id, [UInt8](repeating: 7, count: 10_000), endStream: true)
        }
        let id = try pair.client.submitRequest(headers: requestHeaders(path: "/down"), body: nil)
        try pair.interact()
        // A zero window: the body waits in the session.
        #expect(pair.server.queuedBodyBytes == 10_000)
        #expect(pair.server.framedBodyBytes == 0)
        #expect(pair.clientEvents.bodies[id] == nil)
    }
}
