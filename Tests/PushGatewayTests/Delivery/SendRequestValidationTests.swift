import PushCore
import PushProto
import Testing

@testable import PushGateway

@Suite("Send request validation")
struct SendRequestValidationTests {
    static let token = String(repeating: "ab", count: 32)

    static var configuration: GatewayConfiguration {
        var config = GatewayConfiguration()
        config.apps = [AppConfiguration(name: "demo", bundleID: "com.example.demo")]
        config.maxTokensPerSend = 3
        return config
    }

    func notification(_ tokens: [String] = [token], app: String = "") -> PushgateV1.Notification {
        var n = PushgateV1.Notification()
        n.app = app
        n.tokens = tokens
        var alert = PushgateV1.Alert()
        alert.body = "Hello"
        n.alert = alert
        return n
    }

    func status(_ notifications: [PushgateV1.Notification]) -> GRPCStatus? {
        var request = PushgateV1.SendRequest()
        request.notifications = notifications
        do {
            _ = try SendRequestValidation.validate(request, configuration: Self.configuration)
            return nil
        } catch {
            return error
        }
    }

    @Test("a valid request is prepared once per notification, with the app's bundle id as topic")
    func valid() throws {
        var request = PushgateV1.SendRequest()
        request.notifications = [notification(), notification(app: "demo")]
        let send = try SendRequestValidation.validate(request, configuration: Self.configuration)
        #expect(send.items.count == 2)
        #expect(send.tokenCount == 2)
        guard case .apns(let first) = send.items[0].notification else {
            Issue.record("an APNs app's notification was not prepared for APNs")
            return
        }
        #expect(first.topic == "com.example.demo")
        #expect(first.pushType == .alert)
        #expect(String(decoding: first.payload, as: UTF8.self) == #"{"aps":{"alert":{"body":"Hello"}}}"#)
    }

    @Test("items keep request order across the inline first item and the rest; each push is taken once")
    func itemOrder() throws {
        let tokens = (1...3).map { String(repeating: String($0), count: 64) }
        var request = PushgateV1.SendRequest()
        request.notifications = [notification([tokens[0]]), notification([tokens[1], tokens[2]]), notification([])]
        #expect(throws: GRPCStatus.self) {
            try SendRequestValidation.validate(request, configuration: Self.configuration)
        }
        request.notifications.removeLast()
        var send = try SendRequestValidation.validate(request, configuration: Self.configuration)
        #expect(!send.items.isSingle)
        #expect(send.items.map(\.tokens) == [[tokens[0]], [tokens[1], tokens[2]]])
        #expect(send.items.indices.map { send.items.tokens(at: $0) } == [[tokens[0]], [tokens[1], tokens[2]]])
        #expect(send.items.indices.map { send.items.tokenCount(at: $0) } == [1, 2])
        #expect(send.tokenCount == 3)
        #expect(send.takeNotification(at: 1).tokens == [tokens[1], tokens[2]])
        #expect(send.items[1].notification == nil)
        #expect(send.items[0].notification != nil)
        #expect(send.takeNotification(at: 0).tokens == [tokens[0]])
        #expect(send.items.head.notification == nil)

        request.notifications = [notification([tokens[2]])]
        let single = try SendRequestValidation.validate(request, configuration: Self.configuration)
        #expect(single.items.isSingle && single.items.count == 1 && single.items.tail.isEmpty)
        #expect(single.items.tokens(at: 0) == [tokens[2]])
    }

    @Test("a Live Activity goes to a token-auth app as liveactivity; a certificate app refuses it")
    func liveActivity() throws {
        var config = Self.configuration
        var certificate = AppConfiguration.APNsKeys(bundleID: "com.example.cert")
        certificate.certFile = "cert.pem"
        config.apps.append(AppConfiguration(name: "cert", keys: .apns(certificate)))
        var n = notification()
        var activity = PushgateV1.LiveActivity()
        activity.event = "update"
        activity.contentStateJSON = #"{"score":"2-1"}"#
        activity.timestamp = 1_700_000_000
        n.liveActivity = activity
        var request = PushgateV1.SendRequest()
        request.notifications = [n]
        let send = try SendRequestValidation.validate(request, configuration: config)
        guard case .apns(let prepared) = send.items[0].notification else {
            Issue.record("not an APNs notification")
            return
        }
        #expect(prepared.pushType == .liveactivity)
        #expect(prepared.topic == "com.example.demo.push-type.liveactivity")
        #expect(
            String(decoding: prepared.payload, as: UTF8.self)
                == #"{"aps":{"timestamp":1700000000,"event":"update","content-state":{"score":"2-1"},"alert":{"body":"Hello"}}}"#
        )
        n.app = "cert"
        request.notifications = [n]
        #expect(throws: GRPCStatus.self) { try SendRequestValidation.validate(request, configuration: config) }
        do {
            _ = try SendRequestValidation.validate(request, configuration: config)
        } catch {
            #expect(error.message.hasPrefix("notifications[0].live_activity: Live Activity pushes need token auth"))
        }
    }

    @Test("errors name the place")
    func errors() {
        #expect(status([]) == GRPCStatus(.invalidArgument, "notifications: at least one notification is required"))
        #expect(
            status([notification(), notification([Self.token, "xyz"])])
                == GRPCStatus(
                    .invalidArgument, "notifications[1].tokens[1]: APNs device token must be 64-200 hex digits"))
        #expect(status([notification(app: "other")])?.code == .notFound)
        #expect(
            status([notification(app: "other")])?.message.hasPrefix("notifications[0].app: unknown app \"other\"")
                == true)
        #expect(
            status([notification([Self.token, Self.token]), notification([Self.token, Self.token])])?.message
                .hasPrefix("notifications: 4 tokens in one Send, over the limit of 3") == true)
        var badType = notification()
        badType.pushType = PushgateV1.PushType(rawValue: 42)
        #expect(status([badType]) == GRPCStatus(.invalidArgument, "notifications[0].push_type: unknown push type 42"))
    }

    @Test("every proto push type maps to a domain push type")
    func pushTypes() throws {
        for raw in Int32(1)...11 {
            var n = notification()
            n.pushType = PushgateV1.PushType(rawValue: raw)
            let domain = try NotificationRequest(n, path: "n")
            #expect(domain.pushType != nil)
        }
        #expect(try NotificationRequest(notification(), path: "n").pushType == nil)
        // The wire numbers are the proto's, whatever the order of the Swift enum.
        let wire: [(PushType, Int32)] = [
            (.alert, 1), (.background, 2), (.voip, 3), (.complication, 4), (.fileprovider, 5), (.mdm, 6),
            (.location, 7), (.liveactivity, 8), (.pushtotalk, 9), (.widgets, 10), (.controls, 11),
        ]
        for (type, number) in wire {
            #expect(PushgateV1.PushType(type).rawValue == number)
            #expect(PushgateV1.PushType(rawValue: number).domain == type)
        }
    }
}
