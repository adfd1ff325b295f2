/// Accepted deliveries per device token, for at most a limit of distinct tokens (later tokens are
/// answered and counted in the totals, not one by one): the mocks' `deliveredPerToken`.
///
/// Keyed by the token's bytes, each key carrying its hash, computed once per count: a load test to
/// more distinct tokens than the limit misses on every token past it, and a miss probes several
/// occupied buckets; comparing stored hashes first spares reading each probed token's bytes (a
/// cache miss apiece in a table of 100,000). Without it mock-apns paid ~0.9 µs more per request
/// for a million distinct tokens than for one; with it, ~0.2 µs. Not generic: called per request
/// from each mock's module, where an unspecialized generic cost mock-apns another ~0.2 µs.
package struct TokenTally: Sendable {
    private struct Key: Hashable, Sendable {
        let hash: Int
        let bytes: [UInt8]

        init(_ bytes: [UInt8]) {
            var hasher = Hasher()
            bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
            hash = hasher.finalize()
            self.bytes = bytes
        }

        static func == (lhs: Key, rhs: Key) -> Bool { lhs.hash == rhs.hash && lhs.bytes == rhs.bytes }

        func hash(into hasher: inout Hasher) { hasher.combine(hash) }
    }

    private var table: [Key: Int] = [:]
    /// A bit per counted token, from its hash: once `limit` tokens are counted, a load test to
    /// more distinct tokens than that sends mostly tokens the table does not have, and a clear bit
    /// says so from a small array (256 KB at the default 100,000: 16 bits a token of the limit, so
    /// ~6 % of them still probe) instead of a probe of the table's buckets, a cache miss or two
    /// apiece (perf of mock-apns in a 1M Publish: counting ~2.8 % of its samples, ~2 % with the bit).
    private var seen: [UInt64] = []

    package init() {}

    /// Counts one delivery to `token`, unless it is new and `limit` tokens are counted already.
    package mutating func add(_ token: [UInt8], limit: Int) {
        let key = Key(token)
        if table.count >= limit, !mayHave(key.hash) { return }
        if let index = table.index(forKey: key) {
            table.values[index] += 1
        } else if table.count < limit {
            table[key] = 1
            remember(key.hash, limit: limit)
        }
    }

    private func bit(of hash: Int) -> Int { hash & (seen.count &* 64 &- 1) }

    private func mayHave(_ hash: Int) -> Bool {
        guard !seen.isEmpty else { return false }
        let bit = bit(of: hash)
        return seen[bit >> 6] & (1 << UInt64(bit & 63)) != 0
    }

    private mutating func remember(_ hash: Int, limit: Int) {
        if seen.isEmpty {
            var words = 1
            while words * 64 < min(limit, 1 << 20) * 16 { words *= 2 }
            seen = Array(repeating: 0, count: words)
        }
        let bit = bit(of: hash)
        seen[bit >> 6] |= 1 << UInt64(bit & 63)
    }

    package mutating func add(_ token: String, limit: Int) { add(Array(token.utf8), limit: limit) }

    /// How many distinct tokens are counted.
    package var count: Int { table.count }

    /// The counts by token.
    package var counts: [String: Int] {
        Dictionary(uniqueKeysWithValues: table.map { (String(decoding: $0.key.bytes, as: UTF8.self), $0.value) })
    }
}
