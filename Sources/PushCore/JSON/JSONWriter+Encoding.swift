// The byte-level encoders behind JSONWriter: over raw memory (what the writer uses), and the same
// on any [UInt8].
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
        append(atMost: maxQuotedCount(utf8.count), to: &out) { writeQuoted(utf8: utf8, to: $0) }
    }

    /// Appends the decimal digits of `value`, without going through `String`.
    public static func appendDecimal(_ value: some FixedWidthInteger, to out: inout [UInt8]) {
        append(atMost: maxDecimalCount, to: &out) { writeDecimal(value, to: $0) }
    }

    /// Lets `write` put up to `maxCount` bytes at the end of `out`; it returns how many it wrote.
    private static func append(
        atMost maxCount: Int, to out: inout [UInt8], _ write: (UnsafeMutablePointer<UInt8>) -> Int
    ) {
        let start = out.count
        out.append(contentsOf: repeatElement(0, count: maxCount))
        let written = out.withUnsafeMutableBufferPointer { write($0.baseAddress! + start) }
        out.removeLast(maxCount - written)
    }

    /// The most bytes ``writeQuoted(utf8:to:)`` writes for `count` bytes of text: every byte as
    /// `\u00XX`, and the quotes.
    static func maxQuotedCount(_ count: Int) -> Int { 6 * count + 2 }

    /// Writes `utf8` quoted and escaped at `out`, which has room for ``maxQuotedCount(_:)``
    /// bytes; returns how many it wrote.
    static func writeQuoted(utf8: UnsafeBufferPointer<UInt8>, to out: UnsafeMutablePointer<UInt8>) -> Int {
        out[0] = UInt8(ascii: "\"")
        var written = 1
        // Runs without escapes are copied whole; an index loop, which costs less per byte than
        // `enumerated()` with a filter.
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
                    (out + written).initialize(from: utf8.baseAddress! + runStart, count: index - runStart)
                    written += index - runStart
                }
                written += writeEscape(byte, to: out + written)
                runStart = index + 1
            }
            index += 1
        }
        if runStart < utf8.count {
            (out + written).initialize(from: utf8.baseAddress! + runStart, count: utf8.count - runStart)
            written += utf8.count - runStart
        }
        out[written] = UInt8(ascii: "\"")
        return written + 1
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

    /// Writes the escape of `byte` (a control character, `"` or `\`); returns its length.
    private static func writeEscape(_ byte: UInt8, to out: UnsafeMutablePointer<UInt8>) -> Int {
        out[0] = UInt8(ascii: "\\")
        let short: UInt8
        switch byte {
        case 0x22: short = UInt8(ascii: "\"")
        case 0x5C: short = UInt8(ascii: "\\")
        case 0x0A: short = UInt8(ascii: "n")
        case 0x0D: short = UInt8(ascii: "r")
        case 0x09: short = UInt8(ascii: "t")
        case 0x08: short = UInt8(ascii: "b")
        case 0x0C: short = UInt8(ascii: "f")
        default:
            // Only bytes below 0x20 get here, so the high nibble is 0 or 1.
            out[1] = UInt8(ascii: "u")
            out[2] = UInt8(ascii: "0")
            out[3] = UInt8(ascii: "0")
            out[4] = UInt8(ascii: "0") + (byte >> 4)
            let low = byte & 0x0F
            out[5] = low < 10 ? UInt8(ascii: "0") + low : UInt8(ascii: "a") + low - 10
            return 6
        }
        out[1] = short
        return 2
    }

    /// The most bytes ``writeDecimal(_:to:)`` writes: a sign and the 20 digits of `UInt64.max`.
    static var maxDecimalCount: Int { 21 }

    /// Writes the decimal digits of `value` at `out`, which has room for ``maxDecimalCount``
    /// bytes; returns how many it wrote.
    static func writeDecimal(_ value: some FixedWidthInteger, to out: UnsafeMutablePointer<UInt8>) -> Int {
        precondition(type(of: value).bitWidth <= 64, "integers wider than 64 bits are not supported")
        var written = 0
        if value < 0 {
            out[0] = UInt8(ascii: "-")
            written = 1
        }
        // The magnitude as UInt64 is exact for every integer type up to 64 bits, Int64.min included.
        var magnitude = UInt64(truncatingIfNeeded: value.magnitude)
        // Digits come out least significant first; write them in place, then flip them.
        let start = written
        repeat {
            out[written] = UInt8(ascii: "0") + UInt8(magnitude % 10)
            written += 1
            magnitude /= 10
        } while magnitude > 0
        var digits = UnsafeMutableBufferPointer(start: out + start, count: written - start)
        digits.reverse()
        return written
    }
}
