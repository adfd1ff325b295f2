import PushCommandLine
import PushCore
import PushGRPC
import PushGateway
import PushProto

#if canImport(Glibc)
    import Glibc
#endif

/// `pushgate send`: calls Push/Send on a running gateway and prints one line per token.
enum SendCommand {
    static let usage = """
        Usage: pushgate send --token TOKEN [--token TOKEN ...] [flags]
               pushgate send --channel CHANNEL_ID --live-activity update|end [flags]

        Calls Push/Send on a running gateway and prints one result per token; with --channel,
        Channels/Broadcast (one Live Activity push to every device on the channel, one result).
        Exit status: 0 all delivered, 1 some rejected or failed, 2 bad usage, 3 the call failed.

          --server HOST:PORT        the gateway (default 127.0.0.1:50051)
          --app NAME                the app (default: the gateway's first app)
          --token TOKEN             a device token (APNs: hex; FCM: the registration token); repeat
          --title T --subtitle S --body B
          --image URL               an image shown in the notification (FCM notification.image)
          --badge N --sound NAME --category C --thread-id T
          --content-available       a background update flag
          --mutable-content
          --interruption-level L    passive, active, time-sensitive or critical
          --push-type TYPE          alert, background, voip, ... (default: inferred)
          --priority N              1, 5 or 10
          --expiration UNIX         unix seconds
          --collapse-id ID --topic TOPIC --id UUID
          --data JSON               keys merged into the payload
          --payload JSON            the complete payload, used as is
          --live-activity EVENT     a Live Activity push: start (push-to-start), update or end
          --content-state JSON      the activity's ContentState (start and update)
          --timestamp UNIX          when the content is from (default: now)
          --stale-date UNIX --dismissal-date UNIX --relevance-score N
          --attributes-type T --attributes JSON
                                    start: the ActivityAttributes type and value
          --input-push-token        start: ask the new activity for an update token
          --input-push-channel ID   start: subscribe the new activity to a broadcast channel
          --channel ID              broadcast on this channel (Channels/Broadcast) instead of tokens
          --timeout SECONDS         the call's deadline (default 30)
          -h, --help

        Environment: PUSHGATE_API_KEY, sent as `authorization: Bearer <key>` (gateways with api_keys).
        The client speaks h2c only: use it on loopback.
        """

    /// What the flags ask for: the gateway, the call's deadline and the request.
    struct Options {
        var server = "127.0.0.1:50051"
        var timeout = 30.0
        var request = PushgateV1.SendRequest()
        /// `--channel`: a broadcast of the request's one notification on this channel.
        var channel: String?
    }

    static func run(_ arguments: [String]) async -> Int32 {
        await CommandOptions.run("send", usage: usage, arguments, parse: parse, call)
    }

    /// nil when --help was asked for.
    static func parse(_ arguments: [String]) throws -> Options? {
        var options = Options()
        var notification = PushgateV1.Notification()
        var alert = PushgateV1.Alert()
        var activity = PushgateV1.LiveActivity()
        var flags = FlagReader(arguments)
        while let flag = flags.next() {
            switch flag {
            case "-h", "--help": return nil
            case "--server": options.server = try flags.value(for: flag)
            case "--app": notification.app = try flags.value(for: flag)
            case "--token": notification.tokens.append(try flags.value(for: flag))
            case "--title": alert.title = try flags.value(for: flag)
            case "--subtitle": alert.subtitle = try flags.value(for: flag)
            case "--body": alert.body = try flags.value(for: flag)
            case "--image": alert.image = try flags.value(for: flag)
            case "--badge": notification.badge = Int32(try flags.int(for: flag, range: 0...Int(Int32.max)))
            case "--sound": notification.sound = try flags.value(for: flag)
            case "--category": notification.category = try flags.value(for: flag)
            case "--thread-id": notification.threadID = try flags.value(for: flag)
            case "--content-available": notification.contentAvailable = true
            case "--mutable-content": notification.mutableContent = true
            case "--interruption-level": notification.interruptionLevel = try flags.value(for: flag)
            case "--push-type": notification.pushType = try pushType(try flags.value(for: flag))
            case "--priority": notification.priority = Int32(try flags.int(for: flag, range: 0...10))
            case "--expiration":
                notification.expiration = Int64(try flags.int(for: flag, range: 0...Int(Int64.max)))
            case "--collapse-id": notification.collapseID = try flags.value(for: flag)
            case "--topic": notification.topic = try flags.value(for: flag)
            case "--id": notification.id = try flags.value(for: flag)
            case "--data": notification.dataJSON = try flags.value(for: flag)
            case "--payload": notification.payloadJSON = try flags.value(for: flag)
            case "--live-activity": activity.event = try flags.value(for: flag)
            case "--content-state": activity.contentStateJSON = try flags.value(for: flag)
            case "--timestamp": activity.timestamp = Int64(try flags.int(for: flag, range: 0...Int(Int64.max)))
            case "--stale-date": activity.staleDate = Int64(try flags.int(for: flag, range: 0...Int(Int64.max)))
            case "--dismissal-date": activity.dismissalDate = Int64(try flags.int(for: flag, range: 0...Int(Int64.max)))
            case "--relevance-score":
                guard let score = Double(try flags.value(for: flag)), score.isFinite else {
                    throw CommandLineError("--relevance-score: must be a number")
                }
                activity.relevanceScore = score
            case "--attributes-type": activity.attributesType = try flags.value(for: flag)
            case "--attributes": activity.attributesJSON = try flags.value(for: flag)
            case "--input-push-token": activity.inputPushToken = true
            case "--input-push-channel": activity.inputPushChannel = try flags.value(for: flag)
            case "--channel": options.channel = try flags.value(for: flag)
            case "--timeout":
                guard let seconds = Double(try flags.value(for: flag)), seconds > 0 else {
                    throw CommandLineError("--timeout: must be a positive number of seconds")
                }
                options.timeout = seconds
            default: throw CommandLineError("unknown flag \(flag.debugDescription) (see pushgate send --help)")
            }
        }
        if options.channel == nil, notification.tokens.isEmpty {
            throw CommandLineError("--token: at least one is required (or --channel for a broadcast)")
        }
        if options.channel != nil, !notification.tokens.isEmpty {
            throw CommandLineError("--channel: a broadcast goes to the channel; leave out --token")
        }
        if alert != PushgateV1.Alert() { notification.alert = alert }
        if activity != PushgateV1.LiveActivity() {
            guard !activity.event.isEmpty else {
                throw CommandLineError("--live-activity: required with the other Live Activity flags")
            }
            notification.liveActivity = activity
        }
        options.request.notifications = [notification]
        return options
    }

    /// `authorization: Bearer $PUSHGATE_API_KEY` when set (an environment variable, not a flag, so
    /// the key stays out of shell history and `ps`).
    private static func apiKeyMetadata() -> [(String, String)] {
        guard let key = getenv("PUSHGATE_API_KEY").map({ String(cString: $0) }), !key.isEmpty else { return [] }
        return [("authorization", "Bearer \(key)")]
    }

    /// Send, or Broadcast with `--channel`.
    private static func call(_ options: Options) async -> Int32 {
        let path: String
        let message: [UInt8]
        if let channel = options.channel {
            var broadcast = PushgateV1.BroadcastRequest()
            broadcast.channelID = channel
            broadcast.notification = options.request.notifications.first
            (path, message) = ("/pushgate.v1.Channels/Broadcast", broadcast.serializedBytes())
        } else {
            (path, message) = ("/pushgate.v1.Push/Send", options.request.serializedBytes())
        }
        return await call(server: options.server, path: path, message: message, timeout: options.timeout) { bytes in
            if options.channel != nil {
                return [try PushgateV1.BroadcastResponse(serializedBytes: bytes).result ?? PushgateV1.Result()]
            }
            return try PushgateV1.SendResponse(serializedBytes: bytes).results
        }
    }

    private static func call(
        server: String, path: String, message: [UInt8], timeout: Double,
        results decode: ([UInt8]) throws -> [PushgateV1.Result]
    ) async -> Int32 {
        guard let colon = server.lastIndex(of: ":"), let port = Int(server[server.index(after: colon)...]) else {
            printError("pushgate send: --server: expected host:port")
            return 2
        }
        let host = String(server[..<colon]).trimmingBrackets
        let results: [PushgateV1.Result]
        do {
            let client = try await GRPCClient.connect(host: host, port: port)
            defer { client.close() }
            let bytes = try await client.unary(
                path, message, timeout: .milliseconds(Int(timeout * 1000)), metadata: apiKeyMetadata())
            results = try decode(bytes)
        } catch let status as GRPCStatus {
            printError("pushgate send: \(status)")
            return 3
        } catch {
            printError("pushgate send: \(server): \(error)")
            return 3
        }
        var allDelivered = true
        for result in results {
            print(line(for: result))
            if result.status != .delivered { allDelivered = false }
        }
        return allDelivered ? 0 : 1
    }

    static func line(for result: PushgateV1.Result) -> String {
        let status: String
        switch result.status {
        case .delivered: status = "DELIVERED"
        case .rejected: status = "REJECTED"
        case .failed: status = "FAILED"
        default: status = result.status.description
        }
        var line = "\(status) token=\(result.token)"
        if result.httpStatus != 0 { line += " http=\(result.httpStatus)" }
        if !result.reason.isEmpty { line += " reason=\(result.reason)" }
        // FCM answers the message's resource name, a Web Push service the message's URL, APNs
        // its apns-id.
        if !result.id.isEmpty {
            if result.id.hasPrefix("projects/") {
                line += " name=\(result.id)"
            } else if result.id.hasPrefix("https://") {
                line += " location=\(result.id)"
            } else {
                line += " apns-id=\(result.id)"
            }
        }
        if result.unregisteredAt != 0 { line += " unregistered_at=\(result.unregisteredAt)" }
        line += " attempts=\(result.attempts)"
        return line
    }

    private static func pushType(_ name: String) throws -> PushgateV1.PushType {
        guard let type = PushType(rawValue: name) else {
            throw CommandLineError("--push-type: unknown push type \(name.debugDescription)")
        }
        return PushgateV1.PushType(type)
    }
}
