import PushHTTP1
import PushMetrics
import PushTransport
import Synchronization

// HTTP/1.1 events: one request in flight, its answer read header by header, then handed to the
// dialect.
extension ProviderConnection {
    func http1Header(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
        guard let id = http1InFlight, let slot = machine.slot(of: id) else { return }
        if let idHeader = app.dialect.idHeader, Self.equalsLowercased(name, idHeader) {
            answers[slot].id = String(decoding: value, as: UTF8.self)
        } else if Self.equalsLowercased(name, ResponseHeaderName.retryAfter) {
            answers[slot].retryAfter = String(decoding: value, as: UTF8.self)
        }
    }

    func http1HeadersComplete(_ head: HTTP1Head) {
        machine.peerAnsweredConnection()
        guard let id = http1InFlight, let slot = machine.slot(of: id) else { return }
        answers[slot].status = head.status
    }

    func http1Body(_ bytes: UnsafeRawBufferPointer) {
        guard let id = http1InFlight, let slot = machine.slot(of: id) else { return }
        if !answers[slot].append(bytes) {
            // Too large to be the provider's error JSON: the answer counts with what was kept, and
            // the connection, which cannot skip the rest unread, is closed.
            http1InFlight = nil
            machine.peerClosing()
            answered(id)
            transport?.close(flushFirst: false, error: nil)
        }
    }

    func http1MessageComplete(keepAlive: Bool) {
        guard let id = http1InFlight else { return }
        http1InFlight = nil
        if !keepAlive {
            // `Connection: close`: the answer counts; the transport closes once it is read.
            machine.peerClosing()
        }
        answered(id)
    }

    // MARK: Answers

    /// Request `id` has its complete answer in its slot.
    private func answered(_ id: Int32) {
        guard let (slot, entry) = machine.takeInFlight(id) else { return }
        var response = ProviderResponse()
        swap(&response, &answers[slot])
        streamsInFlight.store(machine.inFlightCount, ordering: .relaxed)
        let time = self.time
        app.metrics.requestSeconds?.observe(nanoseconds: time.now &- entry.submittedAt)
        let outcome = app.dialect.outcome(of: response, token: entry.request.token, now: time.unixSeconds)
        machine.answered(consume entry, outcome, at: time, into: &actions)
        perform()
    }

    /// Whether `name` (as sent, any case) is `lowercase` (already lowercase).
    private static func equalsLowercased(_ name: UnsafeBufferPointer<UInt8>, _ lowercase: [UInt8]) -> Bool {
        guard name.count == lowercase.count else { return false }
        for index in 0..<name.count {
            var byte = name[index]
            if byte >= 0x41 && byte <= 0x5A { byte |= 0x20 }
            if byte != lowercase[index] { return false }
        }
        return true
    }
}
