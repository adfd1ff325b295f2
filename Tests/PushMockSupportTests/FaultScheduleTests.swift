import Dispatch
import PushCore
import PushMockSupport
import PushSync
import Testing

@Suite("Fault schedule")
struct FaultScheduleTests {
    private enum Fault: Sendable, Equatable {
        case a
        case b
        case every
    }

    /// The faults of the first `count` requests.
    private func run(_ schedule: FaultSchedule<Fault>, _ count: Int) -> [Fault?] {
        (0..<count).map { _ in schedule.next() }
    }

    @Test("no shares, or only zero, NaN and negative ones: every request is answered normally")
    func noFaults() {
        #expect(run(FaultSchedule(shares: [], seed: 1), 1000).allSatisfy { $0 == nil })
        let zero = FaultSchedule<Fault>(shares: [(.a, 0), (.b, .nan), (.a, -0.5)], seed: 1)
        #expect(run(zero, 1000).allSatisfy { $0 == nil })
    }

    @Test("a share of 1, or over 1 (clamped), faults every request with the first fault")
    func fullShare() {
        #expect(run(FaultSchedule(shares: [(.a, 1)], seed: 7), 1000).allSatisfy { $0 == .a })
        #expect(run(FaultSchedule(shares: [(.b, 5), (.a, 1)], seed: 7), 1000).allSatisfy { $0 == .b })
    }

    @Test("shares stack in order: draw n below 0.1 is a, below 0.3 is b, else none")
    func stackedShares() {
        let seed: UInt64 = 24301
        let schedule = FaultSchedule<Fault>(shares: [(.a, 0.1), (.b, 0.2)], seed: seed)
        let expected: [Fault?] = (0..<5000).map { index in
            let draw = SplitMix64.unitDouble(seed: seed, index: UInt64(index))
            return draw < 0.1 ? .a : draw < 0.3 ? .b : nil
        }
        let faults = run(schedule, 5000)
        let firstDifference = faults.indices.first { faults[$0] != expected[$0] }
        #expect(firstDifference == nil, "request \(firstDifference.map { $0 + 1 } ?? 0)")
        // And the shares come out near what was asked for.
        let a = faults.filter { $0 == .a }.count
        let b = faults.filter { $0 == .b }.count
        #expect((400...600).contains(a), "\(a) a")
        #expect((850...1150).contains(b), "\(b) b")
    }

    @Test("the same seed gives the same faults on every run; another seed others")
    func reproducible() {
        let first = run(FaultSchedule(shares: [(.a, 0.3)], seed: 42), 500)
        let again = run(FaultSchedule(shares: [(.a, 0.3)], seed: 42), 500)
        let other = run(FaultSchedule(shares: [(.a, 0.3)], seed: 43), 500)
        #expect(first == again)
        #expect(first != other)
    }

    @Test("every Nth request gets every's fault; the others draw from the shares in sequence")
    func everyNth() {
        let seed: UInt64 = 9
        let schedule = FaultSchedule<Fault>(shares: [(.a, 0.5)], seed: seed, every: (.every, 3))
        let faults = run(schedule, 300)
        var draw: UInt64 = 0
        for (index, fault) in faults.enumerated() {
            if (index + 1).isMultiple(of: 3) {
                #expect(fault == .every, "request \(index + 1)")
            } else {
                // Requests that `every` answers take no draw: the draws stay consecutive.
                let expected: Fault? = SplitMix64.unitDouble(seed: seed, index: draw) < 0.5 ? .a : nil
                #expect(fault == expected, "request \(index + 1)")
                draw += 1
            }
        }
    }

    @Test("every alone: exactly every Nth request faults")
    func everyAlone() {
        let faults = run(FaultSchedule<Fault>(shares: [], seed: 1, every: (.every, 4)), 20)
        #expect(faults.indices.filter { faults[$0] != nil } == [3, 7, 11, 15, 19])
    }

    @Test("every with a count of 0 or less is ignored", arguments: [0, -3])
    func everyIgnored(count: Int) {
        let faults = run(FaultSchedule<Fault>(shares: [], seed: 1, every: (.every, count)), 50)
        #expect(faults.allSatisfy { $0 == nil })
    }

    @Test("shared by threads: the same number of faults over N requests as one caller gets")
    func sharedAcrossThreads() {
        let seed: UInt64 = 5
        let alone = run(FaultSchedule(shares: [(.a, 0.25), (.b, 0.25)], seed: seed), 8000)
        let shared = FaultSchedule<Fault>(shares: [(.a, 0.25), (.b, 0.25)], seed: seed)
        let counts = Locked<[Fault: Int]>([:])
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            var mine: [Fault: Int] = [:]
            for _ in 0..<2000 { if let fault = shared.next() { mine[fault, default: 0] += 1 } }
            counts.withLock { $0.merge(mine, uniquingKeysWith: +) }
        }
        let total = counts.withLock { $0 }
        #expect(total[.a, default: 0] == alone.filter { $0 == .a }.count)
        #expect(total[.b, default: 0] == alone.filter { $0 == .b }.count)
    }
}
