/// Device tokens for tests: 64 hex digits, as APNs's, also fine for any dialect.
public enum TestTokens {
    /// `value` in hex, left-padded with zeros to 64 digits.
    public static func hex64(_ value: Int) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 64 - digits.count) + digits
    }

    /// `count` distinct tokens, from `offset` on.
    public static func hex64(count: Int, offset: Int = 0) -> [String] {
        (0..<count).map { hex64($0 + offset) }
    }

    /// `count` tokens of 64 characters starting with `first` (a routing dialect's origin letter).
    public static func starting(with first: Character, count: Int) -> [String] {
        (0..<count).map { String(first) + hex64($0).dropFirst() }
    }
}
