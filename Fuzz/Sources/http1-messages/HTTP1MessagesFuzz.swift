// Fuzzes HTTP1Parser (libhttp-parser behind PushHTTP1): the input's first byte picks requests or
// responses, the next two seed the sizes of the chunks the rest is fed in (TCP splits anywhere).
//
// Invariants: no crash; fed in chunks, the parser reports exactly what it reports for the whole
// input at once (the same headers, heads, bodies and message ends, and an error where it errs; only
// the headers just before an error and the error's name may differ, see `Transcript.comparable`); a message's body is never longer
// than the input; what follows an error is never parsed.
import FuzzSupport
import PushHTTP1

@_cdecl("http1_messages_main")
func http1MessagesMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzz)
}

/// Everything a parser reported, in order (a body as one piece per message: how the parser splits
/// it may differ between feeds).
final class Transcript: HTTP1ParserDelegate, Equatable {
    enum Event: Equatable {
        case header(String, String)
        case head(HTTP1Head)
        case message(body: [UInt8], keepAlive: Bool)
        case error(String)
    }
    var events: [Event] = []
    private var body: [UInt8] = []

    func http1Header(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
        events.append(.header(String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
    }
    func http1HeadersComplete(_ head: HTTP1Head) { events.append(.head(head)) }
    func http1Body(_ bytes: UnsafeRawBufferPointer) { body.append(contentsOf: bytes) }
    func http1MessageComplete(keepAlive: Bool) {
        events.append(.message(body: body, keepAlive: keepAlive))
        body.removeAll()
    }

    static func == (a: Transcript, b: Transcript) -> Bool { a.comparable == b.comparable }

    /// The events, except the headers reported just before an error: a header is reported once
    /// the next one starts (libhttp-parser has no end-of-value callback), so whether the header
    /// before an invalid one was reported depends on where the input was split.
    ///
    /// Nor the error's name: a request's framing is checked besides the library (bare LF, obs-fold,
    /// a space in a field name: ``HTTP1FramingCheck``), and which of the two sees bad bytes first
    /// can depend on where a read ends, so the same input may be refused under either name.
    var comparable: [Event] {
        guard case .error = events.last else { return events }
        var kept = Array(events.dropLast())
        while case .header = kept.last { kept.removeLast() }
        return kept + [.error("refused")]
    }
}

/// Feeds `chunks` to a new parser of `kind`, then the end of the stream; stops at the first error.
func parse(_ chunks: [ArraySlice<UInt8>], kind: HTTP1Parser.Kind) -> Transcript {
    let transcript = Transcript()
    let parser = HTTP1Parser(kind)
    parser.delegate = transcript
    do throws(HTTP1Error) {
        for chunk in chunks {
            // Copied out: `withUnsafeBytes` rethrows untyped errors.
            let bytes = Array(chunk)
            let pointer = UnsafeMutableRawPointer.allocate(byteCount: max(1, bytes.count), alignment: 1)
            defer { pointer.deallocate() }
            pointer.copyMemory(from: bytes, byteCount: bytes.count)
            try parser.receive(UnsafeRawBufferPointer(start: pointer, count: bytes.count))
        }
        try parser.receiveEnd()
    } catch {
        transcript.events.append(.error(error.name))
    }
    return transcript
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafeRawPointer, _ count: Int) -> CInt {
    var input = FuzzInput(data, count)
    let kind: HTTP1Parser.Kind = input.byte() & 1 == 0 ? .request : .response
    var seed = UInt16(input.byte()) << 8 | UInt16(input.byte())
    let rest = Array(input.rest())

    let whole = parse([rest[...]], kind: kind)
    var chunks: [ArraySlice<UInt8>] = []
    var start = 0
    while start < rest.count {
        seed = seed &* 31 &+ 7
        let end = min(rest.count, start + 1 + Int(seed % 64))
        chunks.append(rest[start..<end])
        start = end
    }
    let chunked = parse(chunks, kind: kind)
    fuzzCheck(whole == chunked, "chunked feed differs: \(whole.events) vs \(chunked.events)")
    for event in whole.events {
        if case .message(let body, _) = event {
            fuzzCheck(body.count <= rest.count, "a body of \(body.count) bytes from \(rest.count) bytes of input")
        }
    }
    if let errorAt = whole.events.firstIndex(where: { if case .error = $0 { true } else { false } }) {
        fuzzCheck(errorAt == whole.events.count - 1, "events after an error: \(whole.events)")
    }
    return 0
}
