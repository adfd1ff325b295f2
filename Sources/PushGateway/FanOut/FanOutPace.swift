import PushDelivery
import PushStore
import PushSync

/// Set once a chunk's message is cancelled; read by its sends between rate-capped slots, and by
/// the delivery clients, which drop the chunk's requests not yet sent.
final class FanOutCancelFlag: Sendable {
    let delivery = DeliveryCancellation()

    func set() { delivery.cancel() }
    var isSet: Bool { delivery.isCancelled }
}

/// A rate-capped message's pace (`max_per_second`), shared by every instance through the store:
/// each slice of a page reserves its slot (``Store/reservePace(messageID:count:maxPerSecond:nowMicros:)``)
/// and is sent no earlier than the slot's start. Slots of one message never overlap, so all
/// instances' chunks together keep the cap; a slice is a tenth of a second's worth, so the
/// sends are spread out rather than bursting once a second.
struct FanOutPace: Sendable {
    let store: any Store
    let messageID: String
    let maxPerSecond: Int32
    let cancel: FanOutCancelFlag
    /// The chunk's own clock, used while the store cannot be reached: the cap then holds for this
    /// chunk's sends (if not across instances).
    let fallback = FanOutLocalPace()

    /// Recipients sent per reservation.
    var sliceSize: Int { max(1, Int(maxPerSecond) / 10) }

    /// Waits for the slot of `count` sends; false when the message was cancelled meanwhile, or the
    /// send's task was (the instance is stopping): send nothing more. While the store fails, slots
    /// come from the chunk's own clock.
    func take(_ count: Int) async -> Bool {
        guard !cancel.isSet, !Task.isCancelled else { return false }
        let now = unixMicroseconds()
        let start: Int64
        do {
            start = try await store.reservePace(
                messageID: messageID, count: count, maxPerSecond: maxPerSecond, nowMicros: now)
        } catch {
            start = fallback.reserve(cost: Int64(count) * 1_000_000 / Int64(maxPerSecond), now: now)
        }
        // In steps, so a cancel is noticed while waiting for a distant slot.
        while true {
            guard !cancel.isSet, !Task.isCancelled else { return false }
            let wait = start - unixMicroseconds()
            guard wait > 0 else { return true }
            try? await Task.sleep(for: .microseconds(min(wait, 100_000)))
        }
    }
}

/// A pace's clock kept in memory (the store's `paced_until`, for one chunk).
final class FanOutLocalPace: Sendable {
    private let until = Locked<Int64>(0)

    /// The start of a slot of `cost` µs: the later of now and the previous slot's end.
    func reserve(cost: Int64, now: Int64) -> Int64 {
        until.withLock { until in
            let start = max(until, now)
            until = start + cost
            return start
        }
    }
}
