// The byte-level encoders behind JSONWriter, usable on any [UInt8].
extension JSONWriter {
    /// Appends `"value"` with `"`, `\` and control characters escaped (`\n`, `\t`, … or `\u00XX`).
    /// Everything else, including non-ASCII UTF-8, is copied as is: RFC 8259 §7 requires no more.
    public static func appendQuoted(_ value: String, to out: inout [UInt8]) {
        // Read in place when contiguous (literals and every String from protobuf are): `withUTF8`
        // needs a `var`, a copy of the string (a retain and a release) per key and value.
        if value.utf8.withContiguousStorageIfAvailable({ appendQuoted(utf8: $0, to: &out) }) != nil { return }
        var value = value
        value.withUTF8 { appendQuoted(utf8: $0, to: &out) }
    }

    private static func appendQuoted(utf8: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Runs without escapes are copied whole; an index loop, since `enumerated()` with a
        // filter cost twice as much per byte (callgrind).
        var runStart = 0
        var index = 0
        while index < utf8.count {
            // Eight bytes at a time while none of them needs an escape (nearly all text).
            if utf8.count - index >= 8,
                !needsEscape(UnsafeRawPointer(utf8.baseAddress!).loadUnaligned(fromByteOffset: index, as: UInt64.self))
            {
                index += 8
                continue
            }
            let byte = utf8[index]
            if byte < 0x20 || byte == 0x22 || byte == 0x5C {
                if runStart < index {
                    out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
                }
                appendEscape(byte, to: &out)
                runStart = index + 1
            }
            index += 1
        }
        if runStart < utf8.count { out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...])) }
        out.append(UInt8(ascii: "\""))
    }

    /// Whether any of the eight bytes in `word` is below 0x20, `"` or `\` (exact, by the
    /// word-at-a-time tests for "a byte less than n" and "a zero byte").
    static func needsEscape(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let control = (word &- ones &* 0x20) & ~word & highs
        let quote = word ^ (ones &* 0x22)
        let backslash = word ^ (ones &* 0x5C)
        let equal = ((quote &- ones) & ~quote | (backslash &- ones) & ~backslash) & highs
        return control | equal != 0
    }

    private static func appendEscape(_ byte: UInt8, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\\"))
        switch byte {
        case 0x22: out.append(UInt8(ascii: "\""))
        case 0x5C: out.append(UInt8(ascii: "\\"))
        case 0x0A: out.append(UInt8(ascii: "n"))
        case 0x0D: out.append(UInt8(ascii: "r"))
        case 0x09: out.append(UInt8(ascii: "t"))
        case 0x08: out.append(UInt8(ascii: "b"))
        case 0x0C: out.append(UInt8(ascii: "f"))
        default:
            // Only bytes below 0x20 get here, so the high nibble is 0 or 1.
            out.append(UInt8(ascii: "u"))
            out.append(UInt8(ascii: "0"))
            out.append(UInt8(ascii: "0"))
            out.append(UInt8(ascii: "0") + (byte >> 4))
            let low = byte & 0x0F
            out.append(low < 10 ? UInt8(ascii: "0") + low : UInt8(ascii: "a") + low - 10)
        }
    }

    /// Appends the decimal digits of `value`, without going through `String`.
    public static func appendDecimal(_ value: some FixedWidthInteger, to out: inout [UInt8]) {
        precondition(type(of: value).bitWidth <= 64, "integers wider than 64 bits are not supported")
        if value < 0 { out.append(UInt8(ascii: "-")) }
        // The magnitude as UInt64 is exact for every integer type up to 64 bits, Int64.min included.
        var magnitude = UInt64(truncatingIfNeeded: value.magnitude)
        // Digits come out least significant first; write them in place, then flip them.
        let start = out.count
        repeat {
            out.append(UInt8(ascii: "0") + UInt8(magnitude % 10))
            magnitude /= 10
        } while magnitude > 0
        out[start...].reverse()
    }
}
