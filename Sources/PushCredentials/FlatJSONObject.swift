import PushTLS

/// Parses a JSON object whose values are all strings, integers, booleans or null: exactly the
/// shape of a JWT's JOSE header and APNs claims. Anything else (nested values, fractions,
/// duplicate keys, trailing bytes) is rejected: we only need to read what we ourselves produce,
/// and a small strict parser beats pulling Foundation into this module.
struct FlatJSONObject {
    enum Value: Equatable {
        case string(String)
        case integer(Int64)
        case other  // true, false, null
    }

    private(set) var fields: [String: Value] = [:]

    init?(_ bytes: [UInt8]) {
        var reader = Reader(bytes: bytes)
        reader.skipWhitespace()
        guard reader.take(UInt8(ascii: "{")) else { return nil }
        reader.skipWhitespace()
        if !reader.take(UInt8(ascii: "}")) {
            repeat {
                reader.skipWhitespace()
                guard let key = reader.string() else { return nil }
                reader.skipWhitespace()
                guard reader.take(UInt8(ascii: ":")) else { return nil }
                reader.skipWhitespace()
                guard let value = reader.value(), fields[key] == nil else { return nil }
                fields[key] = value
                reader.skipWhitespace()
            } while reader.take(UInt8(ascii: ","))
            guard reader.take(UInt8(ascii: "}")) else { return nil }
        }
        reader.skipWhitespace()
        guard reader.atEnd else { return nil }
    }

    func string(_ key: String) -> String? {
        if case .string(let value)? = fields[key] { return value }
        return nil
    }

    func integer(_ key: String) -> Int64? {
        if case .integer(let value)? = fields[key] { return value }
        return nil
    }

    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        var atEnd: Bool { index == bytes.count }

        mutating func skipWhitespace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        mutating func take(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        mutating func take(_ word: String) -> Bool {
            let word = Array(word.utf8)
            guard bytes[index...].starts(with: word) else { return false }
            index += word.count
            return true
        }

        mutating func value() -> Value? {
            guard index < bytes.count else { return nil }
            switch bytes[index] {
            case UInt8(ascii: "\""): return string().map(Value.string)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return integer().map(Value.integer)
            default: return take("true") || take("false") || take("null") ? .other : nil
            }
        }

        mutating func integer() -> Int64? {
            let negative = take(UInt8(ascii: "-"))
            let start = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            let digits = bytes[start..<index]
            // JSON forbids leading zeros; fractions and exponents are not integers.
            guard !digits.isEmpty, digits.count == 1 || digits.first != UInt8(ascii: "0") else { return nil }
            if index < bytes.count, [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E")].contains(bytes[index]) {
                return nil
            }
            guard let magnitude = Int64(String(decoding: digits, as: UTF8.self)) else { return nil }
            return negative ? -magnitude : magnitude
        }

        mutating func string() -> String? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            var scalars = String.UnicodeScalarView()
            var pendingHighSurrogate: UInt32?
            var utf8Run: [UInt8] = []
            func flushRun() {
                scalars.append(contentsOf: String(decoding: utf8Run, as: UTF8.self).unicodeScalars)
                utf8Run.removeAll()
            }
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                if byte == UInt8(ascii: "\"") {
                    guard pendingHighSurrogate == nil else { return nil }
                    flushRun()
                    return String(scalars)
                }
                guard byte >= 0x20 else { return nil }  // raw control characters are not allowed
                guard byte == UInt8(ascii: "\\") else {
                    guard pendingHighSurrogate == nil else { return nil }
                    utf8Run.append(byte)
                    continue
                }
                guard index < bytes.count else { return nil }
                let escape = bytes[index]
                index += 1
                let simple: [UInt8: UInt8] = [
                    UInt8(ascii: "\""): 0x22, UInt8(ascii: "\\"): 0x5C, UInt8(ascii: "/"): 0x2F,
                    UInt8(ascii: "b"): 0x08, UInt8(ascii: "f"): 0x0C, UInt8(ascii: "n"): 0x0A,
                    UInt8(ascii: "r"): 0x0D, UInt8(ascii: "t"): 0x09,
                ]
                if let replacement = simple[escape] {
                    guard pendingHighSurrogate == nil else { return nil }
                    utf8Run.append(replacement)
                    continue
                }
                guard escape == UInt8(ascii: "u"), index + 4 <= bytes.count,
                    let unit = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16)
                else { return nil }
                index += 4
                flushRun()
                if let high = pendingHighSurrogate {
                    guard (0xDC00...0xDFFF).contains(unit),
                        let scalar = Unicode.Scalar(0x10000 + (high - 0xD800) << 10 + (unit - 0xDC00))
                    else { return nil }
                    scalars.append(scalar)
                    pendingHighSurrogate = nil
                } else if (0xD800...0xDBFF).contains(unit) {
                    pendingHighSurrogate = unit
                } else {
                    guard let scalar = Unicode.Scalar(unit) else { return nil }
                    scalars.append(scalar)
                }
            }
            return nil
        }
    }
}
