import Testing

@testable import PushHTTP1

@Suite("HTTP/1.1 client session")
struct HTTP1ClientSessionTests {
    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    static func request(_ session: HTTP1ClientSession, body: String = "{}") throws -> String {
        var head: [UInt8] = []
        try HTTP1Writer.requestHead(
            method: "POST", target: bytes("/messaging/registrations/r1/messages"),
            headers: [("Host", "api.amazon.com")],
            contentLength: body.utf8.count, into: &head)
        bytes(body).withUnsafeBytes { session.send(head: head, body: $0) }
        var out: [UInt8] = []
        session.drainOutput(into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    static func receive(_ session: HTTP1ClientSession, _ text: String) throws {
        try bytes(text).withUnsafeBytes { try session.receive($0) }
    }

    @Test("one request at a time on a kept-alive connection; the answer reaches the delegate")
    func keepAlive() throws {
        let session = HTTP1ClientSession()
        let recorder = Recorder()
        session.delegate = recorder
        #expect(session.canSend && !session.wantsWrite)
        let written = try Self.request(session)
        #expect(written.hasPrefix("POST /messaging/registrations/r1/messages HTTP/1.1\r\nHost: api.amazon.com\r\n"))
        #expect(written.hasSuffix("Content-Length: 2\r\n\r\n{}"))
        #expect(!session.canSend && session.wantsRead && !session.answerStarted)
        try Self.receive(session, "HTTP/1.1 200 OK\r\nx-amzn-RequestId: a\r\n")
        #expect(session.answerStarted)
        try Self.receive(session, "Content-Length: 2\r\n\r\n{}")
        #expect(recorder.events.first == .header("x-amzn-RequestId", "a"))
        #expect(recorder.events.last == .end(keepAlive: true))
        #expect(session.canSend && session.answered == 1 && session.wantsRead)
        _ = try Self.request(session)
        #expect(!session.canSend)
    }

    @Test("Connection: close ends the session after its answer")
    func connectionClose() throws {
        let session = HTTP1ClientSession()
        _ = try Self.request(session)
        try Self.receive(session, "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
        #expect(session.isFinished && !session.canSend && !session.wantsRead && !session.wantsWrite)
    }

    @Test("a 100 Continue before the answer is skipped, its headers too")
    func informational() throws {
        let session = HTTP1ClientSession()
        let recorder = Recorder()
        session.delegate = recorder
        _ = try Self.request(session)
        try Self.receive(
            session,
            "HTTP/1.1 100 Continue\r\nX-Early: 1\r\n\r\nHTTP/1.1 429 Too Many Requests\r\n"
                + "Retry-After: 5\r\nContent-Length: 0\r\n\r\n")
        #expect(
            recorder.events == [
                .header("Retry-After", "5"), .header("Content-Length", "0"),
                .head(HTTP1Head(status: 429, method: "", target: "", version: (1, 1), keepAlive: true)),
                .end(keepAlive: true),
            ])
        #expect(session.answered == 1)
    }

    @Test("bytes no request asked for are an error")
    func unsolicited() throws {
        let session = HTTP1ClientSession()
        #expect(throws: HTTP1Error.self) { try Self.receive(session, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n") }
        let second = HTTP1ClientSession()
        _ = try Self.request(second)
        #expect(throws: HTTP1Error.self) {
            try Self.receive(
                second, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        }
    }

    @Test("a close before any byte of the answer is told apart from one in the middle of it")
    func closeBeforeAndDuring() throws {
        let idle = HTTP1ClientSession()
        _ = try Self.request(idle)
        #expect(!idle.answerStarted)
        try idle.receiveEnd()  // no answer begun: no error, the request can go again elsewhere
        #expect(idle.awaitingAnswer && idle.isFinished)

        let cut = HTTP1ClientSession()
        _ = try Self.request(cut)
        try Self.receive(cut, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{\"a\"")
        #expect(cut.answerStarted)
        #expect(throws: HTTP1Error.self) { try cut.receiveEnd() }
    }
}
