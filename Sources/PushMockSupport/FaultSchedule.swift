import PushCore
import Synchronization

/// Which injected fault (if any) answers the next valid request: every Nth one gets `every`'s
/// fault, the others draw against shares from a counter-based generator seeded with `seed`
/// and shared by all connections (the same number of faults over N requests on every run).
package final class FaultSchedule<Fault: Sendable>: Sendable {
    /// Cumulative thresholds in [0, 1], in the order the shares were given.
    private let thresholds: [(fault: Fault, below: Double)]
    private let every: (fault: Fault, count: Int)?
    private let seed: UInt64
    private let draws = Atomic<UInt64>(0)
    private let requests = Atomic<Int>(0)

    /// `shares` are clamped to [0, 1] (NaN counts as 0) and stack: (a, 0.1), (b, 0.2) answers
    /// 10 % a and 20 % b.
    package init(shares: [(Fault, Double)], seed: UInt64, every: (fault: Fault, count: Int)? = nil) {
        var total = 0.0
        thresholds = shares.map { fault, share in
            total += share.isNaN ? 0 : min(1, max(0, share))
            return (fault, total)
        }
        self.every = every.flatMap { $0.count > 0 ? $0 : nil }
        self.seed = seed
    }

    /// The fault for the next valid request, or nil to answer it normally.
    package func next() -> Fault? {
        let count = requests.wrappingAdd(1, ordering: .relaxed).newValue
        if let every, count.isMultiple(of: every.count) { return every.fault }
        guard let last = thresholds.last, last.below > 0 else { return nil }
        let index = draws.wrappingAdd(1, ordering: .relaxed).oldValue
        let draw = SplitMix64.unitDouble(seed: seed, index: index)
        return thresholds.first { draw < $0.below }?.fault
    }
}
