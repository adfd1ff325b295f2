// Fuzzes the HTTP/1.1 door of the gRPC port: bytes (fed in chunks whose sizes the first two bytes
// seed) go into an HTTP1ServerSession as a client's would; each request it hands over goes through
// Connect's head and body decoding (ConnectRequestProbe: gzip bounded by a small limit, JSON
// parsed) and is answered at once, as the server answers.
//
// Invariants: no crash; every request read gets one answer, in order (pipelined or not), and bytes
// that are not HTTP/1.1 get one 400 after them; the output is HTTP/1.1 answers only; a decoded
// message is never over the limit; whatever decoding reserved in the request budget is given back.
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

    func http1Session(_ session: HTTP1ServerSession, bodyLimitFor request: HTTP1Request) -> Int {
        heads += 1
        return maxMessageSize + 5
    }

    func http1Session(_ session: HTTP1ServerSession, didReceive request: HTTP1Request) {
        requests += 1
        let outcome = ConnectRequestProbe.probe(
            method: request.method, target: request.target, headers: request.headers, body: request.body,
            bodyLength: request.bodyLength, maxMessageSize: maxMessageSize, budget: budget)
        if let message = outcome.message {
            fuzzCheck(message.count <= maxMessageSize + 5, "a message of \(message.count) bytes past the limit")
        }
        fuzzCheck(budget.reserved == 0, "\(budget.reserved) bytes left reserved")
        let body = outcome.message ?? Array((outcome.error?.message ?? "").utf8)
        do throws(HTTP1Error) {
            try session.respond(
                to: request.sequence, status: outcome.httpStatus, reason: "R",
                headers: [("content-type", "application/json")], body: body)
        } catch {
            fuzzCheck(false, "respond failed: \(error)")
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafeRawPointer, _ count: Int) -> CInt {
    var input = FuzzInput(data, count)
    var seed = UInt16(input.byte()) << 8 | UInt16(input.byte())
    let rest = Array(input.rest())
    let session = HTTP1ServerSession(maxBodyBytes: maxMessageSize)
    let door = Door()
    session.delegate = door
    var output: [UInt8] = []
    var start = 0
    while start < rest.count {
        seed = seed &* 31 &+ 7
        let end = min(rest.count, start + 1 + Int(seed % 97))
        let chunk = Array(rest[start..<end])
        chunk.withUnsafeBytes { try? session.receive($0) }
        session.drainOutput(into: &output, maxBytes: .max)
        start = end
    }
    try? session.receiveEnd()
    session.drainOutput(into: &output, maxBytes: .max)
    fuzzCheck(door.requests <= door.heads, "\(door.requests) requests from \(door.heads) heads")
    let answers = door.requests + (session.failure != nil ? 1 : 0)
    fuzzCheck(session.unanswered == 0, "\(session.unanswered) requests unanswered")
    fuzzCheck(output.isEmpty == (answers == 0), "\(answers) answers, \(output.count) bytes out")
    if !output.isEmpty {
        fuzzCheck(output.starts(with: Array("HTTP/1.1 ".utf8)), "output that is not an HTTP/1.1 answer")
    }
    return 0
}
