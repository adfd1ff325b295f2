import PushCore
import PushDelivery
import PushStore

/// Everything one claimed fan-out chunk decides, as a plain value: which store reads and writes
/// come next and in what order (held recipients first, then pages with up to ``Settings/pagesInFlight``
/// sent at once and committed in order, then finish or park), when held recipients are given up,
/// the park backoff, and how lease renewal, lease loss, store failures and shutdown end the work.
/// Events go in with the time (Unix ms); ``Action``s come out for the driver (``FanOut``'s chunk
/// run) to carry out. No I/O, no clock, no global randomness.
///
/// Durability: a page's results are committed (``Action/commit(cursor:counts:releasing:)``) only
/// after every page before it was, so the resume cursor never moves past a page not done; after
/// a stop nothing more is committed, and whoever claims the chunk next resends the pages in flight.
struct FanOutChunkMachine {
    struct Settings {
        /// `fanout.max_hold_seconds`: how long after the publish held recipients may wait.
        var maxHoldSeconds: Int
        /// Pages sent at once (see ``FanOut/pagesInFlight``).
        var pagesInFlight = FanOut.pagesInFlight
        /// The park backoff: 2 s doubling to 30 s (jittered ±20% by the machine).
        var park = RetryPolicy(initialBackoff: .seconds(2), maxBackoff: .seconds(30))
    }

    /// What a send is for; the driver picks the clients by it, the machine the counting.
    enum SendPurpose: Equatable {
        /// A direct publish's one recipient (with the clients as of the chunk's start).
        case endpoint
        /// Recipients a previous claim held (counted in `total` when first sent, not again).
        case holds
        /// A page of the topic's subscriptions.
        case page
    }

    enum Event: Sendable {
        /// A direct publish's endpoint as it is now; nil: deleted since the publish.
        case endpointRead(EndpointRecord?)
        case holdsRead([HeldRecipient])
        case pageRead([FanOutTarget], isLast: Bool)
        /// A send ended with these counts; `planExpired`: the message's TTL had run out when it
        /// was prepared.
        case sent(page: Int, FanOutCounts, planExpired: Bool)
        /// A commit was recorded; the chunk holds this many recipients now.
        case committed(held: Int64)
        /// The finish or park was recorded.
        case finished
        /// A store call (or building the message's plan) failed.
        case failed(any Error)
        /// A third of the lease passed.
        case leaseDue
        case leaseRenewed
        case leaseRenewalFailed(StoreError)
        /// The instance is stopping.
        case stop
        /// The message was cancelled (here or on another instance).
        case cancelled
    }

    enum Action: Equatable {
        case readEndpoint(id: String)
        case readHolds
        case readPage(after: String)
        /// Prepare these recipients with the message's plan and send them; answer with ``Event/sent(page:_:planExpired:)``.
        case send(page: Int, [FanOutTarget], SendPurpose)
        /// Report these held recipients FAILED (events, metrics), past the hold limit.
        case giveUp([GivenUp])
        /// Record results: disable and re-token endpoints, then the chunk's progress.
        case commit(cursor: String, counts: FanOutCounts, releasing: [String])
        case finish(cursor: String, state: MessageState)
        case park(cursor: String, until: Int64, now: Int64)
        case renewLease
        case log(LogLine)
        /// This claim's work on the chunk is over: cancel what still runs (sends, the lease timer).
        case end
    }

    struct GivenUp: Equatable {
        var endpoint: EndpointRecord
        var result: DeliveryResult
    }

    struct LogLine: Equatable {
        enum Level: Equatable { case info, warning, error }
        var level: Level
        var message: String
        var fields: KeyValuePairs<String, String>

        static func == (a: LogLine, b: LogLine) -> Bool {
            a.level == b.level && a.message == b.message && a.fields.elementsEqual(b.fields) { $0 == $1 }
        }
    }

    /// The store call (or commit) the machine waits for; one at a time.
    private enum Awaiting: Equatable {
        case endpoint, holds, page, finish
        case commit(Committing)
    }

    private enum Committing: Equatable { case endpoint, holds, page }

    private struct PageInFlight {
        var id: Int
        /// The cursor after the page's last recipient.
        var cursor: String
        var counts: FanOutCounts?
    }

    let chunk: FanOutChunk
    let settings: Settings
    private var random: SplitMix64
    private var awaiting: Awaiting?
    private(set) var isDone = false
    private var renewing = false
    /// Recipients held now (the last commit's answer).
    private var held: Int64
    private var expired = false
    /// The held recipients being sent again: their endpoint ids, and how many were deleted.
    private var holdsReleasing: [String] = []
    private var holdsDeleted: Int64 = 0
    private var cursor: String
    private var lastPageRead = false
    private var inFlight: [PageInFlight] = []
    private var nextPage = 0
    /// Logged once the park is recorded.
    private var parkedLog: LogLine?
    /// The message was cancelled: no new page is read or sent; the pages in flight are committed,
    /// then the chunk finishes `cancelled` (the store counts what it did not reach).
    private var cancelling = false
    /// A direct publish's or the held recipients' one send is out (not a page in flight).
    private var isSendingAlone = false

    init(chunk: FanOutChunk, settings: Settings, seed: UInt64) {
        self.chunk = chunk
        self.settings = settings
        random = SplitMix64(seed: seed)
        held = Int64(chunk.holds)
        cursor = chunk.cursor
    }

    private var isDirect: Bool { chunk.message.endpointID != nil }

    /// Unix ms after which held recipients are FAILED: `max_hold_seconds` after the fan-out's start
    /// (the publish, or its `deliver_at`).
    private var holdDeadline: Int64 { chunk.message.startsAt + Int64(settings.maxHoldSeconds) * 1000 }

    /// The first actions: a direct publish reads its endpoint; a chunk with holds sends to them
    /// first; else the first page.
    mutating func start(now: Int64) -> [Action] {
        if let endpointID = chunk.message.endpointID {
            awaiting = .endpoint
            return [.readEndpoint(id: endpointID)]
        }
        if chunk.holds > 0 { return readHolds() }
        return advancePages(now: now)
    }

    mutating func handle(_ event: Event, now: Int64) -> [Action] {
        guard !isDone else { return [] }
        switch event {
        case .endpointRead(let endpoint):
            guard case .endpoint = awaiting else { return [] }
            awaiting = nil
            if cancelling { return finishOrPark(cursor: "", now: now) }
            // A resumed chunk whose recipient is held sends to it as a held one (counted once).
            if chunk.holds > 0 { return readHolds() }
            guard let endpoint else {
                // Deleted since the publish: nothing to send; the message is still finished.
                return commit(.endpoint, cursor: "", counts: FanOutCounts(total: 1, skipped: 1))
            }
            isSendingAlone = true
            return [.send(page: takePageID(), [Self.target(endpoint)], .endpoint)]
        case .holdsRead(let recipients):
            guard case .holds = awaiting else { return [] }
            awaiting = nil
            if cancelling { return finishOrPark(cursor: chunk.cursor, now: now) }
            return resendHolds(recipients, now: now)
        case .pageRead(let targets, let isLast):
            guard case .page = awaiting else { return [] }
            awaiting = nil
            // Read as the cancel came: not sent; the store counts it from the cursor.
            if cancelling { return advancePages(now: now) }
            let id = takePageID()
            cursor = targets.last?.cursor ?? cursor
            inFlight.append(PageInFlight(id: id, cursor: cursor))
            lastPageRead = isLast
            return [.send(page: id, targets, .page)] + advancePages(now: now)
        case .sent(let page, var counts, let planExpired):
            expired = expired || planExpired
            return sent(page: page, counts: &counts, now: now)
        case .committed(let held):
            guard case .commit(let what) = awaiting else { return [] }
            awaiting = nil
            self.held = held
            switch what {
            case .endpoint: return finishOrPark(cursor: "", now: now)
            case .holds: return isDirect ? finishOrPark(cursor: "", now: now) : advancePages(now: now)
            case .page: return advancePages(now: now)
            }
        case .finished:
            guard case .finish = awaiting else { return [] }
            awaiting = nil
            return end(parkedLog.map { .log($0) })
        case .failed(let error):
            if let error = error as? StoreError, error.code == .conflict {
                return end(.log(takenOver(error: error)))
            }
            // The store failed (or the message vanished): leave the progress as committed; the lease
            // runs out and the chunk is resumed after the last committed page.
            return end(.log(LogLine(level: .error, message: "fan-out stopped", fields: fields(error: error))))
        case .leaseDue:
            guard !renewing else { return [] }
            renewing = true
            return [.renewLease]
        case .leaseRenewed:
            renewing = false
            return []
        case .leaseRenewalFailed(let error):
            renewing = false
            if error.code == .conflict || error.code == .notFound { return end(.log(takenOver(error: nil))) }
            return [
                .log(
                    LogLine(
                        level: .warning, message: "cannot renew a fan-out lease",
                        fields: ["message_id": chunk.message.id, "error": "\(error)"]))
            ]
        case .stop:
            // Sends in flight may have failed only because of the stop: their pages stay
            // uncommitted, and whoever resumes the chunk sends them again.
            return end(nil)
        case .cancelled:
            guard !cancelling else { return [] }
            cancelling = true
            let line = LogLine(
                level: .info, message: "fan-out chunk stopping: the message was cancelled",
                fields: ["message_id": chunk.message.id, "chunk": "\(chunk.number)"])
            // Waiting for a store call or a send: the chunk ends once that is done.
            guard awaiting == nil, inFlight.isEmpty, !isSendingAlone else { return [.log(line)] }
            return [.log(line)] + finishOrPark(cursor: cursor, now: now)
        }
    }

    // MARK: Held recipients

    private mutating func readHolds() -> [Action] {
        awaiting = .holds
        return [.readHolds]
    }

    /// Sends to the recipients a previous claim held; past the hold limit they are FAILED with
    /// their last reason instead.
    private mutating func resendHolds(_ recipients: [HeldRecipient], now: Int64) -> [Action] {
        let releasing = recipients.map(\.hold.endpointID)
        // Deleted while held: skipped.
        let deleted = Int64(recipients.count { $0.endpoint == nil })
        guard now < holdDeadline else {
            let givenUp = recipients.compactMap { recipient in
                recipient.endpoint.map { endpoint in
                    GivenUp(
                        endpoint: endpoint,
                        result: DeliveryResult(
                            notificationIndex: 0, token: endpoint.token, status: .failed,
                            code: .providerUnavailable,
                            reason: recipient.hold.reason + " (held for the provider for fanout.max_hold_seconds, "
                                + "\(settings.maxHoldSeconds) s after the publish)"))
                }
            }
            let counts = FanOutCounts(total: 0, failed: Int64(givenUp.count), skipped: deleted)
            let line = LogLine(
                level: .warning, message: "fan-out gave up waiting for the provider",
                fields: [
                    "message_id": chunk.message.id, "chunk": "\(chunk.number)", "failed": "\(counts.failed)",
                    "max_hold_seconds": "\(settings.maxHoldSeconds)",
                ])
            return [.giveUp(givenUp), .log(line)]
                + commit(.holds, cursor: chunk.cursor, counts: counts, releasing: releasing)
        }
        let targets = recipients.compactMap { $0.endpoint.map(Self.target) }
        holdsReleasing = releasing
        holdsDeleted = deleted
        isSendingAlone = true
        return [.send(page: takePageID(), targets, .holds)]
    }

    // MARK: Sends and pages

    /// A recipient sent to by itself (a direct publish's, a held one): no subscription, no filter.
    private static func target(_ endpoint: EndpointRecord) -> FanOutTarget {
        FanOutTarget(endpoint: endpoint)
    }

    private mutating func takePageID() -> Int {
        defer { nextPage += 1 }
        return nextPage
    }

    private mutating func sent(page: Int, counts: inout FanOutCounts, now: Int64) -> [Action] {
        if let index = inFlight.firstIndex(where: { $0.id == page }) {
            inFlight[index].counts = counts
            return advancePages(now: now)
        }
        // The one send of a direct publish or of held recipients is the last page started.
        guard page == nextPage - 1, awaiting == nil else { return [] }
        isSendingAlone = false
        if isDirect && chunk.holds == 0 {
            return commit(.endpoint, cursor: "", counts: counts)
        }
        counts.total = 0  // counted when first sent
        var total = FanOutCounts(total: 0, skipped: holdsDeleted)
        total.add(counts)
        return commit(.holds, cursor: chunk.cursor, counts: total, releasing: holdsReleasing)
    }

    /// Commits the oldest page once it was sent while the pages in flight are at their limit or
    /// the last was read; else reads the next page; after the last, finishes or parks.
    private mutating func advancePages(now: Int64) -> [Action] {
        guard awaiting == nil else { return [] }
        if inFlight.count >= settings.pagesInFlight || ((lastPageRead || cancelling) && !inFlight.isEmpty) {
            guard let counts = inFlight[0].counts else { return [] }
            let page = inFlight.removeFirst()
            return commit(.page, cursor: page.cursor, counts: counts)
        }
        if !lastPageRead && !cancelling {
            awaiting = .page
            return [.readPage(after: cursor)]
        }
        return finishOrPark(cursor: cursor, now: now)
    }

    private mutating func commit(
        _ what: Committing, cursor: String, counts: FanOutCounts, releasing: [String] = []
    ) -> [Action] {
        awaiting = .commit(what)
        return [.commit(cursor: cursor, counts: counts, releasing: releasing)]
    }

    // MARK: The end

    /// The chunk's pages are done: it finishes, or parks while recipients are held for their
    /// provider, to be claimed again after a backoff (never past the hold limit, at least 1 s) by
    /// this instance or another.
    private mutating func finishOrPark(cursor: String, now: Int64) -> [Action] {
        awaiting = .finish
        if cancelling { return [.finish(cursor: cursor, state: .cancelled)] }
        guard held > 0 else { return [.finish(cursor: cursor, state: expired ? .expired : .completed)] }
        let until = max(now + 1_000, min(now + parkBackoffMillis(), holdDeadline))
        parkedLog = LogLine(
            level: .info, message: "fan-out waiting for the provider",
            fields: [
                "message_id": chunk.message.id, "chunk": "\(chunk.number)", "held": "\(held)",
                "retry_in_ms": "\(until - now)",
            ])
        return [.park(cursor: cursor, until: until, now: now)]
    }

    /// The park's step for the chunk's parkings so far, jittered ±20%.
    private mutating func parkBackoffMillis() -> Int64 {
        let step = settings.park.step(afterAttempt: chunk.parkings + 1) / .milliseconds(1)
        let unit = Double(random.next() >> 11) * 0x1p-53
        return Int64(step * (0.8 + 0.4 * unit))
    }

    private mutating func end(_ first: Action?) -> [Action] {
        isDone = true
        return (first.map { [$0] } ?? []) + [.end]
    }

    private func takenOver(error: StoreError?) -> LogLine {
        let message = "fan-out chunk taken over by another instance; stopping it here"
        guard let error else {
            return LogLine(
                level: .warning, message: message, fields: ["message_id": chunk.message.id, "chunk": "\(chunk.number)"])
        }
        return LogLine(level: .warning, message: message, fields: fields(error: error))
    }

    private func fields(error: any Error) -> KeyValuePairs<String, String> {
        ["message_id": chunk.message.id, "chunk": "\(chunk.number)", "error": "\(error)"]
    }
}
