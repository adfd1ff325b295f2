import Testing

@testable import PushHTTP1

final class RequestRecorder: HTTP1ServerSessionDelegate {
    var requests: [HTTP1Request] = []
    func http1Session(_ session: HTTP1ServerSession, didReceive request: HTTP1Request) { requests.append(request) }
}

@Suite("HTTP/1.1 server session")
struct HTTP1ServerSessionTests {
    static func receive(_ session: HTTP1ServerSession, _ text: String) throws {
        try Array(text.utf8).withUnsafeBytes { try session.receive($0) }
    }

    static func output(_ session: HTTP1ServerSession) -> String {
        var out: [UInt8] = []
        session.drainOutput(into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    static func post(_ path: String, _ body: String = "{}", extra: String = "") -> String {
        "POST \(path) HTTP/1.1\r\nHost: api.amazon.com\r\n\(extra)Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
    }

    @Test("pipelined requests are handed over in order and answered in order, whenever answered")
    func pipelinedInOrder() throws {
        let session = HTTP1ServerSession()
        let recorder = RequestRecorder()
        session.delegate = recorder
        try Self.receive(session, Self.post("/a", "1") + Self.post("/b", "22"))
        #expect(recorder.requests.map(\.target) == ["/a", "/b"])
        #expect(recorder.requests.map(\.sequence) == [0, 1])
        #expect(recorder.requests[1].body == Array("22".utf8))
        #expect(recorder.requests[0].headers.first! == ("host", "api.amazon.com"))
        try session.respond(to: 1, status: 200, reason: "OK", headers: [], body: Array("second".utf8))
        #expect(!session.wantsWrite, "the second answer waits for the first")
        try session.respond(to: 0, status: 429, reason: "Too Many Requests", headers: [("Retry-After", "1")], body: [])
        let written = Self.output(session)
        #expect(written.hasPrefix("HTTP/1.1 429 Too Many Requests\r\nRetry-After: 1\r\nContent-Length: 0\r\n\r\n"))
        #expect(written.hasSuffix("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nsecond"))
        #expect(session.wantsRead && session.unanswered == 0)
    }

    @Test("Connection: close from the client, or closeAfter, ends the connection after that answer")
    func closing() throws {
        let session = HTTP1ServerSession()
        let recorder = RequestRecorder()
        session.delegate = recorder
        try Self.receive(session, Self.post("/a", extra: "Connection: close\r\n") + Self.post("/ignored"))
        #expect(recorder.requests.map(\.target) == ["/a"], "nothing after the last request is read")
        try session.respond(to: 0, status: 200, reason: "OK", headers: [], body: [])
        #expect(Self.output(session).contains("Connection: close\r\n"))
        #expect(!session.wantsRead && !session.wantsWrite)

        let other = HTTP1ServerSession()
        other.delegate = recorder
        try Self.receive(other, Self.post("/b"))
        other.closeAfter(sequence: 0)
        try other.respond(to: 0, status: 200, reason: "OK", headers: [], body: [])
        #expect(Self.output(other).contains("Connection: close"))
        #expect(!other.wantsRead)
    }

    @Test("a body over the cap is counted, not kept; the client's close ends the connection after the answers")
    func capAndEnd() throws {
        let session = HTTP1ServerSession(maxBodyBytes: 4)
        let recorder = RequestRecorder()
        session.delegate = recorder
        try Self.receive(session, Self.post("/a", "0123456789"))
        #expect(recorder.requests[0].body.count == 5 && recorder.requests[0].bodyLength == 10)
        try session.receiveEnd()
        #expect(session.wantsRead, "the answer is still owed")
        try session.respond(to: 0, status: 413, reason: "Request Entity Too Large", headers: [], body: [])
        _ = Self.output(session)
        #expect(!session.wantsRead && !session.wantsWrite)
    }
}
