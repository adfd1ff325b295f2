/// The percent-encoding of the `grpc-message` trailer (gRPC PROTOCOL-HTTP2, "Responses").
///
/// Bytes 0x20–0x7E pass through except `%`; every other UTF-8 byte becomes `%XX` (upper-case hex).
public enum GRPCPercentEncoding {
    /// Encodes `s` for `grpc-message`. Returns `s` itself when nothing needs escaping (the common case).
    public static func encode(_ s: String) -> String {
        let utf8 = s.utf8
        guard utf8.contains(where: needsEscape) else { return s }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count + 16)
        for byte in utf8 {
            if needsEscape(byte) {
                out.append(UInt8(ascii: "%"))
                out.append(hexDigit(byte >> 4))
                out.append(hexDigit(byte & 0x0F))
            } else {
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The longest `grpc-message` Pushgate sends, encoded. grpcio refuses trailers over 8 KiB
    /// (its default metadata limit) with RESOURCE_EXHAUSTED in place of the real status, and
    /// nghttp2 cannot send a header block over 64 KiB at all.
    public static let maxEncodedMessageBytes = 2048

    /// Encodes `s` for `grpc-message`, shortened (on a character boundary, with an ellipsis) so
    /// the encoded form has at most `maxBytes` bytes.
    public static func encode(_ s: String, maxBytes: Int) -> String {
        let encoded = encode(s)
        guard encoded.utf8.count > maxBytes else { return encoded }
        // Each character costs its escaped size; keep whole characters while they fit.
        let ellipsisCost = encode(TextCap.ellipsis).utf8.count
        var kept = ""
        var used = 0
        for character in s {
            let cost = encode(String(character)).utf8.count
            if used + cost + ellipsisCost > maxBytes { break }
            used += cost
            kept.append(character)
        }
        return encode(kept + TextCap.ellipsis)
    }

    /// Decodes a received `grpc-message`. Never fails, as the protocol asks of decoders: a `%` not
    /// followed by two hex digits is kept literally, and bytes that don't form valid UTF-8 become
    /// U+FFFD.
    public static func decode(_ s: String) -> String {
        let utf8 = s.utf8
        guard utf8.contains(UInt8(ascii: "%")) else { return s }
        let out = LenientPercentDecoding.decode(utf8, plusIsSpace: false)
        return String(decoding: out, as: UTF8.self)
    }

    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte > 0x7E || byte == UInt8(ascii: "%")
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "A") + nibble - 10
    }
}
