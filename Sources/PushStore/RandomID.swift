import CLinux
import PushSync

#if canImport(Glibc)
    import Glibc
#endif

/// Public ids of endpoints and subscriptions: 32 lowercase hex characters,
/// the creation time in Unix milliseconds (12 digits) then 80 random bits (20 digits).
///
/// Why not 128 random bits: each id is in a unique index, and random keys land all over it, so a
/// bulk load dirtied (and wrote to the WAL) an index page per row per table once the index outgrew
/// the cache: 1M endpoints imported at ~20k rows/s, most of it the kernel copying pages. Ids that
/// start with the time land at the index's right edge, a page at a time. 80 random bits keep them
/// unguessable; the time they tell is when the row was written (an endpoint's `created_at`, which
/// the API shows anyway, within an import's duration).
enum RandomID {
    static func make() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let milliseconds = UInt64(now.tv_sec) * 1000 + UInt64(now.tv_nsec) / 1_000_000
        let random = RandomPool.shared.next()
        return String(unsafeUninitializedCapacity: 32) { buffer in
            let digits: StaticString = "0123456789abcdef"
            func put(_ value: UInt64, count: Int, at start: Int) {
                var value = value
                for index in stride(from: start + count - 1, through: start, by: -1) {
                    buffer[index] = digits.utf8Start[Int(value & 0xF)]
                    value >>= 4
                }
            }
            put(milliseconds, count: 12, at: 0)
            put(random.high, count: 16, at: 12)
            put(random.low, count: 4, at: 28)
            return 32
        }
    }
}

/// Random bits from the kernel's CSPRNG (`getrandom`), taken 4 KiB at a time: one system call per
/// ~400 ids rather than two per id (a tenth of a bulk import's time went to the calls).
final class RandomPool: Sendable {
    static let shared = RandomPool()

    private struct State {
        var bytes = [UInt8](repeating: 0, count: 4096)
        var used = 4096
    }

    private let state = Locked(State())

    /// 80 random bits: 64 in `high`, 16 in `low`.
    func next() -> (high: UInt64, low: UInt64) {
        state.withLock { state in
            if state.used + 10 > state.bytes.count {
                state.bytes.withUnsafeMutableBytes { buffer in
                    var filled = 0
                    while filled < buffer.count {
                        let count = getrandom(buffer.baseAddress! + filled, buffer.count - filled, 0)
                        if count > 0 {
                            filled += count
                        } else if errno != EINTR {
                            // Never on Linux ≥ 3.17 once booted; without entropy there is no safe id.
                            fatalError("getrandom failed: errno \(errno)")
                        }
                    }
                }
                state.used = 0
            }
            var high: UInt64 = 0
            for index in state.used..<(state.used + 8) { high = high << 8 | UInt64(state.bytes[index]) }
            let low = UInt64(state.bytes[state.used + 8]) << 8 | UInt64(state.bytes[state.used + 9])
            state.used += 10
            return (high, low)
        }
    }
}
