import PushPosix
import PushStore
import PushSync

/// Writes the webhook events that are not part of a store transaction (a Send's results) to the
/// outbox, a batch every few milliseconds, so a
/// Send never waits for the store. Bounded: past ``maxBuffered`` events waiting to be written,
/// new ones are dropped and counted (the store is failing or far behind).
final class WebhookOutboxWriter: Sendable {
    static let maxBuffered = 100_000
    static let interval: Duration = .milliseconds(20)

    private struct State {
        var buffered: [OutboxEvent] = []
        var writer: Task<Void, Never>?
        var stopped = false
    }

    private let state = Locked(State())
    private let store: any Store
    private let log: Log
    private let dropped: @Sendable (String, Int) -> Void

    /// `dropped(webhook, count)`: events that could not be buffered.
    init(store: any Store, log: Log, dropped: @escaping @Sendable (String, Int) -> Void) {
        self.store = store
        self.log = log
        self.dropped = dropped
    }

    func append(_ events: [OutboxEvent]) {
        guard !events.isEmpty else { return }
        let refused = state.withLock { state -> [OutboxEvent] in
            guard !state.stopped, state.buffered.count + events.count <= Self.maxBuffered else { return events }
            state.buffered += events
            if state.writer == nil {
                state.writer = Task { [self] in await writeLoop() }
            }
            return []
        }
        for event in refused { dropped(event.webhook, 1) }
    }

    /// Writes what is buffered, until nothing is; a failed write is tried again after a second
    /// (once stopping: dropped, and counted).
    private func writeLoop() async {
        while true {
            let stopping = state.withLock { $0.stopped }
            if !stopping { try? await Task.sleep(for: Self.interval) }
            let batch = state.withLock { state -> [OutboxEvent] in
                defer { state.buffered.removeAll(keepingCapacity: true) }
                if state.buffered.isEmpty { state.writer = nil }
                return state.buffered
            }
            guard !batch.isEmpty else { return }
            do {
                try await store.appendOutbox(batch)
            } catch {
                if state.withLock({ $0.stopped }) {
                    log.warning("could not write webhook events at shutdown", ["error": "\(error)"])
                    for event in batch { dropped(event.webhook, 1) }
                    continue
                }
                log.warning("could not write webhook events; trying again", ["error": "\(error)"])
                state.withLock { $0.buffered.insert(contentsOf: batch, at: 0) }
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }

    /// Takes no more events and waits until what is buffered is written (shutdown).
    func flush() async {
        let writer = state.withLock { state -> Task<Void, Never>? in
            state.stopped = true
            return state.writer
        }
        await writer?.value
    }
}
