/// An `android.ttl` value: a protobuf `Duration` in its JSON form, `"<seconds>[.<fraction>]s"`
/// (docs/providers.md B.2), e.g. `"3600s"` or `"10023.32s"`.
///
/// Only the non-negative form is modelled, because FCM only takes TTLs of 0 up to 4 weeks.
public struct FCMDuration: Sendable, Equatable, Comparable, CustomStringConvertible {
    /// FCM's longest (and default) TTL: 4 weeks, 2,419,200 seconds (docs/providers.md B.4).
    public static let maxTTL = FCMDuration(seconds: 2_419_200)

    /// Whole seconds.
    public var seconds: Int64
    /// The fraction, in nanoseconds, 0..<1,000,000,000.
    public var nanos: Int32

    /// Creates a duration; `nanos` must be below one second.
    public init(seconds: Int64, nanos: Int32 = 0) {
        precondition(seconds >= 0 && (0..<1_000_000_000).contains(nanos), "FCMDuration out of range")
        self.seconds = seconds
        self.nanos = nanos
    }

    /// Parses the JSON form: digits, optionally `.` and 1-9 digits, then `s`. nil for anything
    /// else, including a sign, exponent or missing `s`, which FCM's JSON mapping refuses too.
    public init?(_ text: String) {
        var bytes = Array(text.utf8)
        guard bytes.last == UInt8(ascii: "s") else { return nil }
        bytes.removeLast()
        let dot = bytes.firstIndex(of: UInt8(ascii: "."))
        let whole = bytes[..<(dot ?? bytes.endIndex)]
        // 18 digits always fit in Int64; anything longer is far beyond any TTL anyway.
        guard !whole.isEmpty, whole.count <= 18, whole.allSatisfy(Self.isDigit) else { return nil }
        var nanos: Int32 = 0
        if let dot {
            let fraction = bytes[(dot + 1)...]
            guard (1...9).contains(fraction.count), fraction.allSatisfy(Self.isDigit) else { return nil }
            for index in 0..<9 {
                let digit = index < fraction.count ? Int32(fraction[fraction.startIndex + index] - 0x30) : 0
                nanos = nanos * 10 + digit
            }
        }
        self.init(seconds: whole.reduce(Int64(0)) { $0 * 10 + Int64($1 - 0x30) }, nanos: nanos)
    }

    /// The JSON form, shortest fraction first: `"3600s"`, `"10023.32s"`.
    public var description: String {
        guard nanos > 0 else { return "\(seconds)s" }
        var fraction = String(nanos)
        fraction = String(repeating: "0", count: 9 - fraction.count) + fraction
        while fraction.last == "0" { fraction.removeLast() }
        return "\(seconds).\(fraction)s"
    }

    /// Whole seconds, rounded up: a message may live until then.
    public var secondsRoundedUp: Int64 { nanos > 0 ? seconds + 1 : seconds }

    /// What is left after `elapsed` seconds, or nil if nothing is (the message has expired).
    ///
    /// Exactly zero left is not expired, and a TTL of 0 never expires here: it means "now or
    /// never" to FCM, and with whole-second clocks any dwell at all would otherwise drop it (the
    /// same rule as the APNs side, ``SNSAPNsPayload``).
    public func remaining(after elapsed: Int64) -> FCMDuration? {
        guard elapsed > 0, self != FCMDuration(seconds: 0) else { return self }
        guard elapsed <= seconds else { return nil }
        return FCMDuration(seconds: seconds - elapsed, nanos: nanos)
    }

    public static func < (lhs: FCMDuration, rhs: FCMDuration) -> Bool {
        (lhs.seconds, lhs.nanos) < (rhs.seconds, rhs.nanos)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
}
