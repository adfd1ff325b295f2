// Fuzzes what makes an error message safe to send and log: the capped percent-encoding of
// `grpc-message` and TextCap. The first two bytes pick the byte limit, the rest is the text
// (invalid UTF-8 becomes U+FFFD, as a Swift String from a client's bytes would).
//
// Invariants: the encoded form fits the limit (or is the ellipsis alone when even that does not
// fit); decoding gives the text itself when nothing was cut, else a prefix of it made of whole
// characters followed by the ellipsis; TextCap.prefix keeps whole characters within its limit.
import FuzzSupport
import PushCore

@_cdecl("grpc_message_main")
func grpcMessageMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzz)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    var input = FuzzInput(start, count)
    let limit = Int(input.byte()) << 4 | Int(input.byte() & 0x0f)
    let text = String(decoding: input.rest(), as: UTF8.self)
    let ellipsisEncoded = GRPCPercentEncoding.encode(TextCap.ellipsis)

    let encoded = GRPCPercentEncoding.encode(text, maxBytes: limit)
    fuzzCheck(
        encoded.utf8.count <= max(limit, ellipsisEncoded.utf8.count),
        "encoded \(encoded.utf8.count) bytes over the limit \(limit)")
    let decoded = GRPCPercentEncoding.decode(encoded)
    if encoded == GRPCPercentEncoding.encode(text) {
        fuzzCheck(decoded == text, "an uncut message does not decode to itself")
    } else {
        fuzzCheck(decoded.hasSuffix(TextCap.ellipsis), "a cut message lacks the ellipsis")
        fuzzCheck(text.hasPrefix(decoded.dropLast()), "a cut message is not a prefix of the text")
    }

    let cut = TextCap.prefix(text, maxBytes: limit)
    if text.utf8.count <= limit {
        fuzzCheck(cut == text, "TextCap.prefix changed a text within its limit")
    } else {
        fuzzCheck(cut.hasSuffix(TextCap.ellipsis), "TextCap.prefix cut without the ellipsis")
        fuzzCheck(text.hasPrefix(cut.dropLast()), "TextCap.prefix is not a prefix")
        fuzzCheck(cut.utf8.count <= max(limit, TextCap.ellipsis.utf8.count), "TextCap.prefix over its limit")
    }
    return 0
}
