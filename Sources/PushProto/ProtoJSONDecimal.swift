/// The exact value of a JSON number's text, for integer fields: proto3 JSON accepts `1e2` and
/// `1.0` for an integer (and the same inside a string), but never `1.5` or a value out of range.
/// Doubles would round 64-bit values, so the digits are kept as they are.
struct ProtoJSONDecimal {
    var negative = false
    /// Significant digits (0...9), without leading or trailing zeros; empty for zero.
    var digits: [UInt8] = []
    /// The value is `digits × 10^exponent`.
    var exponent = 0

    /// Parses RFC 8259 number syntax, `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`, or nil.
    init?(_ text: String) {
        var bytes = Array(text.utf8)[...]
        if bytes.first == UInt8(ascii: "-") {
            negative = true
            bytes = bytes.dropFirst()
        }
        let integer = bytes.prefix(while: Self.isDigit)
        guard !integer.isEmpty, integer.first != UInt8(ascii: "0") || integer.count == 1 else { return nil }
        bytes = bytes.dropFirst(integer.count)
        var fraction = bytes[bytes.startIndex..<bytes.startIndex]
        if bytes.first == UInt8(ascii: ".") {
            fraction = bytes.dropFirst().prefix(while: Self.isDigit)
            guard !fraction.isEmpty else { return nil }
            bytes = bytes.dropFirst(1 + fraction.count)
        }
        var written = 0
        if let e = bytes.first, e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            var exponentNegative = false
            if let sign = bytes.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
                exponentNegative = sign == UInt8(ascii: "-")
                bytes = bytes.dropFirst()
            }
            let exponentDigits = bytes.prefix(while: Self.isDigit)
            guard !exponentDigits.isEmpty else { return nil }
            bytes = bytes.dropFirst(exponentDigits.count)
            // Saturates far beyond any integer's range, so that no exponent text can overflow.
            for digit in exponentDigits where written < 1_000_000_000_000 {
                written = written * 10 + Int(digit - UInt8(ascii: "0"))
            }
            if exponentNegative { written = -written }
        }
        guard bytes.isEmpty else { return nil }
        digits = (integer + fraction).map { $0 - UInt8(ascii: "0") }
        exponent = written - fraction.count
        let leadingZeros = digits.prefix { $0 == 0 }.count
        digits.removeFirst(leadingZeros)
        while digits.last == 0 {
            digits.removeLast()
            exponent += 1
        }
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    enum Problem: Error { case notAnInteger, outOfRange }

    /// The value as `T`, when it is a whole number within `T`'s range.
    func integer<T: FixedWidthInteger>(as: T.Type) -> Result<T, Problem> {
        if digits.isEmpty { return .success(0) }
        if exponent < 0 { return .failure(.notAnInteger) }
        // UInt64.max has 20 digits.
        if digits.count + exponent > 20 { return .failure(.outOfRange) }
        var magnitude: UInt64 = 0
        for digit in digits + Array(repeating: 0, count: exponent) {
            let (tens, overflow) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, carry) = tens.addingReportingOverflow(UInt64(digit))
            if overflow || carry { return .failure(.outOfRange) }
            magnitude = sum
        }
        if negative {
            guard T.isSigned, magnitude <= UInt64(T.max) + 1 else { return .failure(.outOfRange) }
            // Two's complement: -magnitude, exact down to T.min.
            return .success(T(truncatingIfNeeded: 0 &- magnitude))
        }
        guard magnitude <= UInt64(T.max) else { return .failure(.outOfRange) }
        return .success(T(magnitude))
    }
}
