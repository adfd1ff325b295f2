/// Numbers as SNS filter policies see them: JSON number text read as a `Double`.
public enum SNSNumber {
    /// SNS's range for numbers in filter policies (docs/providers.md C.8): ±10^9.
    static let limit = 1_000_000_000.0

    /// The value of `text` if it is a JSON number (`-12`, `3.5`, `1e3`), else nil.
    ///
    /// Message attributes arrive as plain strings, so this is how a `Number` attribute is
    /// recognised. The JSON grammar is checked first because `Double(_:)` alone also takes
    /// `inf`, `nan`, `0x1p3` and `+1`, which SNS would not read as numbers.
    public static func parse(_ text: String) -> Double? {
        guard isJSONNumber(text.utf8) else { return nil }
        return Double(text)
    }

    /// `-? digits (. digits)? ([eE] [+-]? digits)?`; leading zeros are tolerated, as in `007`.
    static func isJSONNumber(_ bytes: String.UTF8View) -> Bool {
        var i = bytes.startIndex
        func digits() -> Bool {
            let start = i
            while i != bytes.endIndex, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[i]) {
                i = bytes.index(after: i)
            }
            return i != start
        }
        func skip(_ allowed: UInt8...) -> Bool {
            guard i != bytes.endIndex, allowed.contains(bytes[i]) else { return false }
            i = bytes.index(after: i)
            return true
        }
        _ = skip(UInt8(ascii: "-"))
        guard digits() else { return false }
        if skip(UInt8(ascii: ".")), !digits() { return false }
        if skip(UInt8(ascii: "e"), UInt8(ascii: "E")) {
            _ = skip(UInt8(ascii: "+"), UInt8(ascii: "-"))
            guard digits() else { return false }
        }
        return i == bytes.endIndex
    }
}
