import PushPosix
import PushSync

/// What a ``MockHTTP2Connection`` reports as it goes: connection and stream events, and each
/// answer it hands to HTTP/2.
package protocol MockConnectionEvents: Sendable {
    func connectionOpened()
    func connectionClosed(cancelledStreams: Int, handshakeFailed: Bool)
    func streamOpened(inFlight: Int)
    func streamCancelled()
    func goAwaySent()
    /// Counts an answer; `error` is its stats key when it was one.
    func answered(status: Int, error: String?)
}

/// A mock server's statistics behind a lock, with a ring of the last recorded messages.
///
/// Counters are updated before a response is handed to HTTP/2: by the time a client has read a
/// response, a snapshot counts it.
package final class MockStatsRecorder<Stats: MockServerStats>: MockConnectionEvents, Sendable {
    private struct State {
        var stats = Stats()
        var ring: [Stats.Message] = []
        var next = 0
    }

    private let state = Locked(State())
    private let recordLimit: Int

    /// Keeps the last `recordLimit` messages (0 = none).
    package init(recordLimit: Int) {
        self.recordLimit = max(0, recordLimit)
    }

    package func update(_ change: (inout Stats) -> Void) {
        state.withLock { change(&$0.stats) }
    }

    /// Applies `change` and records `message` in the ring, in one step.
    package func record(_ message: Stats.Message, _ change: (inout Stats) -> Void = { _ in }) {
        state.withLock { state in
            change(&state.stats)
            guard recordLimit > 0 else { return }
            if state.ring.count < recordLimit {
                state.ring.append(message)
            } else {
                state.ring[state.next] = message
            }
            state.next = (state.next + 1) % recordLimit
        }
    }

    package func snapshot() -> Stats {
        state.withLock { state in
            var stats = state.stats
            stats.recentMessages =
                state.ring.count < recordLimit
                ? state.ring : Array(state.ring[state.next...] + state.ring[..<state.next])
            return stats
        }
    }

    package func reset() {
        state.withLock { state in
            // Keep the connection gauge: connections still open would otherwise go negative.
            let open = state.stats.counters.connectionsOpened - state.stats.counters.connectionsClosed
            state = State()
            state.stats.counters.connectionsOpened = open
        }
    }

    // MARK: MockConnectionEvents

    private func counters(_ change: (inout MockServerCounters) -> Void) {
        state.withLock { change(&$0.stats.counters) }
    }

    package func connectionOpened() { counters { $0.connectionsOpened += 1 } }

    package func connectionClosed(cancelledStreams: Int, handshakeFailed: Bool) {
        counters { stats in
            stats.connectionsClosed += 1
            stats.streamsCancelled += cancelledStreams
            if handshakeFailed { stats.handshakeFailures += 1 }
        }
    }

    package func streamOpened(inFlight: Int) {
        counters { stats in
            stats.streamsOpened += 1
            stats.maxInFlight = max(stats.maxInFlight, inFlight)
        }
    }

    package func streamCancelled() { counters { $0.streamsCancelled += 1 } }

    package func goAwaySent() { counters { $0.goAwaysSent += 1 } }

    package func answered(status: Int, error: String?) {
        counters { stats in
            stats.requests += 1
            stats.byStatus[status, default: 0] += 1
            if let error { stats.byError[error, default: 0] += 1 }
        }
    }
}
