import PushCore
import PushHTTP2
import PushMockSupport
import PushPosix
import PushTransport

/// Answers: the response delay's queue and timer, and the response frames (200, or an error with
/// its JSON reason).
extension MockAPNsConnection {
    /// Delayed answers sent per timer run. The loop flushes between runs, so the client gets the
    /// first answers of a large batch due at once while the mock writes the rest: answering a
    /// thousand in one run held the first back for the whole batch's work, which reads as several
    /// milliseconds more round trip. A timer whose answers are still due runs again next turn.
    private static let delayedAnswersPerTurn = 64

    func armDelayTimer(_ deadline: UInt64) {
        delayTimerArmed = true
        loop.schedule(at: deadline) { [self] in
            delayTimerArmed = false
            guard !isClosed else { return }
            let now = loop.now
            var answered = 0
            while delayedHead < delayed.count, delayed[delayedHead].deadline <= now,
                answered < Self.delayedAnswersPerTurn
            {
                respond(delayed[delayedHead].stream)
                delayedHead += 1
                answered += 1
            }
            if delayedHead == delayed.count {
                delayed.removeAll(keepingCapacity: true)
                delayedHead = 0
            } else {
                if delayedHead >= 1024 {
                    delayed.removeFirst(delayedHead)
                    delayedHead = 0
                }
                armDelayTimer(delayed[delayedHead].deadline)
            }
            transport.setNeedsFlush()
        }
    }

    /// Sends the answer: 200 as one HEADERS frame with END_STREAM; errors as HEADERS + one DATA
    /// frame with the JSON reason and END_STREAM.
    func respond(_ stream: MockAPNsStream) {
        guard !isClosed, !dropped, !stalled, !stream.closed else { return }
        stream.responded = true
        highestAnsweredStreamID = max(highestAnsweredStreamID, stream.streamID)
        let status: Int
        do {
            if let reason = stream.headerRejection {
                status = stream.rejectionStatus ?? reason.httpStatus ?? 400
                let apnsID = stream.requestAPNsID ?? makeUUIDv4(&generator)
                try session.sendResponseHeaders(
                    streamID: stream.streamID,
                    headers: [Bytes.status(status), Bytes.contentTypeJSON, Bytes.apnsIDHeader(apnsID)], endStream: false
                )
                try session.sendData(streamID: stream.streamID, errorBody(reason, status: status), endStream: true)
                delta.byReason[reason.string, default: 0] += 1
                delta.byStatus[status, default: 0] += 1
            } else {
                status = 200
                // The 200 is the hot path: a prepared header list, the id written on the stack.
                try withUnsafeTemporaryAllocation(byteCount: 36, alignment: 1) { (scratch) throws(HTTP2Error) in
                    if let requested = stream.requestAPNsID {
                        scratch.copyBytes(from: requested)
                    } else {
                        writeUUIDv4(&generator, into: scratch)
                    }
                    try session.sendResponseHeaders(
                        streamID: stream.streamID, template: Bytes.ok200,
                        replacing: (Bytes.ok200IDIndex, UnsafeRawBufferPointer(scratch)))
                    record(stream, apnsID: UnsafeRawBufferPointer(scratch))
                }
                delta.ok += 1
                if stream.isBroadcast { delta.broadcasts += 1 }
            }
        } catch {
            return  // the stream is gone (reset by the client)
        }
        delta.requests += 1
        scheduleStatsFlush()
        transport.setNeedsFlush()
    }

    private func errorBody(_ reason: APNsReason, status: Int) -> [UInt8] {
        var body: [UInt8] = []
        body.reserveCapacity(64)
        body.append(contentsOf: #"{"reason":"#.utf8)
        JSONWriter.appendQuoted(reason.string, to: &body)
        if status == 410 {
            body.append(contentsOf: #","timestamp":"#.utf8)
            JSONWriter.appendDecimal(configuration.unregisteredTimestamp ?? wallClockMillis(), to: &body)
        }
        body.append(UInt8(ascii: "}"))
        return body
    }

    private func record(_ stream: MockAPNsStream, apnsID: UnsafeRawBufferPointer) {
        if shared.tracksTokens { delta.deliveredTokens.append(stream.token) }
        if shared.recordsRequests {
            delta.recorded.append(
                MockAPNsRequest(
                    connectionID: id, streamID: stream.streamID, token: String(decoding: stream.token, as: UTF8.self),
                    headers: stream.headers, payload: stream.keptBody, apnsID: String(decoding: apnsID, as: UTF8.self)))
        }
    }
}
