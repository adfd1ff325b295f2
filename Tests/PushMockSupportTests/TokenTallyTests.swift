import PushMockSupport
import Testing

/// The mocks' per-token delivery counts: bounded by the limit, and a token counted once keeps counting.
@Suite("Mock per-token tally")
struct TokenTallyTests {
    private func tally(_ batches: [[String]], limit: Int) -> [String: Int] {
        var tally = TokenTally()
        for batch in batches {
            for token in batch { tally.add(token, limit: limit) }
        }
        return tally.counts
    }

    @Test("counts each token's deliveries")
    func counts() {
        #expect(tally([["aa", "bb", "aa"], ["aa"]], limit: 10) == ["aa": 3, "bb": 1])
    }

    @Test("past the limit, new tokens are not counted and tracked ones still are")
    func limit() {
        #expect(tally([["aa", "bb", "cc"], ["dd", "bb", "aa", "cc"]], limit: 2) == ["aa": 2, "bb": 2])
    }

    @Test("with the limit reached, thousands of new tokens pass uncounted and every counted one still counts")
    func manyPastTheLimit() {
        func token(_ n: Int) -> String {
            let hex = String(n, radix: 16)
            return String(repeating: "0", count: 64 - hex.count) + hex
        }
        let counted = (0..<500).map(token)
        let uncounted = (500..<20_000).map { token($0 &* 7919) }
        let counts = tally([counted, uncounted, counted], limit: 500)
        #expect(counts.count == 500)
        #expect(counts.values.allSatisfy { $0 == 2 })
        #expect(Set(counts.keys) == Set(counted))
    }

    @Test("a limit of 0 counts nothing")
    func none() {
        #expect(tally([["aa"]], limit: 0).isEmpty)
    }

    @Test("tokens a byte apart, or one a prefix of another, are counted apart (bytes as keys too)")
    func distinctBytes() {
        var tally = TokenTally()
        for token in ["abcdef", "abcdeg", "abcde", "abcdef"] { tally.add(Array(token.utf8), limit: 100) }
        #expect(tally.counts == ["abcdef": 2, "abcdeg": 1, "abcde": 1])
        #expect(tally.count == 3)
    }
}
