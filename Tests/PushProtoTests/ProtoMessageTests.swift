import PushProto
import Testing

@Suite("Protobuf messages through protobuf-c")
struct ProtoMessageTests {
    /// Encoded by Python's protobuf runtime (an independent implementation) from proto/.
    static let pythonSendRequest = hex(
        "0abe010a0464656d6f12406162616261626162616261626162616261626162616261626162616261626162616261"
            + "62616261626162616261626162616261626162616261626162616261621240434443444344434443444344434443"
            + "44434443444344434443444344434443444344434443444344434443444344434443444344434443444344434443"
            + "4443441a170a0248691a0b48656c6c6f20c3bc6ec3af42016142016220002a0764656661756c7440016803700578"
            + "80e2cfaa06920101780a421240656665666566656665666566656665666566656665666566656665666566656665"
            + "66656665666566656665666566656665666566656665666566656665666566")

    @Test("decodes what Python's protobuf encoded, field by field")
    func decodesPythonBytes() throws {
        let request = try PushgateV1.SendRequest(serializedBytes: Self.pythonSendRequest)
        #expect(request.notifications.count == 2)
        let n = request.notifications[0]
        #expect(n.app == "demo")
        #expect(n.tokens == [String(repeating: "ab", count: 32), String(repeating: "CD", count: 32)])
        #expect(n.alert?.title == "Hi")
        #expect(n.alert?.body == "Hello ünï")
        #expect(n.alert?.locArgs == ["a", "b"])
        #expect(n.badge == 0, "a badge of 0 that was set is present")
        #expect(n.sound == "default")
        #expect(n.contentAvailable)
        #expect(n.pushType == .voip)
        #expect(n.priority == 5)
        #expect(n.expiration == 1_700_000_000)
        #expect(n.id == "x")
        #expect(request.notifications[1].badge == nil, "an unset badge is absent")
        #expect(request.notifications[1].alert == nil)
    }

    @Test("encodes exactly what Python's protobuf encodes")
    func encodesLikePython() throws {
        let request = try PushgateV1.SendRequest(serializedBytes: Self.pythonSendRequest)
        #expect(request.serializedBytes() == Self.pythonSendRequest)
    }

    @Test("maps encode with sorted keys and decode back")
    func mapRoundTrip() throws {
        var publish = PushgateV1.PublishRequest()
        publish.topic = "t"
        publish.message = "m"
        publish.attributes = ["b": "2", "a": "1"]
        let bytes = publish.serializedBytes()
        #expect(bytes == hex("0a01741a016d2a060a01611201312a060a0162120132"))
        #expect(try PushgateV1.PublishRequest(serializedBytes: bytes) == publish)
    }

    @Test("round-trips every kind of field")
    func roundTrip() throws {
        var result = PushgateV1.Result()
        result.notificationIndex = 3
        result.token = "ab"
        result.status = .rejected
        result.httpStatus = 410
        result.reason = "Unregistered"
        result.unregisteredAt = 1_700_000_000_123
        result.attempts = 2
        var response = PushgateV1.SendResponse()
        response.results = Array(repeating: result, count: 1000)
        let decoded = try PushgateV1.SendResponse(serializedBytes: response.serializedBytes())
        #expect(decoded == response)

        var update = PushgateV1.UpdateEndpointRequest()
        update.id = "e1"
        update.enabled = false
        let decodedUpdate = try PushgateV1.UpdateEndpointRequest(serializedBytes: update.serializedBytes())
        #expect(decodedUpdate.enabled == false)
        #expect(decodedUpdate.token == nil)
        #expect(decodedUpdate.customUserData == nil)
    }

    @Test("a message much larger than the decoding arena's block decodes whole, and again")
    func largerThanTheArena() throws {
        // 2,000 tokens (further 32 KiB blocks), a 100 KB payload (a value of its own), 300 fields
        // of one message (protobuf-c's scan records outgrow its stack), many small notifications.
        var big = PushgateV1.Notification()
        big.app = "demo"
        big.tokens = (0..<2000).map { String(repeating: String($0 % 10), count: 64) }
        big.payloadJSON = "{\"x\":\"" + String(repeating: "y", count: 100_000) + "\"}"
        big.alert = PushgateV1.Alert()
        big.alert?.locArgs = (0..<300).map { "arg \($0)" }
        var request = PushgateV1.SendRequest()
        request.notifications =
            [big]
            + (0..<500).map { index in
                var small = PushgateV1.Notification()
                small.app = "app \(index)"
                small.badge = Int32(index)
                return small
            }
        let bytes = request.serializedBytes()
        for _ in 0..<3 {
            #expect(try PushgateV1.SendRequest(serializedBytes: bytes) == request)
        }
        // A small one after: the arena starts afresh.
        var small = PushgateV1.SendRequest()
        small.notifications = [PushgateV1.Notification()]
        small.notifications[0].app = "after"
        #expect(try PushgateV1.SendRequest(serializedBytes: small.serializedBytes()) == small)
    }

    @Test("decoding on several threads at once gives each its own message")
    func concurrentDecoding() async throws {
        let requests = (0..<8).map { index in
            var request = PushgateV1.SendRequest()
            var notification = PushgateV1.Notification()
            notification.app = "app \(index)"
            notification.tokens = (0..<200).map { "\(index)-\($0)-" + String(repeating: "t", count: 60) }
            request.notifications = [notification]
            return (request, request.serializedBytes())
        }
        let mismatches = await withTaskGroup(of: Int.self) { group in
            for (request, bytes) in requests {
                group.addTask {
                    var mismatches = 0
                    for _ in 0..<50 where (try? PushgateV1.SendRequest(serializedBytes: bytes)) != request {
                        mismatches += 1
                    }
                    return mismatches
                }
            }
            return await group.reduce(0, +)
        }
        #expect(mismatches == 0)
    }

    @Test("serializedBytes(reservingPrefix:) is the encoding after that many zero bytes")
    func reservingPrefix() throws {
        let request = try PushgateV1.SendRequest(serializedBytes: Self.pythonSendRequest)
        #expect(request.serializedBytes(reservingPrefix: 5) == [0, 0, 0, 0, 0] + Self.pythonSendRequest)
        #expect(request.serializedBytes(reservingPrefix: 0) == Self.pythonSendRequest)
        #expect(PushgateV1.SendResponse().serializedBytes(reservingPrefix: 5) == [0, 0, 0, 0, 0])
        var publish = PushgateV1.PublishRequest()
        publish.attributes = ["b": "2", "a": "1"]
        #expect(Array(publish.serializedBytes(reservingPrefix: 3).dropFirst(3)) == publish.serializedBytes())
    }

    @Test("the widest values encode within the size bound packing reserves, and round-trip")
    func widestValues() throws {
        // Negative int32s and int64s are 10-byte varints; debug builds check the bound against
        // protobuf-c's own size on every encode.
        var notification = PushgateV1.Notification()
        notification.app = "a"
        notification.tokens = ["", "t"]
        notification.badge = Int32.min
        notification.priority = -1
        notification.expiration = Int64.min
        notification.pushType = PushgateV1.PushType(rawValue: Int32.min)
        notification.contentAvailable = true
        notification.mutableContent = true
        notification.alert = PushgateV1.Alert()
        notification.alert?.titleLocArgs = ["", "", ""]
        notification.liveActivity = PushgateV1.LiveActivity()
        notification.liveActivity?.timestamp = Int64.min
        notification.liveActivity?.staleDate = -1
        notification.liveActivity?.dismissalDate = Int64.max
        notification.liveActivity?.relevanceScore = -0.0
        notification.criticalSound = PushgateV1.CriticalSound()
        notification.criticalSound?.volume = Double.greatestFiniteMagnitude
        notification.fcm = PushgateV1.FCMOptions()
        var request = PushgateV1.SendRequest()
        request.notifications = Array(repeating: notification, count: 3) + [PushgateV1.Notification()]
        #expect(try PushgateV1.SendRequest(serializedBytes: request.serializedBytes()) == request)

        var result = PushgateV1.Result()
        result.notificationIndex = -1
        result.status = PushgateV1.Status(rawValue: -1)
        result.httpStatus = Int32.min
        result.unregisteredAt = Int64.min
        result.attempts = -1
        var response = PushgateV1.SendResponse()
        response.results = Array(repeating: result, count: 100)
        #expect(try PushgateV1.SendResponse(serializedBytes: response.serializedBytes()) == response)

        var publish = PushgateV1.PublishRequest()
        publish.attributes = ["": "", "k": String(repeating: "v", count: 300)]
        #expect(try PushgateV1.PublishRequest(serializedBytes: publish.serializedBytes()) == publish)
    }

    @Test("an empty message is zero bytes and decodes to defaults")
    func emptyMessage() throws {
        #expect(PushgateV1.SendRequest().serializedBytes().isEmpty)
        #expect(try PushgateV1.SendRequest(serializedBytes: [UInt8]()) == PushgateV1.SendRequest())
    }

    @Test("unknown enum values survive")
    func unknownEnum() throws {
        var n = PushgateV1.Notification()
        n.pushType = PushgateV1.PushType(rawValue: 99)
        let decoded = try PushgateV1.Notification(serializedBytes: n.serializedBytes())
        #expect(decoded.pushType.rawValue == 99)
        #expect(decoded.pushType.description == "99")
    }

    @Test("garbage, truncated and bogus-length input is an error, not a crash")
    func garbage() {
        for bytes: [UInt8] in [[0xff, 0xff, 0xff], [0x0a, 0x05, 0x01], [0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f], [0x07]] {
            #expect(throws: ProtoDecodingError.self) { try PushgateV1.SendRequest(serializedBytes: bytes) }
        }
        let truncated = Array(Self.pythonSendRequest.dropLast(7))
        #expect(throws: ProtoDecodingError.self) { try PushgateV1.SendRequest(serializedBytes: truncated) }
    }

    @Test("a string field that is not valid UTF-8 is refused, naming the field, nested or repeated")
    func invalidUTF8() throws {
        // SendRequest{notifications: [Notification{app: "demo", alert: Alert{title: <bytes>}}]}
        func request(title: [UInt8], token: [UInt8] = Array("ab".utf8)) -> [UInt8] {
            let alert: [UInt8] = [0x0a, UInt8(title.count)] + title
            let notification: [UInt8] =
                [0x0a, 4] + Array("demo".utf8) + [0x12, UInt8(token.count)] + token + [0x1a, UInt8(alert.count)] + alert
            return [0x0a, UInt8(notification.count)] + notification
        }
        let valid = try PushgateV1.SendRequest(serializedBytes: request(title: Array("Grüße 👋".utf8)))
        #expect(valid.notifications.first?.alert?.title == "Grüße 👋")
        for bad: [UInt8] in [
            [0xff], [0xc3],
            [0xc0, 0xaf],  // an overlong "/"
            [0xed, 0xa0, 0x80],  // a surrogate
            [0xf4, 0x90, 0x80, 0x80],  // above U+10FFFF
            Array("ok".utf8) + [0xe2, 0x82],
        ] {
            #expect(
                throws: ProtoDecodingError(
                    messageName: "pushgate.v1.SendRequest", detail: "string field title is not valid UTF-8")
            ) { try PushgateV1.SendRequest(serializedBytes: request(title: bad)) }
        }
        #expect(
            throws: ProtoDecodingError(
                messageName: "pushgate.v1.SendRequest", detail: "string field tokens is not valid UTF-8")
        ) { try PushgateV1.SendRequest(serializedBytes: request(title: Array("x".utf8), token: [0x61, 0xfe])) }
    }
}

func hex(_ text: String) -> [UInt8] {
    var bytes: [UInt8] = []
    var iterator = text.utf8.makeIterator()
    while let high = iterator.next(), let low = iterator.next() {
        bytes.append(UInt8(hexDigit(high) << 4 | hexDigit(low)))
    }
    return bytes
}

private func hexDigit(_ c: UInt8) -> Int {
    switch c {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return Int(c - UInt8(ascii: "0"))
    default: return Int(c - UInt8(ascii: "a") + 10)
    }
}
