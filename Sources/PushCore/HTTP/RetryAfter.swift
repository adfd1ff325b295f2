/// The `Retry-After` response header (RFC 9110 §10.2.3): `delta-seconds` or an HTTP-date.
///
/// FCM, ADM and Web Push services send it with 429 and 503 (docs/providers.md B.3); both of RFC
/// 9110's forms are accepted.
public enum RetryAfter {
    /// How long to wait, from a header value.
    ///
    /// - Parameters:
    ///   - value: the header value; surrounding spaces and tabs are ignored.
    ///   - now: the current time, Unix seconds; a date is counted from it.
    /// - Returns: the delay (zero for a date already past), or nil when the header is absent or
    ///   is neither digits nor an IMF-fixdate. The obsolete RFC 850 and asctime date forms are
    ///   not accepted (RFC 9110 says senders must use IMF-fixdate); nil then means "use your own
    ///   backoff", which is safe.
    public static func parse(_ value: String?, now: Int64) -> Duration? {
        guard let value else { return nil }
        let bytes = Array(value.utf8.drop { isOWS($0) }.reversed().drop { isOWS($0) }.reversed())
        guard !bytes.isEmpty else { return nil }
        if bytes.allSatisfy(isDigit) {
            // More than 18 digits would overflow and is no real delay; treat it as garbage.
            guard bytes.count <= 18 else { return nil }
            return .seconds(bytes.reduce(Int64(0)) { $0 * 10 + Int64($1 - 0x30) })
        }
        guard let date = imfFixdate(bytes) else { return nil }
        return .seconds(max(0, date - now))
    }

    /// The Unix time of an IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`, or nil.
    ///
    /// The day name must be one of the seven but is not checked against the date: it carries no
    /// information, and a server that gets it wrong still means the date.
    public static func imfFixdate(_ text: String) -> Int64? {
        imfFixdate(Array(text.utf8))
    }

    private static let dayNames = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    private static let monthNames = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]

    private static func imfFixdate(_ b: [UInt8]) -> Int64? {
        // Fixed layout: "Www, DD Mmm YYYY HH:MM:SS GMT", 29 bytes.
        guard b.count == 29, b[3] == UInt8(ascii: ","), b[4] == 0x20, b[7] == 0x20, b[11] == 0x20, b[16] == 0x20,
            b[19] == UInt8(ascii: ":"), b[22] == UInt8(ascii: ":"), b[25] == 0x20,
            String(decoding: b[26..<29], as: UTF8.self) == "GMT",
            dayNames.contains(String(decoding: b[0..<3], as: UTF8.self)),
            let monthIndex = monthNames.firstIndex(of: String(decoding: b[8..<11], as: UTF8.self)),
            let day = number(b[5..<7]), let year = number(b[12..<16]), let hour = number(b[17..<19]),
            let minute = number(b[20..<22]), let second = number(b[23..<25])
        else { return nil }
        let month = monthIndex + 1
        guard day >= 1, Int64(day) <= CivilDate.daysIn(month: Int64(month), year: Int64(year)), hour <= 23,
            minute <= 59, second <= 60
        else {
            return nil
        }
        let days = CivilDate.days(year: Int64(year), month: Int64(month), day: Int64(day))
        return days * 86_400 + Int64(hour * 3600 + minute * 60 + second)
    }

    private static func number(_ digits: ArraySlice<UInt8>) -> Int? {
        guard digits.allSatisfy(isDigit) else { return nil }
        return digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
    private static func isOWS(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }
}
