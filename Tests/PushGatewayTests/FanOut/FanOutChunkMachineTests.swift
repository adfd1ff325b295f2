import PushCore
import PushStore
import Testing

@testable import PushGateway

/// The fan-out chunk's state machine, driven without a store, clients or tasks: every store
/// answer, send result and lease tick is an event, every store call, send and log line an action.
@Suite("Fan-out chunk state machine")
struct FanOutChunkMachineTests {
    typealias Machine = FanOutChunkMachine
    typealias Action = Machine.Action

    static let publishedAt: Int64 = 1_800_000_000_000
    static let maxHoldSeconds = 600
    static let deadline = publishedAt + Int64(maxHoldSeconds) * 1000

    static func message(direct: Bool = false) -> MessageRecord {
        MessageRecord(
            id: "m1", topic: direct ? nil : "news", endpointID: direct ? "e-direct" : nil, message: "hi",
            publishedAt: publishedAt)
    }

    static func chunk(
        direct: Bool = false, cursor: String = "", holds: Int = 0, parkings: Int = 0
    ) -> FanOutChunk {
        FanOutChunk(
            message: message(direct: direct), number: 4, cursor: cursor, end: nil, leaseExpiresAt: 0, claim: "c",
            holds: holds, parkings: parkings)
    }

    static func endpoint(_ id: String) -> EndpointRecord {
        EndpointRecord(
            id: id, app: "app", token: "token-\(id)", enabled: true, customUserData: "", createdAt: 0,
            disabledReason: "")
    }

    static func target(_ id: String, position: Int64 = 0) -> FanOutTarget {
        FanOutTarget(
            subscription: SubscriptionRecord(
                id: "", topic: position == 0 ? "" : "news", endpointID: id, filterPolicyJSON: ""),
            endpoint: endpoint(id), position: position)
    }

    /// The cursor after page n (its second target's position).
    static func c(_ n: Int) -> String { target("", position: Int64(2 * n + 2)).cursor }

    /// Two targets per page: page n holds p<n>a and p<n>b, its cursor after them `c(n)`.
    static func page(_ n: Int) -> [FanOutTarget] {
        [target("p\(n)a", position: Int64(2 * n + 1)), target("p\(n)b", position: Int64(2 * n + 2))]
    }

    static let takenOver = "fan-out chunk taken over by another instance; stopping it here"

    static func log(_ level: Machine.LogLine.Level, _ message: String, _ fields: KeyValuePairs<String, String>)
        -> Action
    {
        .log(Machine.LogLine(level: level, message: message, fields: fields))
    }

    static func delivered(_ n: Int64) -> FanOutCounts { FanOutCounts(total: n, delivered: n) }

    /// A machine and the time.
    struct Rig {
        var machine: Machine
        var now: Int64 = FanOutChunkMachineTests.publishedAt + 5_000

        init(_ chunk: FanOutChunk, seed: UInt64 = 7) {
            machine = Machine(
                chunk: chunk, settings: Machine.Settings(maxHoldSeconds: FanOutChunkMachineTests.maxHoldSeconds),
                seed: seed)
        }

        mutating func start() -> [Action] { machine.start(now: now) }
        mutating func on(_ event: Machine.Event) -> [Action] { machine.handle(event, now: now) }

        /// Starts a topic chunk and has it read pages 0 and 1 (sent, not answered yet).
        mutating func readTwoPages(secondIsLast: Bool) {
            _ = start()
            _ = on(.pageRead(FanOutChunkMachineTests.page(0), isLast: false))
            _ = on(.pageRead(FanOutChunkMachineTests.page(1), isLast: secondIsLast))
        }

        /// Reads `count` pages from page `first` on and sends each to both its recipients, committing
        /// with `held` held, as the machine asks; answers the actions after the last commit.
        mutating func runPages(from first: Int, count: Int, held: Int64 = 0) -> [Action] {
            var page = first
            var left = count - 1
            var pending = on(.pageRead(FanOutChunkMachineTests.page(page), isLast: left == 0))
            while let action = pending.first {
                switch action {
                case .readPage:
                    page += 1
                    left -= 1
                    pending = on(.pageRead(FanOutChunkMachineTests.page(page), isLast: left == 0)) + pending.dropFirst()
                case .send(let id, let targets, _):
                    pending =
                        Array(pending.dropFirst())
                        + on(.sent(page: id, delivered(Int64(targets.count)), planExpired: false))
                case .commit:
                    pending = Array(pending.dropFirst()) + on(.committed(held: held))
                default: return pending
                }
            }
            return pending
        }
    }

    @Test func aTopicChunkReadsSendsAndCommitsItsPagesInOrderThenFinishes() {
        var rig = Rig(Self.chunk())
        #expect(rig.start() == [.readPage(after: "")])
        #expect(
            rig.on(.pageRead(Self.page(0), isLast: false)) == [
                .send(page: 0, Self.page(0), .page), .readPage(after: Self.c(0)),
            ])
        #expect(
            rig.on(.pageRead(Self.page(1), isLast: false)) == [
                .send(page: 1, Self.page(1), .page), .readPage(after: Self.c(1)),
            ])
        // Three pages in flight: the next waits for the oldest's commit.
        #expect(rig.on(.pageRead(Self.page(2), isLast: false)) == [.send(page: 2, Self.page(2), .page)])
        // A later page's results wait for the earlier ones: the cursor only moves past pages done.
        #expect(rig.on(.sent(page: 1, Self.delivered(2), planExpired: false)) == [])
        #expect(
            rig.on(.sent(page: 0, FanOutCounts(total: 2, delivered: 1, failed: 1), planExpired: false)) == [
                .commit(cursor: Self.c(0), counts: FanOutCounts(total: 2, delivered: 1, failed: 1), releasing: [])
            ])
        // A tick of the lease meanwhile renews it alongside.
        #expect(rig.on(.leaseDue) == [.renewLease])
        #expect(rig.on(.committed(held: 0)) == [.readPage(after: Self.c(2))])
        #expect(rig.on(.leaseRenewed) == [])
        #expect(
            rig.on(.pageRead(Self.page(3), isLast: true)) == [
                .send(page: 3, Self.page(3), .page),
                .commit(cursor: Self.c(1), counts: Self.delivered(2), releasing: []),
            ])
        #expect(rig.on(.committed(held: 0)) == [])
        #expect(rig.on(.sent(page: 3, Self.delivered(2), planExpired: false)) == [])
        #expect(
            rig.on(.sent(page: 2, Self.delivered(2), planExpired: false)) == [
                .commit(cursor: Self.c(2), counts: Self.delivered(2), releasing: [])
            ])
        #expect(rig.on(.committed(held: 0)) == [.commit(cursor: Self.c(3), counts: Self.delivered(2), releasing: [])])
        #expect(rig.on(.committed(held: 0)) == [.finish(cursor: Self.c(3), state: .completed)])
        #expect(!rig.machine.isDone)
        #expect(rig.on(.finished) == [.end])
        #expect(rig.machine.isDone)
        #expect(rig.on(.leaseDue) == [])
    }

    @Test func anEmptyLastPageIsStillCommittedWithTheCursorWhereItWas() {
        var rig = Rig(Self.chunk(cursor: Self.c(9)))
        #expect(rig.start() == [.readPage(after: Self.c(9))])
        #expect(rig.on(.pageRead([], isLast: true)) == [.send(page: 0, [], .page)])
        #expect(
            rig.on(.sent(page: 0, FanOutCounts(total: 0), planExpired: false)) == [
                .commit(cursor: Self.c(9), counts: FanOutCounts(total: 0), releasing: [])
            ])
        #expect(rig.on(.committed(held: 0)) == [.finish(cursor: Self.c(9), state: .completed)])
    }

    @Test func aMessageWhoseTTLRanOutFinishesExpired() {
        var rig = Rig(Self.chunk())
        rig.readTwoPages(secondIsLast: true)
        _ = rig.on(.sent(page: 0, FanOutCounts(total: 2, skipped: 2), planExpired: true))
        _ = rig.on(.committed(held: 0))
        _ = rig.on(.sent(page: 1, FanOutCounts(total: 2, skipped: 2), planExpired: true))
        #expect(rig.on(.committed(held: 0)) == [.finish(cursor: Self.c(1), state: .expired)])
    }

    @Test func aChunkClaimedAgainResumesFromItsCursorAfterItsHeldRecipients() {
        // A previous claim died after committing through Self.c(1) and holding two recipients.
        var rig = Rig(Self.chunk(cursor: Self.c(1), holds: 2, parkings: 1))
        #expect(rig.start() == [.readHolds])
        let held = [
            HeldRecipient(hold: FanOutHold(endpointID: "h1", reason: "Unavailable"), endpoint: Self.endpoint("h1")),
            HeldRecipient(hold: FanOutHold(endpointID: "h2", reason: "Unavailable"), endpoint: nil),
        ]
        #expect(rig.on(.holdsRead(held)) == [.send(page: 0, [Self.target("h1")], .holds)])
        // Held recipients were counted in total when first sent: not again; the deleted one is skipped.
        #expect(
            rig.on(.sent(page: 0, Self.delivered(1), planExpired: false)) == [
                .commit(
                    cursor: Self.c(1), counts: FanOutCounts(total: 0, delivered: 1, skipped: 1),
                    releasing: ["h1", "h2"])
            ])
        #expect(rig.on(.committed(held: 0)) == [.readPage(after: Self.c(1))])
        #expect(rig.on(.pageRead(Self.page(2), isLast: true)) == [.send(page: 1, Self.page(2), .page)])
        #expect(
            rig.on(.sent(page: 1, Self.delivered(2), planExpired: false)) == [
                .commit(cursor: Self.c(2), counts: Self.delivered(2), releasing: [])
            ])
        #expect(rig.on(.committed(held: 0)) == [.finish(cursor: Self.c(2), state: .completed)])
    }

    @Test func leaseLossMidChunkStopsItWithNothingMoreCommitted() {
        var rig = Rig(Self.chunk())
        rig.readTwoPages(secondIsLast: false)
        #expect(rig.on(.leaseDue) == [.renewLease])
        // One renewal at a time.
        #expect(rig.on(.leaseDue) == [])
        let timeout = StoreError(.io, message: "timeout")
        #expect(
            rig.on(.leaseRenewalFailed(timeout)) == [
                Self.log(.warning, "cannot renew a fan-out lease", ["message_id": "m1", "error": "\(timeout)"])
            ])
        #expect(!rig.machine.isDone)
        #expect(rig.on(.leaseDue) == [.renewLease])
        #expect(
            rig.on(.leaseRenewalFailed(StoreError(.conflict, message: "taken"))) == [
                Self.log(.warning, Self.takenOver, ["message_id": "m1", "chunk": "4"]), .end,
            ])
        #expect(rig.machine.isDone)
        // The pages in flight stay uncommitted: whoever took the chunk sends them again.
        #expect(rig.on(.sent(page: 0, Self.delivered(2), planExpired: false)) == [])
        #expect(rig.on(.pageRead(Self.page(2), isLast: true)) == [])
    }

    @Test func aCommitRefusedForAnotherClaimStopsTheChunk() {
        var rig = Rig(Self.chunk())
        _ = rig.start()
        _ = rig.on(.pageRead(Self.page(0), isLast: true))
        _ = rig.on(.sent(page: 0, Self.delivered(2), planExpired: false))
        let conflict = StoreError(.conflict, message: "claim")
        #expect(
            rig.on(.failed(conflict)) == [
                Self.log(.warning, Self.takenOver, ["message_id": "m1", "chunk": "4", "error": "\(conflict)"]), .end,
            ])
        #expect(rig.on(.committed(held: 0)) == [])
    }

    @Test func aFailingStoreStopsTheChunkForTheLeaseToRunOut() {
        var rig = Rig(Self.chunk())
        _ = rig.start()
        let down = StoreError(.io, message: "down")
        #expect(
            rig.on(.failed(down)) == [
                Self.log(.error, "fan-out stopped", ["message_id": "m1", "chunk": "4", "error": "\(down)"]),
                .end,
            ])
    }

    @Test func aStopEndsTheChunkWithoutCommittingThePagesInFlight() {
        var rig = Rig(Self.chunk())
        rig.readTwoPages(secondIsLast: true)
        #expect(rig.on(.stop) == [.end])
        #expect(rig.on(.sent(page: 0, Self.delivered(2), planExpired: false)) == [])
        #expect(rig.on(.stop) == [])
    }

    @Test func aDirectPublishSendsToItsEndpointAndFinishes() {
        var rig = Rig(Self.chunk(direct: true))
        #expect(rig.start() == [.readEndpoint(id: "e-direct")])
        #expect(
            rig.on(.endpointRead(Self.endpoint("e-direct"))) == [.send(page: 0, [Self.target("e-direct")], .endpoint)])
        let rejected = FanOutCounts(
            total: 1, rejected: 1, disable: [(id: "e-direct", reason: "Unregistered", app: "app", token: "t")])
        #expect(
            rig.on(.sent(page: 0, rejected, planExpired: false)) == [
                .commit(cursor: "", counts: rejected, releasing: [])
            ])
        #expect(rig.on(.committed(held: 0)) == [.finish(cursor: "", state: .completed)])
    }

    @Test func aDirectPublishToADeletedEndpointCountsItSkipped() {
        var rig = Rig(Self.chunk(direct: true))
        _ = rig.start()
        #expect(
            rig.on(.endpointRead(nil)) == [
                .commit(cursor: "", counts: FanOutCounts(total: 1, skipped: 1), releasing: [])
            ])
        #expect(rig.on(.committed(held: 0)) == [.finish(cursor: "", state: .completed)])
    }

    @Test func aDirectPublishClaimedWithItsRecipientHeldSendsToItAsAHeldOne() {
        var rig = Rig(Self.chunk(direct: true, holds: 1, parkings: 2))
        _ = rig.start()
        #expect(rig.on(.endpointRead(Self.endpoint("e-direct"))) == [.readHolds])
        let held = [
            HeldRecipient(
                hold: FanOutHold(endpointID: "e-direct", reason: "Unavailable"), endpoint: Self.endpoint("e-direct"))
        ]
        #expect(rig.on(.holdsRead(held)) == [.send(page: 0, [Self.target("e-direct")], .holds)])
        #expect(
            rig.on(.sent(page: 0, Self.delivered(1), planExpired: false)) == [
                .commit(cursor: "", counts: FanOutCounts(total: 0, delivered: 1), releasing: ["e-direct"])
            ])
        #expect(rig.on(.committed(held: 0)) == [.finish(cursor: "", state: .completed)])
    }

    /// What the machine's jitter draws first with `seed`, as a factor in [0.8, 1.2).
    static func jitter(seed: UInt64) -> Double {
        var random = SplitMix64(seed: seed)
        return 0.8 + 0.4 * (Double(random.next() >> 11) * 0x1p-53)
    }

    @Test func heldRecipientsParkTheChunkThenResumeThenSucceed() {
        let hold = FanOutCounts(total: 2, delivered: 1, hold: [(id: "p0b", reason: "Unavailable", app: "app")])
        // First claim: the page holds one recipient; the chunk parks 2 s (jittered) and logs it once recorded.
        var first = Rig(Self.chunk(), seed: 11)
        _ = first.start()
        _ = first.on(.pageRead(Self.page(0), isLast: true))
        #expect(
            first.on(.sent(page: 0, hold, planExpired: false)) == [
                .commit(cursor: Self.c(0), counts: hold, releasing: [])
            ])
        let until = first.now + Int64(2_000 * Self.jitter(seed: 11))
        #expect(first.on(.committed(held: 1)) == [.park(cursor: Self.c(0), until: until, now: first.now)])
        #expect(
            first.on(.finished) == [
                Self.log(
                    .info, "fan-out waiting for the provider",
                    ["message_id": "m1", "chunk": "4", "held": "1", "retry_in_ms": "\(until - first.now)"]),
                .end,
            ])

        // Second claim after the park: still unavailable; it parks again, 4 s this time.
        let held = [
            HeldRecipient(hold: FanOutHold(endpointID: "p0b", reason: "Unavailable"), endpoint: Self.endpoint("p0b"))
        ]
        var second = Rig(Self.chunk(cursor: Self.c(0), holds: 1, parkings: 1), seed: 12)
        second.now = until + 10
        #expect(second.start() == [.readHolds])
        #expect(second.on(.holdsRead(held)) == [.send(page: 0, [Self.target("p0b")], .holds)])
        let again = FanOutCounts(total: 1, hold: [(id: "p0b", reason: "Unavailable", app: "app")])
        #expect(
            second.on(.sent(page: 0, again, planExpired: false)) == [
                .commit(
                    cursor: Self.c(0),
                    counts: FanOutCounts(total: 0, hold: [(id: "p0b", reason: "Unavailable", app: "app")]),
                    releasing: ["p0b"])
            ])
        #expect(second.on(.committed(held: 1)) == [.readPage(after: Self.c(0))])
        #expect(second.on(.pageRead([], isLast: true)) == [.send(page: 1, [], .page)])
        #expect(
            second.on(.sent(page: 1, FanOutCounts(total: 0), planExpired: false)) == [
                .commit(cursor: Self.c(0), counts: FanOutCounts(total: 0), releasing: [])
            ])
        let secondUntil = second.now + Int64(4_000 * Self.jitter(seed: 12))
        #expect(second.on(.committed(held: 1)) == [.park(cursor: Self.c(0), until: secondUntil, now: second.now)])

        // Third claim: the provider is back; the recipient is delivered and the chunk finishes.
        var third = Rig(Self.chunk(cursor: Self.c(0), holds: 1, parkings: 2))
        third.now = secondUntil + 10
        _ = third.start()
        _ = third.on(.holdsRead(held))
        #expect(
            third.on(.sent(page: 0, Self.delivered(1), planExpired: false)) == [
                .commit(cursor: Self.c(0), counts: FanOutCounts(total: 0, delivered: 1), releasing: ["p0b"])
            ])
        #expect(third.on(.committed(held: 0)) == [.readPage(after: Self.c(0))])
        #expect(third.runPages(from: 0, count: 1) == [.finish(cursor: Self.c(0), state: .completed)])
        #expect(third.on(.finished) == [.end])
    }

    @Test func parkBackoffDoublesFrom2sTo30sJitteredBy20Percent() {
        let steps: [Int64] = [2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000]
        for (parkings, step) in steps.enumerated() {
            for seed: UInt64 in [1, 2, 3, 99] {
                var rig = Rig(Self.chunk(parkings: parkings), seed: seed)
                _ = rig.start()
                let park = rig.runPages(from: 0, count: 1, held: 1)
                let expected = rig.now + Int64(Double(step) * Self.jitter(seed: seed))
                #expect(
                    park == [.park(cursor: Self.c(0), until: expected, now: rig.now)],
                    "parkings \(parkings) seed \(seed)")
                #expect(expected - rig.now >= step * 8 / 10 && expected - rig.now < step * 12 / 10)
            }
        }
    }

    @Test func aParkNeverOutlastsTheHoldDeadlineButIsAtLeastOneSecond() {
        var near = Rig(Self.chunk(parkings: 4))
        near.now = Self.deadline - 3_000
        _ = near.start()
        #expect(
            near.runPages(from: 0, count: 1, held: 1) == [.park(cursor: Self.c(0), until: Self.deadline, now: near.now)]
        )

        var past = Rig(Self.chunk())
        past.now = Self.deadline - 200
        _ = past.start()
        #expect(
            past.runPages(from: 0, count: 1, held: 1) == [
                .park(cursor: Self.c(0), until: past.now + 1_000, now: past.now)
            ])
    }

    @Test func heldRecipientsPastTheHoldDeadlineAreFailedWithTheirLastReason() {
        var rig = Rig(Self.chunk(cursor: Self.c(3), holds: 2, parkings: 9))
        rig.now = Self.deadline
        _ = rig.start()
        let held = [
            HeldRecipient(
                hold: FanOutHold(endpointID: "h1", reason: "ServiceUnavailable"), endpoint: Self.endpoint("h1")),
            HeldRecipient(hold: FanOutHold(endpointID: "h2", reason: "Unavailable"), endpoint: nil),
        ]
        let failed = DeliveryResult(
            notificationIndex: 0, token: "token-h1", status: .failed, code: .providerUnavailable,
            reason: "ServiceUnavailable (held for the provider for fanout.max_hold_seconds, 600 s after the publish)")
        #expect(
            rig.on(.holdsRead(held)) == [
                .giveUp([Machine.GivenUp(endpoint: Self.endpoint("h1"), result: failed)]),
                Self.log(
                    .warning, "fan-out gave up waiting for the provider",
                    ["message_id": "m1", "chunk": "4", "failed": "1", "max_hold_seconds": "600"]),
                .commit(
                    cursor: Self.c(3), counts: FanOutCounts(total: 0, failed: 1, skipped: 1), releasing: ["h1", "h2"]),
            ])
        #expect(rig.on(.committed(held: 0)) == [.readPage(after: Self.c(3))])
        #expect(rig.runPages(from: 4, count: 3) == [.finish(cursor: Self.c(6), state: .completed)])
        #expect(rig.on(.finished) == [.end])
    }

    // MARK: Cancelling

    static let cancelLog = log(
        .info, "fan-out chunk stopping: the message was cancelled", ["message_id": "m1", "chunk": "4"])

    @Test func aCancelReadsNoMorePagesCommitsThoseInFlightInOrderThenFinishesCancelled() {
        var rig = Rig(Self.chunk())
        _ = rig.start()
        _ = rig.on(.pageRead(Self.page(0), isLast: false))
        _ = rig.on(.pageRead(Self.page(1), isLast: false))
        // Page 2 is being read as the cancel comes: it is not sent, and the cursor stays after page 1.
        #expect(rig.on(.cancelled) == [Self.cancelLog])
        #expect(rig.on(.pageRead(Self.page(2), isLast: false)) == [])
        #expect(rig.on(.sent(page: 1, Self.delivered(2), planExpired: false)) == [])
        #expect(
            rig.on(.sent(page: 0, Self.delivered(2), planExpired: false)) == [
                .commit(cursor: Self.c(0), counts: Self.delivered(2), releasing: [])
            ])
        #expect(rig.on(.committed(held: 0)) == [.commit(cursor: Self.c(1), counts: Self.delivered(2), releasing: [])])
        #expect(rig.on(.committed(held: 0)) == [.finish(cursor: Self.c(1), state: .cancelled)])
        #expect(rig.on(.cancelled) == [])
        #expect(rig.on(.finished) == [.end])
    }

    @Test func aCancelWhileAPageIsCommittedFinishesAfterTheCommitEvenWithHeldRecipients() {
        var rig = Rig(Self.chunk())
        _ = rig.start()
        _ = rig.on(.pageRead(Self.page(0), isLast: true))
        #expect(
            rig.on(.sent(page: 0, Self.delivered(2), planExpired: false)) == [
                .commit(cursor: Self.c(0), counts: Self.delivered(2), releasing: [])
            ])
        #expect(rig.on(.cancelled) == [Self.cancelLog])
        // Held recipients do not park a cancelled chunk: the store counts them cancelled.
        #expect(rig.on(.committed(held: 1)) == [.finish(cursor: Self.c(0), state: .cancelled)])
    }

    @Test func aCancelBeforeADirectPublishIsSentFinishesWithoutSending() {
        var rig = Rig(Self.chunk(direct: true))
        _ = rig.start()
        #expect(rig.on(.cancelled) == [Self.cancelLog])
        #expect(rig.on(.endpointRead(Self.endpoint("e-direct"))) == [.finish(cursor: "", state: .cancelled)])
    }

    @Test func aCancelWhileADirectPublishIsSentCommitsItsResultFirst() {
        var rig = Rig(Self.chunk(direct: true))
        _ = rig.start()
        _ = rig.on(.endpointRead(Self.endpoint("e-direct")))
        #expect(rig.on(.cancelled) == [Self.cancelLog])
        #expect(
            rig.on(.sent(page: 0, Self.delivered(1), planExpired: false)) == [
                .commit(cursor: "", counts: Self.delivered(1), releasing: [])
            ])
        #expect(rig.on(.committed(held: 0)) == [.finish(cursor: "", state: .cancelled)])
    }

    @Test func aResumedChunkCancelledWhileReadingItsHoldsFinishesWithoutSendingThem() {
        var rig = Rig(Self.chunk(cursor: Self.c(1), holds: 2, parkings: 1))
        #expect(rig.start() == [.readHolds])
        #expect(rig.on(.cancelled) == [Self.cancelLog])
        #expect(rig.on(.holdsRead([])) == [.finish(cursor: Self.c(1), state: .cancelled)])
    }

    @Test func theHoldDeadlineCountsFromDeliverAt() {
        var message = Self.message()
        message.deliverAt = Self.publishedAt + 3_600_000
        let chunk = FanOutChunk(
            message: message, number: 4, cursor: Self.c(1), end: nil, leaseExpiresAt: 0, claim: "c", holds: 1,
            parkings: 1)
        var rig = Rig(chunk)
        // Past publishedAt + max_hold_seconds, within deliverAt + max_hold_seconds: still sent again.
        rig.now = Self.deadline + 60_000
        _ = rig.start()
        let held = HeldRecipient(hold: FanOutHold(endpointID: "h", reason: "Unavailable"), endpoint: Self.endpoint("h"))
        #expect(rig.on(.holdsRead([held])) == [.send(page: 0, [Self.target("h")], .holds)])
    }
}
