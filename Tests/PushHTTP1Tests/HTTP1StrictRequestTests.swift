import Testing

@testable import PushHTTP1

/// What RFC 9112 says a server must reject, where libhttp-parser is lenient, and the trailers it
/// hands over as header fields: each a way to smuggle a request past a proxy that reads the bytes
/// otherwise, or one request's field into the next.
@Suite("HTTP/1.1 requests read strictly")
struct HTTP1StrictRequestTests {
    /// Every way of splitting `text` into two reads, and the whole: each must end the same.
    static func everySplit(_ text: String, _ check: (Result<[Recorder.Event], HTTP1Error>) -> Void) {
        let bytes = Array(text.utf8)
        for cut in [bytes.count] + Array(1..<bytes.count) {
            let parser = HTTP1Parser(.request)
            let recorder = Recorder()
            parser.delegate = recorder
            let result = Result { () throws(HTTP1Error) in
                for piece in [Array(bytes[..<cut]), Array(bytes[cut...])] where !piece.isEmpty {
                    let r = piece.withUnsafeBytes { p in Result { () throws(HTTP1Error) in try parser.receive(p) } }
                    try r.get()
                }
                return recorder.events
            }
            check(result)
        }
    }

    static let chunked = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"

    static func errorName(_ result: Result<[Recorder.Event], HTTP1Error>) -> String? {
        if case .failure(let error) = result { return error.name }
        return nil
    }

    @Test(
        "what RFC 9112 and 9110 refuse in a head, a chunk line or trailers is refused, however the reads split it",
        arguments: [
            ("GET / HTTP/1.1\nHost: a\r\n\r\n", "bare_lf"),
            ("GET / HTTP/1.1\r\nHost: a\n\r\n", "bare_lf"),
            ("GET / HTTP/1.1\r\nHost: a\r\n\n", "bare_lf"),
            ("GET / HTTP/1.1\r\nHost: a\rX: b\r\n\r\n", "HPE_LF_EXPECTED"),  // the library's own
            ("GET / HTTP/1.1\r\nHost: a\r\n b\r\n\r\n", "obs_fold"),
            ("GET / HTTP/1.1\r\nHost: a\r\n\tb\r\n\r\n", "obs_fold"),
            // The library refuses some chunk lines itself; either way, refused.
            (chunked + "3\nabc\r\n0\r\n\r\n", "bare_lf|HPE_INVALID_CHUNK_SIZE"),
            (chunked + "3\r\nabc\n0\r\n\r\n", "chunk_end|bare_lf|HPE_INVALID_CHUNK_SIZE"),
            ("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\n", "bare_lf"),
            ("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX: y\n\r\n", "bare_lf"),
            // Chunk data not ended by CRLF, framing fields in trailers, HTTP/0.9 (review).
            (chunked + "3\r\nabcXY0\r\n\r\n", "chunk_end"),
            (chunked + "3\r\nabc\rX0\r\n\r\n", "chunk_end"),
            (chunked + "3\r\nabc\r\n0\r\nConnection: close\r\n\r\n", "framing_trailer"),
            (chunked + "3\r\nabc\r\n0\r\nX: 1\r\ntransfer-encoding: x\r\n\r\n", "framing_trailer"),
            ("GET /\r\nHost: a\r\n\r\n", "http_version|HPE_INVALID_CONSTANT"),
        ])
    func lineEndings(text: String, name: String) {
        Self.everySplit(text) { result in
            let names = name.split(separator: "|").map(String.init)
            #expect(names.contains(Self.errorName(result) ?? "accepted"), "\(text.debugDescription)")
            if case .success(let events) = result { #expect(!events.contains(.end(keepAlive: true))) }
        }
    }

    @Test("a bare LF in the trailers refuses the request before it is handed over, however the reads split (fuzz)")
    func bareLFInTrailers() {
        let text =
            "POST /a HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\ngrant\r\n0 b..\u{01}\u{0e}..1.1\r\n"
            + "Host: bpi\r\nTransfer-Encoding: chu\n\r\n"
        Self.everySplit(text) { result in
            #expect(Self.errorName(result) != nil)
            if case .success(let events) = result { #expect(!events.contains(.end(keepAlive: true))) }
        }
        let parser = HTTP1Parser(.request)
        let recorder = Recorder()
        parser.delegate = recorder
        let refused = Array(text.utf8).withUnsafeBytes { bytes in
            Result { () throws(HTTP1Error) in try parser.receive(bytes) }
        }
        #expect(throws: HTTP1Error.self) { try refused.get() }
        #expect(!recorder.events.contains(.end(keepAlive: true)), "\(recorder.events)")
    }

    @Test("a space before the colon (Transfer-Encoding : chunked) is refused, not taken for the header")
    func spaceBeforeColon() {
        let text = "POST / HTTP/1.1\r\nTransfer-Encoding : chunked\r\nContent-Length: 3\r\n\r\nabc"
        Self.everySplit(text) { result in
            #expect(Self.errorName(result) == "invalid_header_name")
        }
    }

    @Test("line endings inside a body are the body's business: CRLF-free bodies, chunked or not, read whole")
    func bodiesAreNotFraming() {
        let plain = "POST / HTTP/1.1\r\nContent-Length: 7\r\n\r\na\nb\rc \n"
        let chunked = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n\n\r \n\r\n0\r\n\r\n"
        for (text, body) in [(plain, "a\nb\rc \n"), (chunked, "\n\r \n")] {
            Self.everySplit(text) { result in
                guard case .success(let events) = result else {
                    Issue.record("refused: \(result)")
                    return
                }
                #expect(events.contains(.body(body)))
                #expect(events.last == .end(keepAlive: true))
            }
        }
    }

    @Test("a chunked request's trailer fields are dropped: never the request's headers, never the next one's")
    func trailersDropped() {
        let text =
            "POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\nX-One: 1\r\n"
            + "Authorization: Bearer secret\r\n\r\nGET /b HTTP/1.1\r\nHost: h\r\n\r\n"
        Self.everySplit(text) { result in
            guard case .success(let events) = result else {
                Issue.record("refused: \(result)")
                return
            }
            let headers = events.compactMap { event -> String? in
                if case .header(let name, _) = event { return name }
                return nil
            }
            #expect(headers == ["Transfer-Encoding", "Host"])
        }
    }

    @Test("pausing after a message holds the rest unparsed; resuming reads it exactly as one read would")
    func pauseAndResume() throws {
        final class Pauser: HTTP1ParserDelegate {
            var parser: HTTP1Parser?
            var ends = 0
            var targets: [String] = []
            func http1Header(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {}
            func http1HeadersComplete(_ head: HTTP1Head) { targets.append(head.target) }
            func http1Body(_ bytes: UnsafeRawBufferPointer) {}
            func http1MessageComplete(keepAlive: Bool) {
                ends += 1
                parser?.pause()
            }
        }
        let parser = HTTP1Parser(.request)
        let pauser = Pauser()
        pauser.parser = parser
        parser.delegate = pauser
        let one = "POST /1 HTTP/1.1\r\nContent-Length: 2\r\n\r\nab"
        let two = "GET /2 HTTP/1.1\r\n\r\n"
        let three = "POST /3 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n"
        try Array((one + two + three + "GET /4 HT").utf8).withUnsafeBytes { try parser.receive($0) }
        #expect(pauser.ends == 1)
        #expect(parser.heldBytes == (two + three + "GET /4 HT").utf8.count)
        // More bytes while paused wait behind the held ones.
        try Array("TP/1.1\r\n\r\n".utf8).withUnsafeBytes { try parser.receive($0) }
        #expect(pauser.ends == 1)
        try parser.resume()
        #expect(pauser.ends == 2)
        try parser.resume()
        try parser.resume()
        #expect(pauser.ends == 4)
        #expect(pauser.targets == ["/1", "/2", "/3", "/4"])
        #expect(parser.heldBytes == 0)
    }

    @Test("a response is still read leniently: providers' answers are not ours to police")
    func responsesLenient() throws {
        let events = try HTTP1ParserTests.parse(.response, "HTTP/1.1 200 OK\nContent-Length: 2\n\nok")
        #expect(events.contains(.body("ok")))
    }
}
