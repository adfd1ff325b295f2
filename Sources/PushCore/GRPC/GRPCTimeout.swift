/// The `grpc-timeout` request header: 1–8 ASCII digits and a unit (`H M S m u n`).
public enum GRPCTimeout {
    /// Parses a `grpc-timeout` value such as `"100m"` or `"1S"`.
    ///
    /// - Returns: the duration, or nil when the value is malformed (no digits, more than 8 digits,
    ///   a sign, spaces or an unknown unit). gRPC leaves the reaction to the server; the gateway
    ///   treats nil as a malformed request (INTERNAL per grpc-go) or may ignore the header, and must
    ///   not invent a deadline from it. `"0S"` parses as zero: the deadline has already passed.
    public static func parse(_ value: String) -> Duration? {
        let utf8 = value.utf8
        guard let unit = utf8.last, utf8.count >= 2, utf8.count <= 9 else { return nil }
        var amount: Int64 = 0
        for byte in utf8.dropLast() {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            amount = amount * 10 + Int64(byte - UInt8(ascii: "0"))
        }
        // 8 digits keep every unit within Int64: 99_999_999 hours is about 3.6e11 seconds.
        switch unit {
        case UInt8(ascii: "H"): return .seconds(amount * 3600)
        case UInt8(ascii: "M"): return .seconds(amount * 60)
        case UInt8(ascii: "S"): return .seconds(amount)
        case UInt8(ascii: "m"): return .milliseconds(amount)
        case UInt8(ascii: "u"): return .microseconds(amount)
        case UInt8(ascii: "n"): return .nanoseconds(amount)
        default: return nil
        }
    }
}
