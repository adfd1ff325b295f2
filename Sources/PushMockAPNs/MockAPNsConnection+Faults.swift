import PushCore
import PushHTTP2
import PushMockSupport
import PushPosix
import PushTransport

/// The connection-level faults (GOAWAY, stall, drop) and the stats merged once per turn.
extension MockAPNsConnection {
    /// GOAWAY NO_ERROR with `{"reason":"Shutdown"}`; the transport closes once the streams up to
    /// `lastStreamID` are answered (nghttp2 then wants neither to read nor to write).
    func sendGoAway(lastStreamID: Int32) {
        goAwayLastStreamID = lastStreamID
        try? session.goAway(errorCode: .noError, lastStreamID: lastStreamID, debugData: Bytes.shutdownDebugData)
        delta.goAwaysSent += 1
        scheduleStatsFlush()
    }

    /// GOAWAY whose last-stream-id is the last stream answered: every stream still waiting for its
    /// answer is above it, so it is refused here and never answered (the client resends them).
    func goAwayBelowInFlight() {
        let last = highestAnsweredStreamID
        sendGoAway(lastStreamID: last)
        for stream in streams.values where !stream.responded && stream.streamID > last {
            // Never answered, never counted: as if the server had not processed it.
            stream.answered = true
            stream.closed = true
            try? session.resetStream(streamID: stream.streamID, errorCode: .refusedStream)
        }
    }

    /// Goes silent: no more reading (PINGs stay unanswered) and no answers, socket left open.
    func stall() {
        stalled = true
        delta.connectionsStalled += 1
        scheduleStatsFlush()
        transport.connection?.pauseReading()
    }

    func dropConnection() {
        dropped = true
        delta.connectionsDropped += 1
        scheduleStatsFlush()
        transport.close(flushFirst: false)
    }

    func scheduleStatsFlush() {
        guard !statsFlushScheduled else { return }
        statsFlushScheduled = true
        loop.executeAtEndOfTurn { [self] in
            statsFlushScheduled = false
            flushStats()
        }
    }

    func flushStats() {
        guard !delta.isEmpty || !delta.byStatus.isEmpty || !delta.recorded.isEmpty else { return }
        shared.stats.merge(delta, connectionID: id)
        delta = StatsDelta()
    }
}
