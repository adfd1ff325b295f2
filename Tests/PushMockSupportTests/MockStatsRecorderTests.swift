import PushMockSupport
import Testing

/// A mock's stats as the recorder keeps them: the shared counters, one counter of its own, and
/// recent messages that are plain numbers.
struct TestStats: MockServerStats {
    var counters = MockServerCounters()
    var recentMessages: [Int] = []
    var own = 0
}

@Suite("Stats recorder")
struct MockStatsRecorderTests {
    @Test("the ring keeps the last N messages, oldest first", arguments: [0, 1, 2, 3, 4, 5, 7, 12])
    func ring(recorded: Int) {
        let recorder = MockStatsRecorder<TestStats>(recordLimit: 3)
        let messages = Array(stride(from: 1, through: recorded, by: 1))
        for message in messages { recorder.record(message) }
        #expect(recorder.snapshot().recentMessages == Array(messages.suffix(3)))
    }

    @Test("a record limit of 0 (or below) keeps no messages but still applies the change", arguments: [0, -1])
    func noRing(limit: Int) {
        let recorder = MockStatsRecorder<TestStats>(recordLimit: limit)
        for message in 1...5 { recorder.record(message) { $0.own += message } }
        let stats = recorder.snapshot()
        #expect(stats.recentMessages == [])
        #expect(stats.own == 15)
    }

    @Test("record and update change the mock's own counters")
    func ownCounters() {
        let recorder = MockStatsRecorder<TestStats>(recordLimit: 10)
        recorder.update { $0.own = 40 }
        recorder.record(7) { $0.own += 2 }
        let stats = recorder.snapshot()
        #expect(stats.own == 42)
        #expect(stats.recentMessages == [7])
    }

    @Test("connection and stream events land in the shared counters")
    func events() {
        let recorder = MockStatsRecorder<TestStats>(recordLimit: 0)
        recorder.connectionOpened()
        recorder.connectionOpened()
        recorder.connectionOpened()
        recorder.connectionClosed(cancelledStreams: 2, handshakeFailed: false)
        recorder.connectionClosed(cancelledStreams: 0, handshakeFailed: true)
        recorder.streamOpened(inFlight: 1)
        recorder.streamOpened(inFlight: 5)
        recorder.streamOpened(inFlight: 3)
        recorder.streamCancelled()
        recorder.goAwaySent()
        let stats = recorder.snapshot()
        #expect(stats.connectionsOpened == 3)
        #expect(stats.connectionsClosed == 2)
        #expect(stats.handshakeFailures == 1)
        #expect(stats.streamsOpened == 3)
        #expect(stats.maxInFlight == 5, "the highest seen, not the last")
        #expect(stats.streamsCancelled == 3, "2 at a close, 1 reset")
        #expect(stats.goAwaysSent == 1)
    }

    @Test("answers count by status and, for errors, by their stats key")
    func answers() {
        let recorder = MockStatsRecorder<TestStats>(recordLimit: 0)
        recorder.answered(status: 200, error: nil)
        recorder.answered(status: 200, error: nil)
        recorder.answered(status: 503, error: "UNAVAILABLE")
        recorder.answered(status: 400, error: "INVALID_ARGUMENT")
        recorder.answered(status: 400, error: "INVALID_ARGUMENT")
        let stats = recorder.snapshot()
        #expect(stats.requests == 5)
        #expect(stats.byStatus == [200: 2, 503: 1, 400: 2])
        #expect(stats.byError == ["UNAVAILABLE": 1, "INVALID_ARGUMENT": 2])
        #expect(stats.count(status: 400) == 2)
        #expect(stats.count(status: 404) == 0)
        #expect(stats.count(error: "UNAVAILABLE") == 1)
        #expect(stats.count(error: "QUOTA_EXCEEDED") == 0)
    }

    @Test("reset clears everything but the connections still open")
    func reset() {
        let recorder = MockStatsRecorder<TestStats>(recordLimit: 4)
        for _ in 0..<3 { recorder.connectionOpened() }
        recorder.connectionClosed(cancelledStreams: 1, handshakeFailed: true)
        recorder.streamOpened(inFlight: 9)
        recorder.answered(status: 200, error: nil)
        recorder.record(1) { $0.own = 5 }
        recorder.reset()
        var stats = recorder.snapshot()
        #expect(stats.connectionsOpened == 2)
        #expect(stats.connectionsClosed == 0)
        #expect(stats.connectionsOpened - stats.connectionsClosed == 2, "the open-connection gauge survives")
        var expected = MockServerCounters()
        expected.connectionsOpened = 2
        #expect(stats.counters == expected)
        #expect(stats.own == 0)
        #expect(stats.recentMessages == [])
        // Closing a connection opened before the reset leaves the gauge at 1, not negative.
        recorder.connectionClosed(cancelledStreams: 0, handshakeFailed: false)
        stats = recorder.snapshot()
        #expect(stats.connectionsOpened - stats.connectionsClosed == 1)
        // The ring starts over after a reset.
        for message in 10...15 { recorder.record(message) }
        #expect(recorder.snapshot().recentMessages == [12, 13, 14, 15])
    }
}

@Suite("Server counters")
struct MockServerCountersTests {
    @Test("the answer summary lists statuses and errors sorted, errors only when there are some")
    func answerSummary() {
        var counters = MockServerCounters()
        #expect(counters.answerSummary == "requests=0 []")
        counters.requests = 6
        counters.byStatus = [503: 1, 200: 4, 429: 1]
        #expect(counters.answerSummary == "requests=6 [200=4 429=1 503=1]")
        counters.byError = ["UNAVAILABLE": 1, "QUOTA_EXCEEDED": 1]
        #expect(counters.answerSummary == "requests=6 [200=4 429=1 503=1] errors[QUOTA_EXCEEDED=1 UNAVAILABLE=1]")
    }

    @Test("the connection summary counts open connections as opened minus closed")
    func connectionSummary() {
        var counters = MockServerCounters()
        counters.streamsOpened = 12
        counters.streamsCancelled = 2
        counters.connectionsOpened = 5
        counters.connectionsClosed = 3
        counters.goAwaysSent = 1
        counters.maxInFlight = 7
        #expect(
            counters.connectionSummary == "streams=12 cancelled=2 connections=5 open=2 goaways=1 max_in_flight=7")
    }
}
