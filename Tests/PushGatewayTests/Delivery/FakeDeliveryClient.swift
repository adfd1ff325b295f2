import PushCore
import PushSync

@testable import PushDelivery

/// A delivery client without a provider, for the gateway's own tests: a bounded queue as the
/// engine's (`capacity`), every push it is sent recorded, and each token answered at once
/// (delivered, its id `<app>-<slot>`; the tokens in `rejecting` REJECTED `Unregistered`, 410) unless
/// `answers` is false (then held until ``answerHeld()``); `refusal` is what
/// ``originRefusal(tokens:)`` says.
final class FakeDeliveryClient: DeliveryClient {
    struct Sent: Sendable {
        var push: PreparedPush
        var notificationIndex: Int
        var firstSlot: Int
    }

    private struct State {
        var held = 0
        var sent: [Sent] = []
        var shutdown = false
        var answers: Bool
        /// Sends not answered yet (while `answers` is false).
        var unanswered: [(push: PreparedPush, notificationIndex: Int, firstSlot: Int, collector: DeliveryCollector)] =
            []
    }

    let name: String
    private let capacity: Int
    private let refusal: String?
    private let rejecting: Set<String>
    private let state: Locked<State>

    init(
        name: String, capacity: Int = 100, answers: Bool = true, refusal: String? = nil, rejecting: Set<String> = []
    ) {
        self.rejecting = rejecting
        self.name = name
        self.capacity = capacity
        self.state = Locked(State(answers: answers))
        self.refusal = refusal
    }

    /// What was sent, in order.
    var sent: [Sent] { state.withLock { $0.sent } }
    var isShutDown: Bool { state.withLock { $0.shutdown } }

    func reserve(_ count: Int) -> Bool {
        state.withLock { state in
            guard state.held + count <= capacity else { return false }
            state.held += count
            return true
        }
    }

    /// The fan-out's wait for room; a fake has no release signal, so it looks again each millisecond.
    func reserveWaiting(_ count: Int) async -> Bool {
        while !Task.isCancelled {
            if reserve(count) { return true }
            try? await Task.sleep(for: .milliseconds(1))
        }
        return false
    }

    func unreserve(_ count: Int) { state.withLock { $0.held -= count } }

    var heldRequests: Int { state.withLock { $0.held } }
    var openConnections: Int { 0 }
    var streamsInFlight: Int { 0 }

    func send(_ push: consuming PreparedPush, notificationIndex: Int, firstSlot: Int, collector: DeliveryCollector) {
        let push = consume push
        let answers = state.withLock { state in
            state.sent.append(Sent(push: push, notificationIndex: notificationIndex, firstSlot: firstSlot))
            if !state.answers { state.unanswered.append((push, notificationIndex, firstSlot, collector)) }
            return state.answers
        }
        guard answers else { return }
        answer(push, notificationIndex: notificationIndex, firstSlot: firstSlot, collector: collector)
    }

    /// Answers the sends held so far, and every later one at once.
    func answerHeld() {
        let held = state.withLock { state in
            state.answers = true
            defer { state.unanswered = [] }
            return state.unanswered
        }
        for send in held {
            answer(
                send.push, notificationIndex: send.notificationIndex, firstSlot: send.firstSlot,
                collector: send.collector)
        }
    }

    private func answer(_ push: PreparedPush, notificationIndex: Int, firstSlot: Int, collector: DeliveryCollector) {
        for (offset, token) in push.tokens.enumerated() {
            let slot = firstSlot + offset
            unreserve(1)
            if rejecting.contains(token) {
                collector.complete(
                    slot: slot,
                    with: DeliveryResult(
                        notificationIndex: notificationIndex, token: token, status: .rejected,
                        code: .rejectedByProvider, httpStatus: 410, reason: "Unregistered", attempts: 1,
                        invalidatesToken: true))
                continue
            }
            collector.complete(
                slot: slot,
                with: DeliveryResult(
                    notificationIndex: notificationIndex, token: token, status: .delivered, code: .delivered,
                    httpStatus: 200,
                    providerID: "\(name)-\(slot)", attempts: 1))
        }
    }

    func originRefusal(tokens: [String]) -> String? { refusal }

    func shutdown() { state.withLock { $0.shutdown = true } }

    func peakStreamsInFlight() async -> Int { 0 }

    var credentialIssuedAt: Int64? { nil }
}
