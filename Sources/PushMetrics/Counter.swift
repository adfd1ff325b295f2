import Synchronization

/// A monotonically increasing count: one series (one label set) of a ``CounterFamily``.
///
/// Resolve it once (``CounterFamily/labels(_:)-(String...)``) and keep it: an increment is one relaxed
/// atomic add, with no lookup and no string building.
public final class Counter: Sendable {
    /// The series' labels, already in exposition form (`a="x",b="y"`), or empty.
    let labelText: String
    private let count = Atomic<Int>(0)

    init(labelText: String) {
        self.labelText = labelText
    }

    /// Adds `amount` (not negative: counters only go up).
    public func increment(by amount: Int = 1) {
        count.wrappingAdd(amount, ordering: .relaxed)
    }

    /// The current count.
    public var value: Int { count.load(ordering: .relaxed) }
}

/// A gauge set from code: a value that goes up and down. One series of a ``GaugeFamily``.
public final class Gauge: Sendable {
    let labelText: String
    /// The Double's bit pattern (atomics hold integers).
    private let bits = Atomic<UInt64>(0.0.bitPattern)

    init(labelText: String) {
        self.labelText = labelText
    }

    public func set(_ value: Double) {
        bits.store(value.bitPattern, ordering: .relaxed)
    }

    public func add(_ delta: Double) {
        var current = bits.load(ordering: .relaxed)
        while true {
            let next = (Double(bitPattern: current) + delta).bitPattern
            let (exchanged, original) = bits.compareExchange(expected: current, desired: next, ordering: .relaxed)
            if exchanged { return }
            current = original
        }
    }

    public func increment() { add(1) }
    public func decrement() { add(-1) }

    public var value: Double { Double(bitPattern: bits.load(ordering: .relaxed)) }
}
