import Testing

@testable import PushCore

@Suite("Retry-After header")
struct RetryAfterTests {
    static let now: Int64 = 1_700_000_000

    @Test("Retry-After: delta-seconds")
    func retryAfterSeconds() {
        #expect(RetryAfter.parse("120", now: Self.now) == .seconds(120))
        #expect(RetryAfter.parse(" 0\t", now: Self.now) == .seconds(0))
        #expect(RetryAfter.parse(nil, now: Self.now) == nil)
        for garbage in ["", " ", "-5", "1.5", "5s", "soon", "12 34", "1234567890123456789"] {
            #expect(RetryAfter.parse(garbage, now: Self.now) == nil, "\(garbage)")
        }
    }

    @Test("Retry-After: an IMF-fixdate counts from now; a past date means now")
    func retryAfterDate() {
        // 1_700_000_000 is Tue, 14 Nov 2023 22:13:20 GMT.
        #expect(RetryAfter.imfFixdate("Tue, 14 Nov 2023 22:13:20 GMT") == Self.now)
        #expect(RetryAfter.parse("Tue, 14 Nov 2023 22:14:50 GMT", now: Self.now) == .seconds(90))
        #expect(RetryAfter.parse("Tue, 14 Nov 2023 22:00:00 GMT", now: Self.now) == .seconds(0))
        #expect(RetryAfter.imfFixdate("Sun, 06 Nov 1994 08:49:37 GMT") == 784_111_777)
        #expect(RetryAfter.imfFixdate("Thu, 01 Jan 1970 00:00:00 GMT") == 0)
        #expect(RetryAfter.imfFixdate("Thu, 29 Feb 2024 12:00:00 GMT") == 1_709_208_000)
        let bad = [
            "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "Sun, 06 Nov 1994 08:49:37 UTC",
            "Sun, 31 Nov 1994 08:49:37 GMT", "Thu, 29 Feb 2023 12:00:00 GMT", "Sun, 06 Nov 1994 24:00:00 GMT",
            "Xyz, 06 Nov 1994 08:49:37 GMT", "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 6 Nov 1994 08:49:37 GMT",
        ]
        for text in bad {
            #expect(RetryAfter.parse(text, now: Self.now) == nil, "\(text)")
        }
    }
}
