/// Base64 for `bytes` fields: written in the standard alphabet with padding (RFC 4648 §4), read in
/// the standard or the URL-safe alphabet (§5), with or without padding, as proto3 JSON requires.
enum ProtoJSONBase64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let count = min(3, bytes.count - index)
            var group = UInt32(bytes[index]) << 16
            if count > 1 { group |= UInt32(bytes[index + 1]) << 8 }
            if count > 2 { group |= UInt32(bytes[index + 2]) }
            for position in 0..<4 {
                if position <= count {
                    out.append(alphabet[Int((group >> (18 - 6 * UInt32(position))) & 0x3F)])
                } else {
                    out.append(UInt8(ascii: "="))
                }
            }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The decoded bytes, or the zero-based offset of the first character that cannot be there.
    static func decode(_ text: String) -> Result<[UInt8], Failure> {
        var symbols = Array(text.utf8)
        var padding = 0
        while symbols.last == UInt8(ascii: "=") {
            symbols.removeLast()
            padding += 1
        }
        if let offset = symbols.firstIndex(where: { sextet($0) == nil }) {
            return .failure(Failure(offset: offset, reason: "not a base64 character"))
        }
        // Padding, when present, completes the last group of four exactly.
        if padding > 0 && (padding > 2 || (symbols.count + padding) % 4 != 0) {
            return .failure(Failure(offset: symbols.count, reason: "wrong padding"))
        }
        if symbols.count % 4 == 1 {
            return .failure(Failure(offset: symbols.count - 1, reason: "a lone last character"))
        }
        var out: [UInt8] = []
        out.reserveCapacity(symbols.count * 3 / 4)
        var group: UInt32 = 0
        for (offset, symbol) in symbols.enumerated() {
            group = group << 6 | UInt32(sextet(symbol) ?? 0)
            if offset % 4 == 3 {
                out.append(UInt8(truncatingIfNeeded: group >> 16))
                out.append(UInt8(truncatingIfNeeded: group >> 8))
                out.append(UInt8(truncatingIfNeeded: group))
                group = 0
            }
        }
        switch symbols.count % 4 {
        case 2: out.append(UInt8(truncatingIfNeeded: group >> 4))
        case 3:
            out.append(UInt8(truncatingIfNeeded: group >> 10))
            out.append(UInt8(truncatingIfNeeded: group >> 2))
        default: break
        }
        return .success(out)
    }

    struct Failure: Error {
        let offset: Int
        let reason: String
    }

    private static func sextet(_ symbol: UInt8) -> UInt8? {
        switch symbol {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): symbol - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): symbol - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): symbol - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"), UInt8(ascii: "-"): 62
        case UInt8(ascii: "/"), UInt8(ascii: "_"): 63
        default: nil
        }
    }
}
