import PushCore

/// The basic ISO 8601 timestamps of Signature Version 4 (`20150830T123600Z`, always UTC) to and
/// from Unix seconds, by the proleptic Gregorian calendar.
enum SigV4Timestamp {
    /// Unix seconds of `yyyyMMdd'T'HHmmss'Z'`, or nil for anything else (a real calendar date and
    /// time of day are required; no leap second).
    static func parse(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        guard bytes.count == 16, bytes[8] == UInt8(ascii: "T"), bytes[15] == UInt8(ascii: "Z") else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for byte in bytes[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(4..<6), let day = number(6..<8),
            let hour = number(9..<11), let minute = number(11..<13), let second = number(13..<15),
            (1...12).contains(month), day >= 1, day <= CivilDate.daysIn(month: month, year: year),
            hour < 24, minute < 60, second < 60
        else { return nil }
        return CivilDate.days(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second
    }

    /// `yyyyMMdd'T'HHmmss'Z'` of Unix seconds (years 0...9999).
    static func format(_ seconds: Int64) -> String {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let timeOfDay = seconds - days * 86_400
        let (year, month, day) = CivilDate.date(days: days)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let yearText = String(repeating: "0", count: max(0, 4 - String(year).count)) + String(year)
        return yearText + two(month) + two(day) + "T" + two(timeOfDay / 3600) + two(timeOfDay / 60 % 60)
            + two(timeOfDay % 60) + "Z"
    }
}
