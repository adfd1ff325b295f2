import Testing

@testable import PushCore

@Suite("GRPCTimeout")
struct GRPCTimeoutTests {
    @Test(
        "every unit parses",
        arguments: [
            ("2H", Duration.seconds(7200)), ("3M", .seconds(180)), ("1S", .seconds(1)),
            ("100m", .milliseconds(100)), ("250u", .microseconds(250)), ("999n", .nanoseconds(999)),
            ("0S", .zero), ("00000001S", .seconds(1)),
        ])
    func units(value: String, expected: Duration) {
        #expect(GRPCTimeout.parse(value) == expected)
    }

    @Test("eight digits is the maximum")
    func eightDigits() {
        #expect(GRPCTimeout.parse("99999999H") == .seconds(99_999_999 * 3600))
        #expect(GRPCTimeout.parse("123456789S") == nil)
    }

    @Test(
        "malformed values are nil",
        arguments: [
            "", "S", "10", "10s", "10 S", " 10S", "-1S", "+1S", "1.5S", "10SS", "1h", "abcS", "１S",
        ])
    func malformed(value: String) {
        #expect(GRPCTimeout.parse(value) == nil)
    }
}
