// Fuzzes the HTTP/1.1 door of the gRPC port: bytes (fed in chunks whose sizes the first two bytes
// seed) go into an HTTP1ServerSession as a client's would; each request it hands over goes through
// Connect's head and body decoding (ConnectRequestProbe: gzip bounded by a small limit, JSON
// parsed) and is answered at once, as the server answers.
//
// Answers are given at once or later (the seed decides), so pipelined requests back the session
// up (``HTTP1ServerSession/maxUnanswered`` is small here) and its held bytes are resumed as the
// answers drain, as the transport does.
//
// Invariants: no crash; every request read gets one answer, in order (pipelined or not), and bytes
// that are not HTTP/1.1 get one 400 after them; the output is HTTP/1.1 answers only; a decoded
// message is never over the limit; whatever decoding reserved in the request budget is given back;
// never more requests unanswered than the limit; every header a request carries has a token for
// a name (a trailer or a folded line never becomes one).
import FuzzSupport
import PushCore
import PushGRPC
import PushHTTP1

@_cdecl("connect_http1_main")
func connectHTTP1Main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzz)
}

let maxMessageSize = 4096

final class Door: HTTP1ServerSessionDelegate {
    let budget = GRPCRequestBudget(limit: 1 << 20, owner: "fuzz")
    var requests = 0
    var heads = 0
    /// Answer later: the requests wait here until the driver answers them.
    var deferAnswers = false
    var waiting: [(sequence: Int, status: Int, body: [UInt8])] = []

    func http1Session(_ session: HTTP1ServerSession, bodyLimitFor request: HTTP1Request) -> Int {
        heads += 1
        return maxMessageSize + 5
    }

    func http1Session(_ session: HTTP1ServerSession, didReceive request: HTTP1Request) {
        requests += 1
        fuzzCheck(session.unanswered <= session.maxUnanswered, "\(session.unanswered) requests unanswered")
        for (name, _) in request.headers {
            fuzzCheck(
                !name.isEmpty && name.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ":") },
                "a header named \(name.debugDescription)")
        }
        let outcome = ConnectRequestProbe.probe(
            method: request.method, target: request.target, headers: request.headers, body: request.body,
            bodyLength: request.bodyLength, maxMessageSize: maxMessageSize, budget: budget)
        if let message = outcome.message {
            fuzzCheck(message.count <= maxMessageSize + 5, "a message of \(message.count) bytes past the limit")
        }
        fuzzCheck(budget.reserved == 0, "\(budget.reserved) bytes left reserved")
        let body = outcome.message ?? Array((outcome.error?.message ?? "").utf8)
        waiting.append((request.sequence, outcome.httpStatus, body))
        if !deferAnswers { answerAll(session) }
    }

    func answerAll(_ session: HTTP1ServerSession) {
        for answer in waiting {
            do throws(HTTP1Error) {
                try session.respond(
                    to: answer.sequence, status: answer.status, reason: "R",
                    headers: [("content-type", "application/json")], body: answer.body)
            } catch {
                fuzzCheck(false, "respond failed: \(error)")
            }
        }
        waiting.removeAll()
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafeRawPointer, _ count: Int) -> CInt {
    var input = FuzzInput(data, count)
    var seed = UInt16(input.byte()) << 8 | UInt16(input.byte())
    let rest = Array(input.rest())
    let session = HTTP1ServerSession(maxBodyBytes: maxMessageSize)
    session.maxUnanswered = 3
    session.maxBufferedAnswerBytes = 8192
    let door = Door()
    session.delegate = door
    var output: [UInt8] = []
    /// What the transport does after a flush: answers out, then what was held.
    func drainAndResume() {
        var rounds = 0
        repeat {
            door.answerAll(session)
            session.drainOutput(into: &output, maxBytes: .max)
            try? session.resume()
            rounds += 1
        } while session.heldBytes > 0 && !session.isBackedUp && rounds < 10_000
    }
    var start = 0
    while start < rest.count {
        seed = seed &* 31 &+ 7
        door.deferAnswers = seed % 3 == 0
        let end = min(rest.count, start + 1 + Int(seed % 97))
        let chunk = Array(rest[start..<end])
        chunk.withUnsafeBytes { try? session.receive($0) }
        if !door.deferAnswers || session.isBackedUp { drainAndResume() }
        start = end
    }
    door.deferAnswers = false
    drainAndResume()
    try? session.receiveEnd()
    drainAndResume()
    fuzzCheck(session.heldBytes == 0, "\(session.heldBytes) bytes held at the end")
    fuzzCheck(door.requests <= door.heads, "\(door.requests) requests from \(door.heads) heads")
    let answers = door.requests + (session.failure != nil ? 1 : 0)
    fuzzCheck(session.unanswered == 0, "\(session.unanswered) requests unanswered")
    fuzzCheck(output.isEmpty == (answers == 0), "\(answers) answers, \(output.count) bytes out")
    if !output.isEmpty {
        fuzzCheck(output.starts(with: Array("HTTP/1.1 ".utf8)), "output that is not an HTTP/1.1 answer")
    }
    return 0
}
