// base64url (RFC 4648 §5) without padding, as JWS uses it.

private let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

/// Encodes `bytes` as base64url without "=" padding.
public func base64URLEncode(_ bytes: [UInt8]) -> String {
    var out: [UInt8] = []
    out.reserveCapacity((bytes.count + 2) / 3 * 4)
    var index = 0
    while index + 3 <= bytes.count {
        let group = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
        for shift in [18, 12, 6, 0] { out.append(alphabet[Int(group >> UInt32(shift) & 0x3F)]) }
        index += 3
    }
    switch bytes.count - index {
    case 1:
        let group = UInt32(bytes[index]) << 16
        for shift in [18, 12] { out.append(alphabet[Int(group >> UInt32(shift) & 0x3F)]) }
    case 2:
        let group = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8
        for shift in [18, 12, 6] { out.append(alphabet[Int(group >> UInt32(shift) & 0x3F)]) }
    default:
        break
    }
    return String(decoding: out, as: UTF8.self)
}

/// Decodes unpadded base64url. Returns nil for characters outside the URL-safe alphabet
/// (including "=" padding and the "+" "/" of standard base64), an impossible length, or
/// non-zero leftover bits, so every byte string has exactly one accepted encoding.
public func base64URLDecode(_ s: String) -> [UInt8]? {
    let input = Array(s.utf8)
    guard input.count % 4 != 1 else { return nil }
    var out: [UInt8] = []
    out.reserveCapacity(input.count * 3 / 4)
    var accumulator: UInt32 = 0
    var bits = 0
    for character in input {
        guard let value = sextet(character) else { return nil }
        accumulator = accumulator << 6 | UInt32(value)
        bits += 6
        if bits >= 8 {
            bits -= 8
            out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            accumulator &= (1 << UInt32(bits)) - 1
        }
    }
    guard accumulator == 0 else { return nil }
    return out
}

private func sextet(_ character: UInt8) -> UInt8? {
    switch character {
    case UInt8(ascii: "A")...UInt8(ascii: "Z"): character - UInt8(ascii: "A")
    case UInt8(ascii: "a")...UInt8(ascii: "z"): character - UInt8(ascii: "a") + 26
    case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0") + 52
    case UInt8(ascii: "-"): 62
    case UInt8(ascii: "_"): 63
    default: nil
    }
}

/// Standard base64 (RFC 4648 §4) with padding, as HTTP Basic credentials use it.
public func base64Encode(_ bytes: [UInt8]) -> String {
    var text = base64URLEncode(bytes).map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 }
    while text.count % 4 != 0 { text.append("=") }
    return String(text)
}
