import PushHTTP2
import Testing

@Suite("HTTP2Session in memory")
struct HTTP2SessionTests {
    @Test("a request with a body reaches the server with its headers and body")
    func requestWithBody() throws {
        let pair = try Pair()
        let body = Array("hello, server".utf8)
        let id = try pair.client.submitRequest(headers: requestHeaders(path: "/svc/Method"), body: body)
        try pair.interact()

        let blocks = pair.serverEvents.headerBlocks(on: id)
        #expect(blocks.count == 1)
        let headers = try #require(blocks.first)
        #expect(value(of: ":path", in: headers) == "/svc/Method")
        #expect(value(of: ":method", in: headers) == "POST")
        #expect(value(of: "content-type", in: headers) == "application/grpc")
        #expect(pair.serverEvents.bodies[id] == body)
        #expect(pair.serverEvents.events.last == .data(id, [], endStream: true))
        #expect(pair.serverEvents.hookErrors.isEmpty)
    }

    @Test("response headers, data and trailers arrive at the client in order (gRPC shape)")
    func grpcShapedResponse() throws {
        let pair = try Pair()
        pair.serverEvents.onEndStream = { session, id in
            try session.sendResponseHeaders(
                streamID: id,
                headers: [HTTP2Header(":status", "200"), HTTP2Header("content-type", "application/grpc")],
                endStream: false)
            try session.sendData(streamID: id, [0, 0, 0, 0, 3, 1, 2, 3], endStream: false)
            try session.sendTrailers(streamID: id, headers: [HTTP2Header("grpc-status", "0")])
        }
        let id = try pair.client.submitRequest(headers: requestHeaders(path: "/a"), body: [0, 0, 0, 0, 0])
        try pair.interact()

        #expect(pair.serverEvents.hookErrors.isEmpty)
        #expect(
            pair.clientEvents.streamEvents == [
                .headers(
                    id, [HTTP2Header(":status", "200"), HTTP2Header("content-type", "application/grpc")],
                    endStream: false),
                .data(id, [0, 0, 0, 0, 3, 1, 2, 3], endStream: false),
                .headers(id, [HTTP2Header("grpc-status", "0")], endStream: true),
                .closed(id, .noError),
            ])
        #expect(pair.client.openStreamCount == 0)
        #expect(pair.server.openStreamCount == 0)
    }

    @Test("trailers sent after the body was already flushed still end the stream")
    func trailersAfterFlushedData() throws {
        let pair = try Pair()
        var requestID: Int32 = 0
        pair.serverEvents.onEndStream = { session, id in
            requestID = id
            try session.sendResponseHeaders(streamID: id, headers: [HTTP2Header(":status", "200")], endStream: false)
            try session.sendData(streamID: id, [1, 2, 3], endStream: false)
        }
        let id = try pair.client.submitRequest(headers: requestHeaders(path: "/a"), body: nil)
        try pair.interact()
        #expect(requestID == id)
        #expect(pair.clientEvents.bodies[id] == [1, 2, 3])
        #expect(pair.clientEvents.closeCode(of: id) == nil)

        // The provider is now deferred (queue empty); trailers must resume it.
        try pair.server.sendTrailers(streamID: id, headers: [HTTP2Header("grpc-status", "0")])
        try pair.interact()
        #expect(pair.clientEvents.headerBlocks(on: id).last == [HTTP2Header("grpc-status", "0")])
        #expect(pair.clientEvents.closeCode(of: id) == .noError)
        #expect(pair.clientEvents.bodies[id] == [1, 2, 3])
    }

    @Test("a headers-only response with END_STREAM (Trailers-Only / APNs 200)")
    func headersOnlyResponse() throws {
        let pair = try Pair()
        pair.serverEvents.onEndStream = { session, id in
            try session.sendResponseHeaders(
                streamID: id, headers: [HTTP2Header(":status", "200"), HTTP2Header("apns-id", "abc")], endStream: true)
        }
        let id = try pair.client.submitRequest(headers: requestHeaders(path: "/3/device/aa"), body: Array("{}".utf8))
        try pair.interact()
        #expect(
            pair.clientEvents.streamEvents == [
                .headers(id, [HTTP2Header(":status", "200"), HTTP2Header("apns-id", "abc")], endStream: true),
                .closed(id, .noError),
            ])
        // Headers-only means no body may follow.
        #expect(throws: HTTP2Error.self) { try pair.server.sendData(streamID: id, [1], endStream: true) }
    }

    @Test("100 concurrent requests on one session all complete")
    func hundredConcurrentRequests() throws {
        let pair = try Pair()
        try pair.interact()
        pair.serverEvents.onEndStream = { session, id in
            let body = pair.serverEvents.bodies[id] ?? []
            try session.sendResponseHeaders(streamID: id, headers: [HTTP2Header(":status", "200")], endStream: false)
            try session.sendData(streamID: id, body, endStream: true)
        }
        var ids: [Int32: [UInt8]] = [:]
        for i in 0..<100 {
            let body = Array("request \(i)".utf8)
            ids[try pair.client.submitRequest(headers: requestHeaders(path: "/r/\(i)"), body: body)] = body
        }
        #expect(pair.client.openStreamCount == 100)
        try pair.interact()
        #expect(pair.serverEvents.hookErrors.isEmpty)
        for (id, body) in ids {
            #expect(pair.clientEvents.bodies[id] == body)
            #expect(pair.clientEvents.closeCode(of: id) == .noError)
        }
        #expect(pair.client.openStreamCount == 0)
        #expect(pair.server.openStreamCount == 0)
    }

    @Test("the client sees the server's MAX_CONCURRENT_STREAMS, and a later change")
    func remoteMaxConcurrentStreams() throws {
        var settings = HTTP2Settings.serverDefaults
        settings.maxConcurrentStreams = 7
        let pair = try Pair(server: settings)
        try pair.interact()
        #expect(pair.clientEvents.events.filter { $0 == .settings }.count == 1)
        #expect(pair.client.remoteMaxConcurrentStreams == 7)

        settings.maxConcurrentStreams = 1000
        try pair.server.sendSettings(settings)
        try pair.interact()
        #expect(pair.clientEvents.events.filter { $0 == .settings }.count == 2)
        #expect(pair.client.remoteMaxConcurrentStreams == 1000)
    }

    @Test("requests beyond the peer's limit are held by nghttp2 and sent as streams close")
    func respectsRemoteLimit() throws {
        var settings = HTTP2Settings.serverDefaults
        settings.maxConcurrentStreams = 7
        let pair = try Pair(server: settings)
        try pair.interact()

        var ids: [Int32] = []
        for i in 0..<20 {
            ids.append(try pair.client.submitRequest(headers: requestHeaders(path: "/r/\(i)"), body: [UInt8(i)]))
        }
        // Stream ids are assigned at submission, in order, even for held requests.
        #expect(ids == (0..<20).map { Int32(1 + 2 * $0) })
        try pair.interact()  // the server does not answer yet
        #expect(pair.serverEvents.requestStreamIDs == Array(ids.prefix(7)))

        // Answer the open ones; each close lets one held request out.
        pair.serverEvents.onEndStream = { session, id in
            try session.sendResponseHeaders(streamID: id, headers: [HTTP2Header(":status", "200")], endStream: true)
        }
        for id in ids.prefix(7) {
            try pair.server.sendResponseHeaders(streamID: id, headers: [HTTP2Header(":status", "200")], endStream: true)
        }
        try pair.interact()
        #expect(pair.serverEvents.requestStreamIDs == ids)
        #expect(ids.allSatisfy { pair.clientEvents.closeCode(of: $0) == .noError })
        #expect(pair.serverEvents.hookErrors.isEmpty)
    }

    @Test("resetStream reaches the peer as streamDidClose with that code, both directions")
    func resetStream() throws {
        let pair = try Pair()
        let first = try pair.client.submitRequest(headers: requestHeaders(path: "/stream"), streamingBody: true)
        try pair.interact()
        try pair.server.resetStream(streamID: first, errorCode: .cancel)
        try pair.interact()
        #expect(pair.clientEvents.closeCode(of: first) == .cancel)
        #expect(pair.serverEvents.closeCode(of: first) == .cancel)
        #expect(throws: HTTP2Error.self) { try pair.client.sendData(streamID: first, [1], endStream: true) }

        let second = try pair.client.submitRequest(headers: requestHeaders(path: "/stream"), streamingBody: true)
        try pair.interact()
        try pair.client.resetStream(streamID: second, errorCode: .enhanceYourCalm)
        try pair.interact()
        #expect(pair.serverEvents.closeCode(of: second) == .enhanceYourCalm)
        #expect(pair.client.openStreamCount == 0)
        #expect(pair.server.openStreamCount == 0)
    }

    @Test("goAway reaches the client with last stream id and debug data")
    func goAway() throws {
        let pair = try Pair()
        let id = try pair.client.submitRequest(headers: requestHeaders(path: "/a"), body: nil)
        try pair.interact()
        try pair.server.goAway(errorCode: .enhanceYourCalm, debugData: Array("too many".utf8))
        try pair.interact()
        #expect(
            pair.clientEvents.streamEvents.contains(
                .goAway(lastStreamID: id, .enhanceYourCalm, debugData: Array("too many".utf8))))
        #expect(!pair.client.canSubmitRequests)
    }

    @Test("requests still queued when GOAWAY arrives close with REFUSED_STREAM")
    func queuedRequestsRefusedByGoAway() throws {
        var settings = HTTP2Settings.serverDefaults
        settings.maxConcurrentStreams = 2
        let pair = try Pair(server: settings)
        try pair.interact()
        let ids = try (0..<5).map { i in
            try pair.client.submitRequest(headers: requestHeaders(path: "/r/\(i)"), body: nil)
        }
        try pair.interact()
        #expect(pair.serverEvents.requestStreamIDs == Array(ids.prefix(2)))

        try pair.server.goAway(errorCode: .noError, lastStreamID: ids[1])
        try pair.interact()
        #expect(pair.clientEvents.streamEvents.contains(.goAway(lastStreamID: ids[1], .noError, debugData: [])))
        // nghttp2 keeps the held requests queued while both slots are busy; they are dropped
        // (and reported) only when it next tries to send them, i.e. once a slot frees up.
        #expect(pair.client.openStreamCount == 5)
        for id in ids.prefix(2) {
            try pair.server.sendResponseHeaders(streamID: id, headers: [HTTP2Header(":status", "200")], endStream: true)
        }
        try pair.interact()
        for id in ids.prefix(2) {
            #expect(pair.clientEvents.closeCode(of: id) == .noError)
        }
        for id in ids.dropFirst(2) {
            #expect(pair.clientEvents.closeCode(of: id) == .refusedStream)
        }
        #expect(pair.serverEvents.requestStreamIDs == Array(ids.prefix(2)))
        #expect(pair.client.openStreamCount == 0)
        #expect(!pair.client.wantsRead && !pair.client.wantsWrite)
    }

    @Test("garbage instead of a client preface throws and queues a GOAWAY")
    func garbagePreface() throws {
        let recorder = Recorder()
        let server = try HTTP2Session(role: .server, settings: .serverDefaults, delegate: recorder)
        #expect(throws: HTTP2Error.self) { try server.receive(Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8)) }
        var output: [UInt8] = []
        try server.drainOutput(into: &output)
        let goAways = Frame.parse(output).filter { $0.type == Frame.goAway }
        #expect(goAways.count == 1)
        #expect(goAways.first?.goAwayErrorCode == .protocolError)
        #expect(!server.wantsRead && !server.wantsWrite)
    }

    @Test("a protocol error after a valid preface: nghttp2 answers with GOAWAY and winds down")
    func protocolErrorAfterPreface() throws {
        let recorder = Recorder()
        let server = try HTTP2Session(role: .server, settings: .serverDefaults, delegate: recorder)
        var input = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
        input += [0, 0, 0, 0x4, 0, 0, 0, 0, 0]  // empty SETTINGS
        input += [0, 0, 4, 0x0, 0, 0, 0, 0, 0, 1, 2, 3, 4]  // DATA on stream 0: connection error
        // Not thrown: nghttp2 handles it by terminating the session itself (see receive's docs).
        try server.receive(input)
        var output: [UInt8] = []
        try server.drainOutput(into: &output)
        let goAway = try #require(Frame.parse(output).first { $0.type == Frame.goAway })
        #expect(goAway.goAwayErrorCode == .protocolError)
        #expect(!server.wantsRead && !server.wantsWrite)
    }

    @Test("one body array shared by two requests is received intact by both")
    func sharedBody() throws {
        let pair = try Pair()
        try pair.interact()
        // Several frames' worth, so the shared array is read across multiple DATA frames.
        let body = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let a = try pair.client.submitRequest(headers: requestHeaders(path: "/a"), body: body)
        let b = try pair.client.submitRequest(headers: requestHeaders(path: "/b"), body: body)
        try pair.interact()
        #expect(pair.serverEvents.bodies[a] == body)
        #expect(pair.serverEvents.bodies[b] == body)
    }

    @Test("client streaming: body chunks via sendData, then END_STREAM")
    func clientStreaming() throws {
        let pair = try Pair()
        let id = try pair.client.submitRequest(headers: requestHeaders(path: "/stream"), streamingBody: true)
        try pair.interact()
        #expect(pair.serverEvents.headerBlocks(on: id).count == 1)
        try pair.client.sendData(streamID: id, [1, 2], endStream: false)
        try pair.interact()
        try pair.client.sendData(streamID: id, [3], endStream: false)
        try pair.client.sendData(streamID: id, [4, 5], endStream: true)
        #expect(throws: HTTP2Error.self) { try pair.client.sendData(streamID: id, [6], endStream: true) }
        try pair.interact()
        #expect(pair.serverEvents.bodies[id] == [1, 2, 3, 4, 5])
        #expect(pair.serverEvents.events.last == .data(id, [], endStream: true))
    }

    @Test("a header block over maxHeaderListSize resets the stream with ENHANCE_YOUR_CALM")
    func oversizedHeaders() throws {
        var settings = HTTP2Settings.serverDefaults
        settings.maxHeaderListSize = 1024
        let pair = try Pair(server: settings)
        try pair.interact()
        var headers = requestHeaders(path: "/big")
        headers.append(HTTP2Header(name: Array("x-big".utf8), value: [UInt8](repeating: 0x61, count: 2000)))
        let id = try pair.client.submitRequest(headers: headers, body: nil)
        let ok = try pair.client.submitRequest(headers: requestHeaders(path: "/small"), body: nil)
        try pair.interact()
        #expect(pair.serverEvents.headerBlocks(on: id).isEmpty)
        #expect(pair.clientEvents.closeCode(of: id) == .enhanceYourCalm)
        // The connection survives: the next request is delivered.
        #expect(pair.serverEvents.headerBlocks(on: ok).count == 1)
    }

    @Test("ping is answered and a no-op for the delegates")
    func ping() throws {
        let pair = try Pair()
        try pair.interact()
        try pair.client.ping()
        #expect(pair.client.wantsWrite)
        try pair.interact()
        #expect(pair.clientEvents.streamEvents.isEmpty)
        #expect(pair.serverEvents.streamEvents.isEmpty)
    }

    @Test("receive from inside a delegate callback is refused rather than corrupting nghttp2")
    func reentrancyRefused() throws {
        let pair = try Pair()
        var reentryError: HTTP2Error?
        pair.serverEvents.onHeaders = { session, _, _, _ in
            do throws(HTTP2Error) { try session.receive([0]) } catch { reentryError = error }
        }
        _ = try pair.client.submitRequest(headers: requestHeaders(path: "/a"), body: nil)
        try pair.interact()
        #expect(reentryError != nil)
    }
}

@Suite("HTTP2Session at APNs scale")
struct HTTP2SessionScaleTests {
    @Test("1000 concurrent APNs-shaped requests sharing prebuilt headers and one body")
    func thousandAPNsRequests() throws {
        let pair = try Pair()
        try pair.interact()
        #expect(pair.client.remoteMaxConcurrentStreams == 1000)
        pair.serverEvents.onEndStream = { session, id in
            try session.sendResponseHeaders(streamID: id, headers: [HTTP2Header(":status", "200")], endStream: true)
        }
        // Built once, as the APNs client does; only :path differs per request.
        let common = [
            HTTP2Header(":method", "POST"), HTTP2Header(":scheme", "https"),
            HTTP2Header(":authority", "api.push.apple.com"),
            HTTP2Header("apns-topic", "com.example.app"), HTTP2Header("apns-push-type", "alert"),
        ]
        let pathName = Array(":path".utf8)
        let prefix = Array("/3/device/".utf8)
        let body = Array(#"{"aps":{"alert":"hello"}}"#.utf8)
        var ids: [Int32] = []
        for i in 0..<1000 {
            var headers = common
            // Pseudo-headers must precede regular ones (nghttp2 on the server resets otherwise).
            headers.insert(
                HTTP2Header(name: pathName, value: prefix + Array(String(i, radix: 16).utf8), indexable: false), at: 3)
            ids.append(try pair.client.submitRequest(headers: headers, body: body))
        }
        try pair.interact()
        #expect(pair.serverEvents.hookErrors.isEmpty)
        #expect(pair.serverEvents.requestStreamIDs.count == 1000)
        #expect(
            ids.allSatisfy { pair.serverEvents.bodies[$0] == body && pair.clientEvents.closeCode(of: $0) == .noError })
        #expect(pair.client.openStreamCount == 0)
    }
}

@Suite("HTTP2Session server-side validation")
struct HTTP2SessionValidationTests {
    @Test("a malformed request (pseudo-header after a regular one) is reset, not delivered")
    func malformedRequestReset() throws {
        let pair = try Pair()
        var headers = requestHeaders(path: "/ok")
        headers.append(HTTP2Header(":path", "/late"))
        let id = try pair.client.submitRequest(headers: headers, body: nil)
        try pair.interact()
        #expect(pair.serverEvents.headerBlocks(on: id).isEmpty)
        #expect(pair.clientEvents.closeCode(of: id) == .protocolError)
    }
}
