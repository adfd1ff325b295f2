import PushCommandLine
import PushGRPC
import PushProto
import PushStore

#if canImport(Glibc)
    import Glibc
#endif

/// `pushgate bench --mode publish`: one Publish to a topic of N subscribers, timed from the call
/// until GetMessage reports the fan-out completed (the subscribers are bulk-loaded into the store
/// before the gateway starts, so the measurement is the fan-out alone).
enum BenchPublish {
    static let topic = "bench"

    /// Loads the subscribers into the store, 50,000 a transaction (``StoreSetting/loadSubscribers``).
    static func preload(store path: String, subscribers: Int, provider: BenchProvider) async throws {
        _ = try await StoreSetting.loadSubscribers(
            into: path, topic: topic, app: "bench", numbers: 0..<subscribers, token: provider.token)
    }

    /// Publishes once, polls GetMessage until the fan-out completed or expired, stops what bench
    /// started and prints the figures. 0 when every subscriber got it, 1 otherwise, 3 no gateway.
    static func measure(_ options: BenchOptions, _ setup: inout BenchSetup) async -> Int32 {
        let client: GRPCClient
        do {
            client = try await GRPCClient.connect(host: setup.host, port: setup.port)
        } catch {
            printError("pushgate bench: cannot connect to \(setup.host):\(setup.port): \(error)")
            return 3
        }
        defer { client.close() }
        let fanOut: FanOut
        do {
            fanOut = try await publishAndWait(
                client, deliverAfterMs: options.deliverAfterMs,
                limit: .seconds(Int(options.timeout.rounded(.up)) + 600))
        } catch {
            printError("pushgate bench: publish: \(error)")
            return 1
        }
        setup.tearDown(keepFiles: options.keepFiles)
        print(
            options.json
                ? fanOut.json(subscribers: options.subscribers)
                : fanOut.table(subscribers: options.subscribers, setup: setup.description))
        return fanOut.message.state == .completed && fanOut.message.delivered == Int64(options.subscribers) ? 0 : 1
    }

    /// What one Publish measured: when it was answered, when its fan-out ended, and the message's
    /// counts at that point.
    struct FanOut {
        var message: PushgateV1.Message
        /// From the call to its answer (the message committed), in milliseconds.
        var publishMs: Double
        /// From the call (or the scheduled start) until GetMessage said completed or expired (or
        /// `limit` passed).
        var seconds: Double

        var subscribersPerSecond: Int { Int(seconds > 0 ? Double(message.delivered) / seconds : 0) }

        func json(subscribers: Int) -> String {
            "{\"mode\":\"publish\",\"subscribers\":\(subscribers),\"seconds\":\(seconds),"
                + "\"subscribers_per_second\":\(subscribersPerSecond),\"publish_ms\":\(publishMs),"
                + "\"state\":\"\(message.state)\",\"total\":\(message.total),\"delivered\":\(message.delivered),"
                + "\"rejected\":\(message.rejected),\"failed\":\(message.failed),\"skipped\":\(message.skipped)}"
        }

        func table(subscribers: Int, setup: String) -> String {
            """
            Publish fan-out: \(subscribers) subscribers, \(setup)
              Publish answered (committed)   \(formatDecimal(publishMs, places: 2)) ms
              fan-out done in                \(formatDecimal(seconds, places: 3)) s
              subscribers/s                  \(formatCount(subscribersPerSecond))
              state                          \(message.state)
              total / delivered / rejected / failed / skipped
                                             \(message.total) / \(message.delivered) / \(message.rejected) / \(message.failed) / \(message.skipped)
            """
        }
    }

    /// One Publish to the bench topic (scheduled `deliverAfterMs` ahead, if not 0), then GetMessage
    /// every 5 ms until its fan-out is over or `limit` has passed. A scheduled one is timed from its
    /// `deliver_at`.
    private static func publishAndWait(_ client: GRPCClient, deliverAfterMs: Int, limit: Duration) async throws
        -> FanOut
    {
        var request = PushgateV1.PublishRequest()
        request.topic = topic
        request.message = #"{"default":"Hello from pushgate bench","APNS":"{\"aps\":{\"alert\":\"Hello\"}}"}"#
        request.messageStructure = "json"
        var start = ContinuousClock.now
        if deliverAfterMs > 0 {
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            request.deliverAt = Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000 + Int64(deliverAfterMs)
        }
        let reply = try PushgateV1.PublishResponse(
            serializedBytes: try await client.unary("/pushgate.v1.Push/Publish", request.serializedBytes()))
        let accepted = ContinuousClock.now - start
        start = start.advanced(by: .milliseconds(deliverAfterMs))
        var get = PushgateV1.GetMessageRequest()
        get.messageID = reply.messageID
        var message = PushgateV1.Message()
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            message = try PushgateV1.Message(
                serializedBytes: try await client.unary("/pushgate.v1.Push/GetMessage", get.serializedBytes()))
            if message.state == .completed || message.state == .expired { break }
            try await Task.sleep(for: .milliseconds(5))
        }
        let elapsed = ContinuousClock.now - start
        return FanOut(
            message: message,
            publishMs: Double(accepted.components.attoseconds) / 1e15 + Double(accepted.components.seconds) * 1000,
            seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }
}
