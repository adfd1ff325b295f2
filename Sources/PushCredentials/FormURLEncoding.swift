import PushTLS

/// `application/x-www-form-urlencoded` (WHATWG URL standard §5): the OAuth2 token request body,
/// `grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=…`.
///
/// Lives beside ``OAuthAssertion`` so a client and the mock need one module for the whole
/// token exchange.
public enum FormURLEncoding {
    /// `name=value` pairs joined by `&`. Bytes other than ASCII letters, digits and `*-._` are
    /// percent-encoded (upper-case hex); a space becomes `+`.
    public static func encode(_ pairs: [(String, String)]) -> String {
        var out: [UInt8] = []
        for (index, (name, value)) in pairs.enumerated() {
            if index > 0 { out.append(UInt8(ascii: "&")) }
            append(name, to: &out)
            out.append(UInt8(ascii: "="))
            append(value, to: &out)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The pairs of a body, in order (names may repeat). `+` is a space; a pair without `=` has
    /// an empty value; empty pieces (`a=1&&b=2`) are skipped. nil for a `%` not followed by two
    /// hex digits, or bytes that are not UTF-8 once decoded.
    public static func decode(_ body: some Collection<UInt8>) -> [(name: String, value: String)]? {
        var pairs: [(name: String, value: String)] = []
        for piece in body.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let equals = piece.firstIndex(of: UInt8(ascii: "="))
            guard let name = unescape(piece[..<(equals ?? piece.endIndex)]) else { return nil }
            let value = equals.map { unescape(piece[piece.index(after: $0)...]) } ?? ""
            guard let value else { return nil }
            pairs.append((name, value))
        }
        return pairs
    }

    /// The value of the first pair named `name`.
    public static func value(_ name: String, in pairs: [(name: String, value: String)]) -> String? {
        pairs.first { $0.name == name }?.value
    }

    private static let hex = Array("0123456789ABCDEF".utf8)

    private static func append(_ text: String, to out: inout [UInt8]) {
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "*"), UInt8(ascii: "-"), UInt8(ascii: "."),
                UInt8(ascii: "_"):
                out.append(byte)
            case UInt8(ascii: " "):
                out.append(UInt8(ascii: "+"))
            default:
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            }
        }
    }

    /// A percent-encoded URL path segment (RFC 3986 §2.1) decoded: `%XX` escapes only (`+`
    /// stays `+`); nil when an escape is malformed or the result is not UTF-8.
    public static func decodePathSegment(_ segment: Substring) -> String? {
        // Most segments (a mock's registration ids) have no escape: no byte-by-byte pass. A
        // Substring is valid UTF-8 already.
        guard segment.utf8.contains(UInt8(ascii: "%")) else { return String(segment) }
        return unescape(Array(segment.utf8), plusIsSpace: false)
    }

    private static func unescape(_ bytes: some Collection<UInt8>, plusIsSpace: Bool = true) -> String? {
        var out: [UInt8] = []
        var iterator = bytes.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "+") where plusIsSpace: out.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                    return nil
                }
                out.append(high << 4 | low)
            default: out.append(byte)
            }
        }
        return String(validating: out, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
