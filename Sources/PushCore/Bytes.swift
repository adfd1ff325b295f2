// Byte helpers that more than one protocol needs (API keys, SigV4, grpc-message, Query bodies):
// one definition each.

/// Hex digits: their values, and bytes written as lowercase hex.
public enum Hex {
    /// The value of one ASCII hex digit (either case), or nil.
    public static func value(_ byte: UInt8) -> UInt8? { hexValue(byte) }

    /// `bytes` as lowercase hex, two digits a byte.
    public static func lowercase(_ bytes: some Collection<UInt8>) -> String {
        let digits: StaticString = "0123456789abcdef"
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        digits.withUTF8Buffer { digits in
            for byte in bytes {
                out.append(digits[Int(byte >> 4)])
                out.append(digits[Int(byte & 0x0f)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// Comparisons of secrets.
public enum ConstantTime {
    /// Equality of two byte strings in time that depends only on their lengths, never on their
    /// contents (how much of a presented key or signature was right is not told by the clock).
    public static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}

/// Percent-decoding that never fails: `%XX` (either case) becomes its byte, a `%` without two hex
/// digits after it stays as it is, and (`plusIsSpace`, as forms and AWS query strings write it)
/// `+` becomes a space.
public enum LenientPercentDecoding {
    public static func decode(_ bytes: some Collection<UInt8>, plusIsSpace: Bool) -> [UInt8] {
        let bytes = Array(bytes)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
                let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2])
            {
                out.append(high << 4 | low)
                index += 3
            } else if plusIsSpace && bytes[index] == UInt8(ascii: "+") {
                out.append(UInt8(ascii: " "))
                index += 1
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        return out
    }
}
