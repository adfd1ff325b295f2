import Testing

@testable import PushGRPC

@Suite("GRPCClientWatch: when a client is dropped")
struct GRPCClientWatchTests {
    let second: UInt64 = 1_000_000_000

    func watch(maxUnsent: Int = 1000, writeTimeout: Duration? = .seconds(30), controlFrames: Int = 100)
        -> GRPCClientWatch
    {
        GRPCClientWatch(
            maxUnsentBytes: maxUnsent, writeTimeout: writeTimeout, maxControlFramesPerSecond: controlFrames, now: 0)
    }

    @Test("unsent output over the limit drops the client at once")
    func overLimit() {
        var watch = watch()
        #expect(watch.responseQueued(unsent: 1001, progress: 0) == .drop(.unsentOverLimit(1001)))
    }

    @Test("unsent output arms the write timer once; a timer that sees no progress drops the client")
    func noProgress() {
        var watch = watch()
        #expect(watch.responseQueued(unsent: 500, progress: 7) == .armWriteTimer(after: .seconds(30)))
        #expect(watch.responseQueued(unsent: 600, progress: 7) == .none, "already armed")
        #expect(watch.writeTimerFired(unsent: 600, progress: 7) == .drop(.noProgress(unsent: 600)))
    }

    @Test("progress re-arms the timer, and nothing left unsent disarms it")
    func progress() {
        var watch = watch()
        #expect(watch.responseQueued(unsent: 500, progress: 7) == .armWriteTimer(after: .seconds(30)))
        #expect(watch.writeTimerFired(unsent: 300, progress: 9) == .armWriteTimer(after: .seconds(30)))
        #expect(watch.writeTimerFired(unsent: 0, progress: 12) == .none)
        #expect(watch.responseQueued(unsent: 10, progress: 12) == .armWriteTimer(after: .seconds(30)))
    }

    @Test("without a write timeout only the limit applies")
    func noTimeout() {
        var watch = watch(writeTimeout: nil)
        #expect(watch.responseQueued(unsent: 999, progress: 0) == .none)
        #expect(watch.responseQueued(unsent: 1001, progress: 0) == .drop(.unsentOverLimit(1001)))
    }

    @Test("the limit's worth of control frames within a second is a flood; spread over longer it is not")
    func controlFrames() {
        var slow = watch()
        var now: UInt64 = 5 * second
        for _ in 0..<99 { #expect(slow.controlFrame(now: now) == .none) }
        // The 100th, 7 s after the count began (the connection's start): a new count begins.
        now += 2 * second
        #expect(slow.controlFrame(now: now) == .none)
        for _ in 0..<99 { #expect(slow.controlFrame(now: now) == .none) }
        #expect(slow.controlFrame(now: now + second / 2) == .drop(.controlFrameFlood(frames: 100)))
    }

    @Test("each stream that ended earns the client a few control frames more within the second")
    func streamsEarnControlFrames() {
        let perStream = GRPCClientWatch.controlFramesPerStream
        var busy = watch()
        for _ in 0..<10 { busy.streamEnded() }
        // 100 + 10 streams' worth within one second: the last one is the flood.
        for _ in 0..<(99 + 10 * perStream) { #expect(busy.controlFrame(now: 1000) == .none) }
        #expect(busy.controlFrame(now: 2000) == .drop(.controlFrameFlood(frames: 100 + 10 * perStream)))
        // The credit goes with the count it was earned in.
        var later = watch()
        for _ in 0..<10 { later.streamEnded() }
        for _ in 0..<(100 + 10 * perStream) { #expect(later.controlFrame(now: 2 * second) == .none) }
        for _ in 0..<99 { #expect(later.controlFrame(now: 2 * second) == .none) }
        #expect(later.controlFrame(now: 2 * second + 1) == .drop(.controlFrameFlood(frames: 100)))
    }

    @Test("a flood from the connection's first second on is caught in its first count")
    func earlyFlood() {
        var watch = watch()
        for _ in 0..<99 { #expect(watch.controlFrame(now: 1000) == .none) }
        #expect(watch.controlFrame(now: 2000) == .drop(.controlFrameFlood(frames: 100)))
    }

    @Test("a dropped client is dropped once")
    func once() {
        var watch = watch()
        #expect(watch.responseQueued(unsent: 2000, progress: 0) == .drop(.unsentOverLimit(2000)))
        #expect(watch.responseQueued(unsent: 3000, progress: 0) == .none)
        #expect(watch.writeTimerFired(unsent: 3000, progress: 0) == .none)
    }
}
