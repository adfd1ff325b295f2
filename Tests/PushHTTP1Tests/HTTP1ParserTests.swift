import Testing

@testable import PushHTTP1

/// Records what a parser reads.
final class Recorder: HTTP1ParserDelegate {
    enum Event: Equatable {
        case header(String, String)
        case head(HTTP1Head)
        case body(String)
        case end(keepAlive: Bool)
    }

    var events: [Event] = []

    func http1Header(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
        events.append(.header(String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
    }
    func http1HeadersComplete(_ head: HTTP1Head) { events.append(.head(head)) }
    func http1Body(_ bytes: UnsafeRawBufferPointer) {
        // Pieces joined, so a split read and a whole one compare equal.
        let text = String(decoding: bytes, as: UTF8.self)
        if case .body(let before)? = events.last {
            events[events.count - 1] = .body(before + text)
        } else {
            events.append(.body(text))
        }
    }
    func http1MessageComplete(keepAlive: Bool) { events.append(.end(keepAlive: keepAlive)) }
}

@Suite("HTTP/1.1 parser (libhttp-parser)")
struct HTTP1ParserTests {
    static func parse(_ kind: HTTP1Parser.Kind, _ text: String, splitEvery step: Int? = nil, end: Bool = false) throws
        -> [Recorder.Event]
    {
        let parser = HTTP1Parser(kind)
        let recorder = Recorder()
        parser.delegate = recorder
        let bytes = Array(text.utf8)
        let step = step ?? max(bytes.count, 1)
        var index = 0
        while index < bytes.count {
            let piece = Array(bytes[index..<min(index + step, bytes.count)])
            try piece.withUnsafeBytes { try parser.receive($0) }
            index += step
        }
        if end { try parser.receiveEnd() }
        return recorder.events
    }

    static func response(_ status: Int, keepAlive: Bool = true, minor: Int = 1) -> Recorder.Event {
        .head(HTTP1Head(status: status, method: "", target: "", version: (1, minor), keepAlive: keepAlive))
    }

    static let admAnswer =
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nx-amzn-RequestId: r-1\r\n"
        + "Content-Length: 30\r\n\r\n{\"registrationID\":\"canonical\"}"

    @Test("a Content-Length response, whole or split at every byte, reads the same")
    func contentLength() throws {
        let expected: [Recorder.Event] = [
            .header("Content-Type", "application/json"), .header("x-amzn-RequestId", "r-1"),
            .header("Content-Length", "30"), Self.response(200), .body("{\"registrationID\":\"canonical\"}"),
            .end(keepAlive: true),
        ]
        #expect(try Self.parse(.response, Self.admAnswer) == expected)
        for step in [1, 2, 7] {
            #expect(try Self.parse(.response, Self.admAnswer, splitEvery: step) == expected)
        }
    }

    @Test("a chunked response with an extension and a trailer is de-chunked")
    func chunked() throws {
        let text =
            "HTTP/1.1 400 Bad Request\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "7;ext=1\r\n{\"reaso\r\n" + "10\r\nn\":\"InvalidData\"\r\n" + "1\r\n}\r\n" + "0\r\nX-Trailer: t\r\n\r\n"
        let events = try Self.parse(.response, text, splitEvery: 3)
        #expect(events.contains(Self.response(400)))
        #expect(events.contains(.body("{\"reason\":\"InvalidData\"}")))
        #expect(events.last == .end(keepAlive: true))
    }

    @Test("Connection: close and HTTP/1.0 end keep-alive; HTTP/1.0 keep-alive keeps it")
    func keepAlive() throws {
        let close = try Self.parse(.response, "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
        #expect(close.last == .end(keepAlive: false))
        let old = try Self.parse(.response, "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n")
        #expect(old.last == .end(keepAlive: false))
        let kept = try Self.parse(.response, "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n")
        #expect(kept.contains(Self.response(200, keepAlive: true, minor: 0)))
    }

    @Test("a body that runs until the close completes at the end of input; a cut-off one is an error")
    func untilClose() throws {
        let events = try Self.parse(.response, "HTTP/1.1 503 Service Unavailable\r\n\r\nbusy", end: true)
        #expect(events.suffix(2) == [.body("busy"), .end(keepAlive: false)])
        #expect(throws: HTTP1Error.self) {
            _ = try Self.parse(.response, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", end: true)
        }
        // Between messages, the end is clean.
        _ = try Self.parse(.response, "HTTP/1.1 204 No Content\r\n\r\n", end: true)
    }

    @Test("pipelined requests in one read are read in order, with method, target and body")
    func pipelinedRequests() throws {
        let one =
            "POST /messaging/registrations/a/messages HTTP/1.1\r\nHost: api.amazon.com\r\n"
            + "Content-Length: 2\r\n\r\n{}"
        let two = "POST /auth/o2/token HTTP/1.1\r\nHost: api.amazon.com\r\nContent-Length: 0\r\n\r\n"
        let events = try Self.parse(.request, one + two)
        let heads = events.compactMap { if case .head(let head) = $0 { head } else { nil } }
        #expect(heads.map(\.method) == ["POST", "POST"])
        #expect(heads.map(\.target) == ["/messaging/registrations/a/messages", "/auth/o2/token"])
        #expect(events.contains(.body("{}")))
        #expect(events.filter { $0 == .end(keepAlive: true) }.count == 2)
    }

    @Test("bytes that are not HTTP/1.1 are refused with the library's reason")
    func invalid() throws {
        do {
            _ = try Self.parse(.response, "HTTP/2 200\r\n\r\n")
            Issue.record("accepted")
        } catch {
            #expect((error as? HTTP1Error)?.name.hasPrefix("HPE_") == true, "\(error)")
        }
        #expect(throws: HTTP1Error.self) {
            _ = try Self.parse(.response, "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nx")
        }
        #expect(throws: HTTP1Error.self) { _ = try Self.parse(.request, "GET / HTTP/1.1\r\nBad Header\r\n\r\n") }
    }

    @Test("a head is written with Content-Length; CR or LF in a field is refused")
    func writer() throws {
        var buffer: [UInt8] = []
        try HTTP1Writer.requestHead(
            method: "POST", target: Array("/x".utf8),
            headers: [("Host", "api.amazon.com"), ("Accept", "application/json")],
            contentLength: 2, into: &buffer)
        #expect(
            String(decoding: buffer, as: UTF8.self)
                == "POST /x HTTP/1.1\r\nHost: api.amazon.com\r\nAccept: application/json\r\nContent-Length: 2\r\n\r\n")
        // What is written parses back.
        let events = try Self.parse(.request, String(decoding: buffer, as: UTF8.self) + "{}")
        #expect(events.contains(.body("{}")))
        #expect(throws: HTTP1Error.self) {
            try HTTP1Writer.requestHead(
                method: "POST", target: Array("/x".utf8), headers: [("X", "a\r\nInjected: 1")], contentLength: 0,
                into: &buffer)
        }
        #expect(throws: HTTP1Error.self) {
            try HTTP1Writer.requestHead(
                method: "POST", target: Array("/x HTTP/1.1\r\n".utf8), headers: [], contentLength: 0, into: &buffer)
        }
        var response: [UInt8] = []
        try HTTP1Writer.responseHead(status: 200, reason: "OK", headers: [], contentLength: 0, into: &response)
        #expect(try Self.parse(.response, String(decoding: response, as: UTF8.self)).last == .end(keepAlive: true))
    }
}
