import PushCore
import PushPosix
import PushTransport
import Testing

@testable import PushDelivery

@Suite("Delivery collector, endpoints, retry policy")
struct DeliveryCollectorTests {
    @Test("the collector answers when all results are in, or at the deadline with the rest FAILED")
    func collector() async {
        // Placeholders coded otherwise: the deadline itself sets the code.
        let placeholders = (0..<3).map {
            DeliveryResult(notificationIndex: 0, token: "t\($0)", status: .rejected, code: .rejectedByProvider)
        }
        let collector = DeliveryCollector(placeholders: placeholders)
        collector.complete(
            slot: 1, with: DeliveryResult(notificationIndex: 0, token: "t1", status: .delivered, code: .delivered))
        let results = await collector.results(deadline: .now + .milliseconds(50))
        #expect(results.map(\.status) == [.failed, .delivered, .failed])
        #expect(results[0].reason == "DeadlineExceeded")
        #expect(results[0].code == .deadlineExceeded)
        collector.complete(
            slot: 0, with: DeliveryResult(notificationIndex: 0, token: "t0", status: .delivered, code: .delivered))
        #expect(collector.isFinished)

        let quick = DeliveryCollector(placeholders: placeholders)
        for slot in 0..<3 {
            quick.complete(
                slot: slot,
                with: DeliveryResult(notificationIndex: 0, token: "t\(slot)", status: .delivered, code: .delivered))
        }
        #expect(await quick.results(deadline: nil).allSatisfy { $0.status == .delivered })
    }

    @Test("provider URLs: endpoint and path")
    func urls() throws {
        let (endpoint, path) = try #require(HTTPSOrigin.parse(url: "https://oauth2.googleapis.com/token"))
        #expect(endpoint == HTTPSOrigin(host: "oauth2.googleapis.com", port: 443))
        #expect(path == "/token")
        #expect(HTTPSOrigin.parse(url: "https://127.0.0.1:9443")?.path == "/")
        #expect(HTTPSOrigin.parse(url: "https://x/token?a=b") == nil)
        #expect(HTTPSOrigin.parse(url: "http://x/token") == nil)
        #expect(HTTPSOrigin(url: "https://x/token") == nil, "a provider host takes no path")
    }
}

@Suite("Delivery collector on one loop, without a lock until shared")
struct DeliveryCollectorLoopTests {
    static func placeholders(_ count: Int) -> [DeliveryResult] {
        (0..<count).map {
            DeliveryResult(notificationIndex: 0, token: "t\($0)", status: .failed, code: .deadlineExceeded)
        }
    }

    static func delivered(_ slot: Int) -> DeliveryResult {
        DeliveryResult(notificationIndex: 0, token: "t\(slot)", status: .delivered, code: .delivered)
    }

    /// `body`'s value, computed on `loop`'s thread.
    static func on<T: Sendable>(_ loop: EventLoop, _ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in loop.execute { continuation.resume(returning: body()) } }
    }

    @Test("made on a loop it has no lock, and answers there; made off a loop it locks from the start")
    func unsharedOnItsLoop() async throws {
        let group = try EventLoopGroup(loopCount: 1, namePrefix: "collector-test")
        defer { group.shutdown() }
        let loop = group.loops[0]
        let collector = await Self.on(loop) { DeliveryCollector(placeholders: Self.placeholders(2)) }
        #expect(!collector.isShared)
        let results = await withCheckedContinuation { (continuation: CheckedContinuation<[DeliveryResult], Never>) in
            loop.execute {
                collector.whenDone(deadline: nil) { continuation.resume(returning: $0) }
                collector.complete(slot: 1, with: Self.delivered(1))
                collector.complete(slot: 0, with: Self.delivered(0))
            }
        }
        #expect(results.map(\.status) == [.delivered, .delivered])
        #expect(await Self.on(loop) { collector.isFinished && !collector.isShared })
        #expect(DeliveryCollector(placeholders: Self.placeholders(1)).isShared)
    }

    @Test("shared on its loop, it takes results from another loop's thread at the same time")
    func sharedAcrossLoops() async throws {
        let group = try EventLoopGroup(loopCount: 2, namePrefix: "collector-test")
        defer { group.shutdown() }
        let (home, other) = (group.loops[0], group.loops[1])
        let count = 2_000
        let collector = await Self.on(home) { () -> DeliveryCollector in
            let collector = DeliveryCollector(placeholders: Self.placeholders(count))
            collector.shareAcrossThreads()
            return collector
        }
        #expect(collector.isShared)
        let results = await withCheckedContinuation { (continuation: CheckedContinuation<[DeliveryResult], Never>) in
            collector.whenDone(deadline: nil) { continuation.resume(returning: $0) }
            // Even slots from the home loop, odd ones from the other, interleaved.
            for (loop, first) in [(home, 0), (other, 1)] {
                loop.execute {
                    for slot in stride(from: first, to: count, by: 2) {
                        collector.complete(slot: slot, with: Self.delivered(slot))
                    }
                }
            }
        }
        #expect(results.count == count && results.allSatisfy { $0.status == .delivered })
        #expect(results.enumerated().allSatisfy { $0.element.token == "t\($0.offset)" })
    }

    @Test("expired from another thread, an unshared collector ends on its own loop")
    func expiredFromAnotherThread() async throws {
        let group = try EventLoopGroup(loopCount: 1, namePrefix: "collector-test")
        defer { group.shutdown() }
        let loop = group.loops[0]
        let collector = await Self.on(loop) { DeliveryCollector(placeholders: Self.placeholders(2)) }
        let (results, onLoop) = await withCheckedContinuation {
            (continuation: CheckedContinuation<([DeliveryResult], Bool), Never>) in
            loop.execute {
                collector.whenDone(deadline: nil) { continuation.resume(returning: ($0, loop.inEventLoop)) }
                collector.complete(slot: 0, with: Self.delivered(0))
            }
            // From the test's thread, not the loop: it hops there.
            collector.expire()
        }
        #expect(onLoop)
        // The expiry came after the loop's first task: slot 0's result stands.
        #expect(results.map(\.status) == [.delivered, .failed])
        #expect(results.last?.reason == "DeadlineExceeded")
    }

    @Test("unshared, it waits in its loop's deadline lanes: passed, the rest FAILS; answered first, it leaves them")
    func deadlineOnItsLoop() async throws {
        let group = try EventLoopGroup(loopCount: 1, namePrefix: "collector-test")
        defer { group.shutdown() }
        let loop = group.loops[0]
        let (late, early) = await Self.on(loop) {
            (
                DeliveryCollector(placeholders: Self.placeholders(2)),
                DeliveryCollector(placeholders: Self.placeholders(1))
            )
        }
        let results = await withCheckedContinuation { (continuation: CheckedContinuation<[DeliveryResult], Never>) in
            loop.execute {
                let deadline = loop.now + 30_000_000
                late.whenDone(deadline: MonotonicDeadline.instant(of: deadline)) { continuation.resume(returning: $0) }
                late.complete(slot: 1, with: Self.delivered(1))
                early.whenDone(deadline: MonotonicDeadline.instant(of: deadline)) { _ in }
                #expect(late.waitsForDeadline && early.waitsForDeadline)
                early.complete(slot: 0, with: Self.delivered(0))
                #expect(!early.waitsForDeadline)
            }
        }
        #expect(results.map(\.status) == [.failed, .delivered])
        #expect(results.first?.reason == "DeadlineExceeded")
        #expect(await Self.on(loop) { !late.waitsForDeadline && !late.isShared })
    }
}
