#if canImport(Glibc)
import Glibc
#endif
import PushCommandLine
import PushGRPC
import PushProto
import PushStore

/// `pushgate bench --mode publish`: one Publish to a topic of N subscribers, timed from the call
/// until GetMessage reports the fan-out completed (the subscribers are bulk-loaded into the store
/// before the gateway starts, so the measurement is the fan-out alone).
enum BenchPublish {
    static let topic = "bench"

    static func preload(store path: String, subscribers: Int, provider: BenchProvider) async throws {
        let store = try await StoreSetting.open(path)
        let tokens = (0..<subscribers).map(provider.token)
        _ = try await store.bulkCreateSubscribed(topic: topic, app: "bench", tokens: tokens, now: 0)
        await store.close()
    }

    static func measure(_ options: BenchOptions, _ setup: inout BenchSetup) async -> Int32 {
        let client: GRPCClient
        do {
            client = try await GRPCClient.connect(host: setup.host, port: setup.port)
        } catch {
            printError("pushgate bench: cannot connect to \(setup.host):\(setup.port): \(error)")
            return 3
        }
        defer { client.close() }
        var request = PushgateV1.PublishRequest()
        request.topic = topic
        request.message = #"{"default":"Hello from pushgate bench","APNS":"{\"aps\":{\"alert\":\"Hello\"}}"}"#
        request.messageStructure = "json"
        let start = ContinuousClock.now
        var message = PushgateV1.Message()
        do {
            let reply = try PushgateV1.PublishResponse(
                serializedBytes: try await client.unary("/pushgate.v1.Push/Publish", request.serializedBytes()))
            let accepted = ContinuousClock.now - start
            var get = PushgateV1.GetMessageRequest()
            get.messageID = reply.messageID
            let limit = ContinuousClock.now + .seconds(Int(options.timeout.rounded(.up)) + 600)
            while ContinuousClock.now < limit {
                message = try PushgateV1.Message(
                    serializedBytes: try await client.unary("/pushgate.v1.Push/GetMessage", get.serializedBytes()))
                if message.state == .completed || message.state == .expired { break }
                try await Task.sleep(for: .milliseconds(5))
            }
            let elapsed = ContinuousClock.now - start
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            let rate = seconds > 0 ? Double(message.delivered) / seconds : 0
            let acceptedMs = Double(accepted.components.attoseconds) / 1e15 + Double(accepted.components.seconds) * 1000
            setup.tearDown(keepFiles: options.keepFiles)
            if options.json {
                print(
                    "{\"mode\":\"publish\",\"subscribers\":\(options.subscribers),\"seconds\":\(seconds),"
                        + "\"subscribers_per_second\":\(Int(rate)),\"publish_ms\":\(acceptedMs),"
                        + "\"state\":\"\(message.state)\",\"total\":\(message.total),\"delivered\":\(message.delivered),"
                        + "\"rejected\":\(message.rejected),\"failed\":\(message.failed),\"skipped\":\(message.skipped)}")
            } else {
                print("""
                    Publish fan-out: \(options.subscribers) subscribers, \(setup.description)
                      Publish answered (committed)   \(formatDecimal(acceptedMs, places: 2)) ms
                      fan-out done in                \(formatDecimal(seconds, places: 3)) s
                      subscribers/s                  \(formatCount(Int(rate)))
                      state                          \(message.state)
                      total / delivered / rejected / failed / skipped
                                                     \(message.total) / \(message.delivered) / \(message.rejected) / \(message.failed) / \(message.skipped)
                    """)
            }
            return message.state == .completed && message.delivered == Int64(options.subscribers) ? 0 : 1
        } catch {
            printError("pushgate bench: publish: \(error)")
            return 1
        }
    }
}
