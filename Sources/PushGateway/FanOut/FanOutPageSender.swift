import PushCore
import PushDelivery
import PushPosix
import PushStore

/// Sends fan-out recipients through the apps' clients and adds up their results; what to do with
/// the counts (commit them, hold, park) is the chunk machine's.
struct FanOutPageSender: Sendable {
    let events: DeliveryEvents
    let metrics: GatewayMetrics?
    /// A recipient the provider could not take (``FanOut/holdsFor(_:)``) is held rather than
    /// FAILED (`fanout.max_hold_seconds` > 0).
    let holds: Bool
    /// The most recipients sent as one reservation: the page size, which the gateway keeps within
    /// `queue_limit`. A chunk's held recipients (up to a chunk's worth) are sent again in slices
    /// of it, since a reservation larger than the queue could never be granted.
    let maxShare: Int
    /// A rate-capped message's pace: recipients go in slices of its slots. nil: no cap.
    var pace: FanOutPace? = nil
    /// Set when the message is cancelled: the clients drop this chunk's requests not yet sent, so
    /// a cancel stops a fan-out within what is on the wire, however large its pages.
    var cancel: FanOutCancelFlag? = nil
    /// Which outcomes go to the delivery log (written with the page's commit).
    var deliveryLog = DeliveryLogSettings()

    /// One page sorted out: who is skipped or failed now, and per app the notification (built once
    /// per message and app) and its recipients.
    struct PreparedPage: Sendable {
        var counts: FanOutCounts
        var deliveries:
            [(
                notification: PreparedPush, recipients: [FanOutTarget], client: any DeliveryClient,
                counters: NotificationCounters?
            )] = []
    }

    func prepare(
        _ targets: [FanOutTarget], plan: inout MessagePlan, clients: [String: any DeliveryClient], messageID: String
    ) -> PreparedPage {
        var page = PreparedPage(counts: FanOutCounts(total: Int64(targets.count)))
        var sample = DeliveryLogSample(deliveryLog)
        // Most pages go to one app, every recipient sent: then the page's own array is the share
        // (no copy of each target, no dictionary of apps). Otherwise the decisions, a byte each,
        // sort the targets into per-app shares.
        var decisions: [MessagePlan.Decision] = []
        var oneApp: String? = targets.first?.endpoint.app
        for index in targets.indices {
            // Field by field: handing `decide` the whole target copied it (every string's count up
            // and down).
            let decision = plan.decide(
                enabled: targets[index].endpoint.enabled, app: targets[index].endpoint.app,
                policyJSON: targets[index].subscription.filterPolicyJSON,
                policyScope: targets[index].subscription.filterPolicyScope)
            if decision != .send || targets[index].endpoint.app != oneApp {
                if oneApp != nil {
                    decisions.reserveCapacity(targets.count)
                    decisions.append(contentsOf: repeatElement(.send, count: index))
                    oneApp = nil
                }
            }
            if oneApp == nil { decisions.append(decision) }
        }
        var shares: [(app: String, recipients: [FanOutTarget])] = []
        if let oneApp {
            shares = [(oneApp, targets)]
        } else {
            for (index, decision) in decisions.enumerated() {
                switch decision {
                case .skip: page.counts.skipped += 1
                case .fail:
                    page.counts.failed += 1
                    // Its app is no longer configured: a failure like any other, in the log and events.
                    let endpoint = targets[index].endpoint
                    let result = DeliveryResult(
                        notificationIndex: 0, token: endpoint.token, status: .failed, code: .wrongPlatform,
                        reason: "AppNotConfigured: app \(endpoint.app) is not in the configuration")
                    record(
                        result, for: endpoint, messageID: messageID, logs: sample.logs(delivered: false),
                        into: &page.counts.records)
                case .send:
                    let app = targets[index].endpoint.app
                    if let share = shares.firstIndex(where: { $0.app == app }) {
                        shares[share].recipients.append(targets[index])
                    } else {
                        shares.append((app, [targets[index]]))
                    }
                }
            }
        }
        for (app, recipients) in shares {
            guard let client = clients[app], let notification = plan.notification(for: app) else {
                page.counts.skipped += Int64(recipients.count)
                continue
            }
            page.deliveries.append((notification, recipients, client, metrics?.notifications(app: app)))
        }
        return page
    }

    /// Sends one page, its apps' shares at once; answers its counts once every recipient has a result.
    func sendPage(_ page: PreparedPage, messageID: String) async -> FanOutCounts {
        var counts = page.counts
        await withTaskGroup(of: FanOutCounts.self) { group in
            for delivery in page.deliveries {
                group.addTask {
                    await sendAppShare(
                        delivery.notification, to: delivery.recipients, through: delivery.client,
                        messageID: messageID, counters: delivery.counters)
                }
            }
            for await appCounts in group { counts.add(appCounts) }
        }
        return counts
    }

    /// Sends one app's share of a page, waiting for room in the app's queue rather than failing:
    /// fan-out is background work and may wait for Sends.
    private func sendAppShare(
        _ template: PreparedPush, to recipients: [FanOutTarget], through client: any DeliveryClient,
        messageID: String, counters: NotificationCounters?
    ) async -> FanOutCounts {
        let sliceSize = min(max(1, maxShare), pace?.sliceSize ?? .max)
        guard recipients.count > sliceSize || pace != nil else {
            return await sendSlice(template, to: recipients, through: client, messageID: messageID, counters: counters)
        }
        var counts = FanOutCounts(total: 0)
        for start in stride(from: 0, to: recipients.count, by: sliceSize) {
            let slice = Array(recipients[start..<min(start + sliceSize, recipients.count)])
            if let pace, await !pace.take(slice.count) {
                // Cancelled: this slice and the rest of the share are not sent.
                counts.cancelled += Int64(recipients.count - start)
                break
            }
            counts.add(await sendSlice(template, to: slice, through: client, messageID: messageID, counters: counters))
        }
        return counts
    }

    private func sendSlice(
        _ template: PreparedPush, to recipients: [FanOutTarget], through client: any DeliveryClient,
        messageID: String, counters: NotificationCounters?
    ) async -> FanOutCounts {
        let notification = template.with(tokens: recipients.map(\.endpoint.token))
        guard await client.reserveWaiting(recipients.count) else {
            return FanOutCounts(total: 0, failed: Int64(recipients.count))
        }
        let results = await client.sendAndWait(
            notification, deadline: .now + .seconds(600), cancellation: cancel?.delivery)
        var counts = FanOutCounts(total: 0)
        var sample = DeliveryLogSample(deliveryLog)
        let now = unixMilliseconds()
        // With no watcher or webhook, a success the delivery log does not keep only counts: it is
        // not copied out of the array (the target's and the result's strings, counted up and down)
        // to be looked at. (A watcher arriving during the loop sees the next slice's results.)
        let quiet = events.isQuiet
        recipients.withUnsafeBufferPointer { recipients in
            results.withUnsafeBufferPointer { results in
                for index in 0..<min(recipients.count, results.count) {
                    let delivered = results[index].status == .delivered
                    let logs = sample.logs(delivered: delivered)
                    if quiet && delivered && !logs && results[index].canonicalToken.isEmpty {
                        counts.delivered += 1
                        continue
                    }
                    if results[index].code == .cancelled {
                        // Taken back unsent: the store counts it cancelled, as one never read.
                        counts.cancelled += 1
                        continue
                    }
                    let endpoint = recipients[index].endpoint
                    let result = results[index]
                    if holds && FanOut.holdsFor(result) {
                        counts.hold.append((endpoint.id, result.reason, endpoint.app))
                        continue
                    }
                    record(result, for: endpoint, messageID: messageID, logs: logs, into: &counts.records, now: now)
                    switch result.status {
                    case .delivered:
                        counts.delivered += 1
                        if !result.canonicalToken.isEmpty {
                            counts.retoken.append((endpoint.id, result.canonicalToken, endpoint.app))
                        }
                    case .rejected:
                        counts.rejected += 1
                        if result.invalidatesToken {
                            counts.disable.append((endpoint.id, result.reason, endpoint.app, endpoint.token))
                        }
                    case .failed: counts.failed += 1
                    }
                }
            }
        }
        // Held recipients have no result yet: counted when they get one; cancelled ones never.
        if counts.hold.isEmpty && counts.cancelled == 0 {
            counters?.record(results)
        } else {
            counters?.record(results.filter { $0.code != .cancelled && !(holds && FanOut.holdsFor($0)) })
        }
        return counts
    }

    /// A recipient's final result: its event (watchers now, webhooks with the commit) and, if `logs`
    /// (the sample's draw), its delivery-log row.
    private func record(
        _ result: DeliveryResult, for endpoint: EndpointRecord, messageID: String, logs: Bool,
        into records: inout FanOutRecords, now: Int64 = unixMilliseconds()
    ) {
        records.events += events.result(
            result, app: endpoint.app, messageID: messageID, endpointID: endpoint.id, inCommit: true)
        if logs {
            records.deliveries.append(DeliveryLogRecord(result, endpoint: endpoint, messageID: messageID, time: now))
        }
    }
}

/// What one page added up to.
struct FanOutCounts: Sendable, Equatable {
    var total: Int64
    var delivered: Int64 = 0
    var rejected: Int64 = 0
    var failed: Int64 = 0
    var skipped: Int64 = 0
    /// Not sent: the message was cancelled while they waited for their rate-capped slot, or in a
    /// delivery client's queue (taken back unsent).
    var cancelled: Int64 = 0
    /// Endpoints whose token the provider declared dead, with the reason.
    var disable: [(id: String, reason: String, app: String, token: String)] = []
    /// Endpoints whose token the provider replaced with a canonical one, with the new token.
    var retoken: [(id: String, token: String, app: String)] = []
    /// Recipients held for their provider, with the failure that held them (in no count yet).
    var hold: [(id: String, reason: String, app: String)] = []
    /// Delivery-log rows and webhook events, written with the page's progress.
    var records = FanOutRecords()

    mutating func add(_ other: FanOutCounts) {
        total += other.total
        delivered += other.delivered
        rejected += other.rejected
        failed += other.failed
        skipped += other.skipped
        cancelled += other.cancelled
        disable += other.disable
        retoken += other.retoken
        hold += other.hold
        records.deliveries += other.records.deliveries
        records.events += other.records.events
    }

    /// The counts the store adds up (without the endpoints to change or hold).
    var progress: ProgressCounts {
        ProgressCounts(
            total: total, delivered: delivered, rejected: rejected, failed: failed, skipped: skipped,
            cancelled: cancelled)
    }

    static func == (a: FanOutCounts, b: FanOutCounts) -> Bool {
        a.progress == b.progress && a.disable.elementsEqual(b.disable) { $0 == $1 }
            && a.retoken.elementsEqual(b.retoken) { $0 == $1 } && a.hold.elementsEqual(b.hold) { $0 == $1 }
            && a.records == b.records
    }
}

/// Which outcomes of a slice the delivery log keeps: every one that is not a success, and
/// `success_sample_percent` of the successes (drawn from a cheap generator seeded once per slice).
struct DeliveryLogSample {
    private let enabled: Bool
    /// A success is kept when a draw is below this; 0: none.
    private let threshold: UInt64
    private var random: SplitMix64

    init(_ settings: DeliveryLogSettings) {
        enabled = settings.enabled
        let share = settings.successSamplePercent / 100
        threshold = share >= 1 ? .max : UInt64(share * Double(UInt64.max))
        random = threshold == 0 || threshold == .max ? SplitMix64(seed: 0) : SplitMix64()
    }

    /// Whether the next outcome is kept: every one that is not a success, a success by a draw.
    /// Call it once per outcome (each success draws).
    mutating func logs(delivered: Bool) -> Bool {
        guard enabled else { return false }
        guard delivered else { return true }
        switch threshold {
        case 0: return false
        case .max: return true
        default: return random.next() < threshold
        }
    }
}

extension DeliveryLogRecord {
    init(_ result: DeliveryResult, endpoint: EndpointRecord, messageID: String, time: Int64) {
        let status: Status =
            switch result.status {
            case .delivered: .delivered
            case .rejected: .rejected
            case .failed: .failed
            }
        self.init(
            messageID: messageID, endpointID: endpoint.id, app: endpoint.app, token: endpoint.token, status: status,
            reason: result.reason, httpStatus: result.httpStatus, providerID: result.providerID,
            attempts: result.attempts, time: time)
    }
}
