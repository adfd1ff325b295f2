import Testing

@testable import PushMockAPNs

/// The mock's per-token 200 counts: bounded by the limit, and a token counted once keeps counting.
@Suite("Mock APNs per-token tally")
struct TokenTallyTests {
    private func token(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test("counts each token's 200s across turns")
    func counts() {
        var tally = TokenTally(limit: 10)
        tally.add([token("aa"), token("bb"), token("aa")])
        tally.add([token("aa")])
        #expect(tally.byToken == ["aa": 3, "bb": 1])
    }

    @Test("past the limit, new tokens are not counted and tracked ones still are")
    func limit() {
        var tally = TokenTally(limit: 2)
        tally.add([token("aa"), token("bb"), token("cc")])
        tally.add([token("dd"), token("bb"), token("aa"), token("cc")])
        #expect(tally.byToken == ["aa": 2, "bb": 2])
    }

    @Test("a limit of 0 counts nothing")
    func none() {
        var tally = TokenTally(limit: 0)
        tally.add([token("aa")])
        #expect(tally.byToken.isEmpty)
    }

    @Test("tokens a byte apart, or one a prefix of another, are counted apart")
    func distinctBytes() {
        var tally = TokenTally(limit: 100)
        // Same length, one byte apart, and a prefix: each its own key.
        tally.add([token("abcdef"), token("abcdeg"), token("abcde"), token("abcdef")])
        #expect(tally.byToken == ["abcdef": 2, "abcdeg": 1, "abcde": 1])
    }
}
