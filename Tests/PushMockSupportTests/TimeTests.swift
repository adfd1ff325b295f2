import PushMockSupport
import Testing

@Suite("Time and bytes")
struct TimeTests {
    @Test(
        "nanoseconds of a duration: exact, 0 for zero and negative ones",
        arguments: [
            (Duration.zero, 0), (.nanoseconds(1), 1), (.milliseconds(1500), 1_500_000_000),
            (.seconds(3), 3_000_000_000), (.microseconds(-5), 0), (.seconds(-2), 0),
        ] as [(Duration, UInt64)])
    func nanoseconds(duration: Duration, expected: UInt64) {
        #expect(PushMockSupport.nanoseconds(duration) == expected)
    }

    @Test("a duration too long for UInt64 nanoseconds saturates to a quarter of UInt64.max")
    func saturates() {
        #expect(PushMockSupport.nanoseconds(.seconds(Int64.max)) == UInt64.max / 4)
        #expect(PushMockSupport.nanoseconds(.seconds(18_446_744_074)) == UInt64.max / 4)
        #expect(PushMockSupport.nanoseconds(.seconds(18_446_744_073)) == 18_446_744_073_000_000_000)
    }

    @Test("the wall clock in milliseconds and seconds agree")
    func wallClock() {
        let seconds = wallClockSeconds()
        let millis = wallClockMillis()
        #expect(seconds > 1_700_000_000, "after November 2023")
        #expect(abs(millis / 1000 - seconds) <= 1)
    }

    @Test("ASCII lower-casing changes A-Z only")
    func lowercased() {
        #expect(lowercasedASCII(Array("Content-Type: X[Z]@é".utf8)) == Array("content-type: x[z]@é".utf8))
        #expect(lowercasedASCII(Array("already lower".utf8)) == Array("already lower".utf8))
        #expect(lowercasedASCII([]) == [])
        #expect(lowercasedASCII(Array("ÀB".utf8)) == Array("Àb".utf8), "non-ASCII bytes stay")
    }
}
