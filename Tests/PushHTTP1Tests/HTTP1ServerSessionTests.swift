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

    @Test("bytes that are not HTTP/1.1 get a 400 naming the parser's reason, after the answers before them")
    func garbageIsA400() throws {
        let session = HTTP1ServerSession()
        let recorder = RequestRecorder()
        session.delegate = recorder
        try Self.receive(session, Self.post("/a", "1") + "NOT HTTP AT ALL\r\n\r\n")
        #expect(recorder.requests.map(\.target) == ["/a"])
        #expect(!session.wantsWrite, "the 400 waits for the answer to /a")
        try session.respond(to: 0, status: 200, reason: "OK", headers: [], body: [])
        let written = Self.output(session)
        #expect(written.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(written.contains("HTTP/1.1 400 Bad Request\r\n"))
        #expect(written.contains("Connection: close\r\n"))
        #expect(written.contains("bad request: "))
        #expect(session.failure != nil)
        #expect(!session.wantsRead)
    }

    @Test("a streamed answer goes out in chunks and holds back the answers after it until it ends")
    func streamedAnswer() throws {
        let session = HTTP1ServerSession()
        let recorder = RequestRecorder()
        session.delegate = recorder
        try Self.receive(session, Self.post("/a") + Self.post("/b"))
        try session.respond(to: 1, status: 200, reason: "OK", headers: [], body: Array("b".utf8))
        try session.respondHead(to: 0, status: 200, reason: "OK", headers: [("Content-Type", "x")])
        session.respondChunk(to: 0, Array("hello".utf8))
        var written = Self.output(session)
        #expect(written == "HTTP/1.1 200 OK\r\nContent-Type: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")
        session.respondChunk(to: 0, Array("0123456789abcdefg".utf8))
        session.respondEnd(to: 0)
        written = Self.output(session)
        #expect(written.hasPrefix("11\r\n0123456789abcdefg\r\n0\r\n\r\nHTTP/1.1 200 OK\r\n"))
        #expect(written.hasSuffix("\r\n\r\nb"))
        #expect(session.unanswered == 0)
    }

    @Test("the delegate's body limit for a request, decided from its head, caps what is kept")
    func bodyLimitFromHead() throws {
        final class Limiter: HTTP1ServerSessionDelegate {
            var heads: [String] = []
            var requests: [HTTP1Request] = []
            func http1Session(_ session: HTTP1ServerSession, bodyLimitFor request: HTTP1Request) -> Int {
                heads.append(request.target)
                return request.target == "/small" ? 2 : 100
            }
            func http1Session(_ session: HTTP1ServerSession, didReceive request: HTTP1Request) {
                requests.append(request)
            }
        }
        let session = HTTP1ServerSession()
        let limiter = Limiter()
        session.delegate = limiter
        try Self.receive(session, Self.post("/small", "abcdef") + Self.post("/big", "abcdef"))
        #expect(limiter.heads == ["/small", "/big"])
        #expect(limiter.requests[0].body == Array("abc".utf8))
        #expect(limiter.requests[0].bodyLength == 6)
        #expect(limiter.requests[1].body == Array("abcdef".utf8))
    }

    @Test("backed up once maxUnanswered requests wait for answers, and no longer once one is answered")
    func backedUp() throws {
        let session = HTTP1ServerSession()
        session.maxUnanswered = 2
        let recorder = RequestRecorder()
        session.delegate = recorder
        try Self.receive(session, Self.post("/a"))
        #expect(!session.isBackedUp)
        try Self.receive(session, Self.post("/b"))
        #expect(session.isBackedUp)
        try session.respond(to: 0, status: 200, reason: "OK", headers: [], body: [])
        #expect(!session.isBackedUp)
    }

    @Test("requests pipelined after a Connection: close are dropped uncounted: nothing waits for an answer")
    func afterCloseUncounted() throws {
        let session = HTTP1ServerSession()
        let recorder = RequestRecorder()
        session.delegate = recorder
        try Self.receive(session, Self.post("/a", extra: "Connection: close\r\n") + Self.post("/b") + Self.post("/c"))
        #expect(recorder.requests.map(\.target) == ["/a"])
        #expect(session.unanswered == 1)
        try session.respond(to: 0, status: 200, reason: "OK", headers: [], body: [])
        #expect(session.unanswered == 0 && !session.wantsRead)
    }

    @Test("Expect: 100-continue is answered 100 Continue when the body is wanted and the request is next")
    func expectContinue() throws {
        let session = HTTP1ServerSession()
        let recorder = RequestRecorder()
        session.delegate = recorder
        try Self.receive(session, "POST /a HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n")
        #expect(Self.output(session) == "HTTP/1.1 100 Continue\r\n\r\n")
        try Self.receive(session, "{}")
        #expect(recorder.requests.map(\.body) == [Array("{}".utf8)])
        try Self.receive(session, "POST /b HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n")
        #expect(!session.wantsWrite, "request 0 is not answered yet: no 100 Continue out of order")
    }
}

@Suite("HTTP/1.1 server session: limits inside one read")
struct HTTP1ServerSessionLimitTests {
    /// Answers every request at once, as a health check is.
    final class Answerer: HTTP1ServerSessionDelegate {
        var count = 0
        func http1Session(_ session: HTTP1ServerSession, didReceive request: HTTP1Request) {
            count += 1
            try? session.respond(
                to: request.sequence, status: 200, reason: "OK", headers: [], body: Array(repeating: 0x61, count: 1000))
        }
    }

    @Test("one read of 1,000 pipelined requests starts no more than the limit allows; the rest wait, unparsed")
    func unansweredLimitHoldsInsideOneRead() throws {
        let session = HTTP1ServerSession()
        session.maxUnanswered = 4
        let recorder = RequestRecorder()
        session.delegate = recorder
        let burst = String(repeating: HTTP1ServerSessionTests.post("/x"), count: 1000)
        try HTTP1ServerSessionTests.receive(session, burst)
        #expect(recorder.requests.count == 4)
        #expect(session.isBackedUp)
        #expect(session.heldBytes > 0)
        for sequence in 0..<4 {
            try session.respond(to: sequence, status: 200, reason: "OK", headers: [], body: [])
        }
        #expect(!session.isBackedUp)
        try session.resume()
        #expect(recorder.requests.count == 8)
        #expect(recorder.requests.map(\.sequence) == Array(0..<8))
    }

    @Test("answers given at once stop the reading past maxBufferedAnswerBytes, and it goes on as they drain")
    func answerBytesLimitHoldsInsideOneRead() throws {
        let session = HTTP1ServerSession()
        session.maxBufferedAnswerBytes = 10_000
        let answerer = Answerer()
        session.delegate = answerer
        let burst = String(repeating: "GET /health HTTP/1.1\r\n\r\n", count: 1000)
        try HTTP1ServerSessionTests.receive(session, burst)
        #expect(answerer.count < 12)
        #expect(session.isBackedUp)
        var total = answerer.count
        var rounds = 0
        while session.heldBytes > 0 && rounds < 1000 {
            _ = HTTP1ServerSessionTests.output(session)
            #expect(session.bufferedAnswerBytes == 0)
            try session.resume()
            #expect(session.bufferedAnswerBytes <= 10_000 + 1100)
            total = answerer.count
            rounds += 1
        }
        #expect(total == 1000)
    }

    @Test("the client's end while requests are held comes after them: every held request is answered")
    func endAfterHeld() throws {
        let session = HTTP1ServerSession()
        session.maxUnanswered = 2
        let recorder = RequestRecorder()
        session.delegate = recorder
        try HTTP1ServerSessionTests.receive(session, String(repeating: HTTP1ServerSessionTests.post("/x"), count: 5))
        try session.receiveEnd()
        #expect(session.wantsRead)
        for round in 0..<3 {
            for request in recorder.requests where request.sequence >= round * 2 {
                try session.respond(to: request.sequence, status: 200, reason: "OK", headers: [], body: [])
            }
            _ = HTTP1ServerSessionTests.output(session)
            try session.resume()
        }
        #expect(recorder.requests.count == 5)
        #expect(!session.wantsRead)
    }
}

@Suite("HTTP/1.1 server session: answers before the body")
struct HTTP1ServerSessionEarlyAnswerTests {
    final class Refuser: HTTP1ServerSessionDelegate {
        var handedOver = 0
        func http1Session(_ session: HTTP1ServerSession, bodyLimitFor request: HTTP1Request) -> Int {
            guard request.declaresBody else { return 1 << 20 }
            try? session.respondBeforeBody(status: 401, reason: "Unauthorized", headers: [], body: Array("no".utf8))
            return 0
        }
        func http1Session(_ session: HTTP1ServerSession, didReceive request: HTTP1Request) { handedOver += 1 }
    }

    @Test("a refusal at the head goes out before the body, says Connection: close, and ends the connection")
    func refusedAtTheHead() throws {
        let session = HTTP1ServerSession()
        let refuser = Refuser()
        session.delegate = refuser
        try HTTP1ServerSessionTests.receive(session, "POST /x HTTP/1.1\r\nContent-Length: 100000\r\n\r\npartial")
        let out = HTTP1ServerSessionTests.output(session)
        #expect(out.hasPrefix("HTTP/1.1 401 Unauthorized\r\n"))
        #expect(out.contains("Connection: close\r\n"))
        #expect(out.hasSuffix("\r\n\r\nno"))
        #expect(!session.wantsRead && !session.wantsWrite)
        #expect(session.unanswered == 0)
        // The rest of the body, and a request after it, are never handed over.
        try HTTP1ServerSessionTests.receive(session, String(repeating: "b", count: 99_993) + "GET / HTTP/1.1\r\n\r\n")
        #expect(refuser.handedOver == 0)
        #expect(HTTP1ServerSessionTests.output(session).isEmpty)
    }

    @Test("a chunked body is refused as it passes the limit, once, not when (if ever) it ends")
    func refusedAsItPassesTheLimit() throws {
        final class Limited: HTTP1ServerSessionDelegate {
            var passed = 0
            func http1Session(_ session: HTTP1ServerSession, bodyLimitFor request: HTTP1Request) -> Int { 10 }
            func http1Session(_ session: HTTP1ServerSession, didReceive request: HTTP1Request) {
                Issue.record("handed over")
            }
            func http1Session(_ session: HTTP1ServerSession, bodyPassedLimitOf request: HTTP1Request) {
                passed += 1
                #expect(request.bodyLength > 10)
                try? session.respondBeforeBody(status: 413, reason: "Too Large", headers: [], body: [])
            }
        }
        let session = HTTP1ServerSession()
        let limited = Limited()
        session.delegate = limited
        try HTTP1ServerSessionTests.receive(
            session, "POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n8\r\n12345678\r\n")
        #expect(limited.passed == 0)
        try HTTP1ServerSessionTests.receive(session, "8\r\n12345678\r\n8\r\n12345678\r\n")
        #expect(limited.passed == 1)
        #expect(HTTP1ServerSessionTests.output(session).hasPrefix("HTTP/1.1 413 Too Large\r\n"))
        try HTTP1ServerSessionTests.receive(session, "8\r\n12345678\r\n0\r\n\r\n")
        #expect(limited.passed == 1)
        #expect(!session.wantsRead)
    }

    @Test("declaresBody: a non-zero Content-Length or any Transfer-Encoding")
    func declaresBody() {
        var request = HTTP1Request()
        #expect(!request.declaresBody)
        request.headers = [("content-length", "0")]
        #expect(!request.declaresBody)
        request.headers = [("content-length", "12")]
        #expect(request.declaresBody)
        request.headers = [("transfer-encoding", "chunked")]
        #expect(request.declaresBody)
    }
}

@Suite("HTTP/1.1 server session: what the review found")
struct HTTP1ServerSessionReviewTests {
    @Test("the client's end in the middle of a body refused before it ends is no error: earlier answers still go out")
    func endAfterEarlyAnswer() throws {
        final class SlowThenRefuse: HTTP1ServerSessionDelegate {
            func http1Session(_ session: HTTP1ServerSession, bodyLimitFor request: HTTP1Request) -> Int {
                guard request.target == "/refused" else { return 1 << 20 }
                try? session.respondBeforeBody(status: 401, reason: "Unauthorized", headers: [], body: [])
                return 0
            }
            func http1Session(_ session: HTTP1ServerSession, didReceive request: HTTP1Request) {}
        }
        let session = HTTP1ServerSession()
        let delegate = SlowThenRefuse()
        session.delegate = delegate
        try HTTP1ServerSessionTests.receive(
            session, HTTP1ServerSessionTests.post("/slow") + "POST /refused HTTP/1.1\r\nContent-Length: 9999\r\n\r\nab")
        try session.receiveEnd()
        #expect(session.wantsRead, "the slow request's answer is still owed")
        #expect(session.writableAnswerBytes == 0, "the refusal waits behind it: nothing the client could take yet")
        #expect(session.bufferedAnswerBytes > 0)
        try session.respond(to: 0, status: 200, reason: "OK", headers: [], body: [])
        let out = HTTP1ServerSessionTests.output(session)
        #expect(out.hasPrefix("HTTP/1.1 200 OK\r\n") && out.contains("HTTP/1.1 401 Unauthorized\r\n"))
        #expect(!session.wantsRead && !session.wantsWrite)
    }

    @Test("keep-alive is the head's: a trailer cannot end the connection, nor keep an HTTP/1.0 one open")
    func keepAliveFromTheHead() throws {
        let session = HTTP1ServerSession()
        let recorder = RequestRecorder()
        session.delegate = recorder
        try HTTP1ServerSessionTests.receive(
            session, "POST /a HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\nX-Keep: alive\r\n\r\n")
        #expect(recorder.requests.count == 1)
        try session.respond(to: 0, status: 200, reason: "OK", headers: [], body: [])
        #expect(HTTP1ServerSessionTests.output(session).contains("Connection: close\r\n"))
        #expect(!session.wantsRead)
    }
}
