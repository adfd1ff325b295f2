import PushCore
import PushProto
import Testing

@Suite("Proto3 JSON: encoding and round trips")
struct ProtoJSONRoundTripTests {
    static func sendRequest() -> PushgateV1.SendRequest {
        var alert = PushgateV1.Alert()
        alert.title = "Hi"
        alert.body = "Hello \"ünï\"\n"
        alert.locArgs = ["a", "b"]
        var first = PushgateV1.Notification()
        first.app = "demo"
        first.tokens = ["ab", "cd"]
        first.alert = alert
        first.badge = 0
        first.threadID = "t1"
        first.contentAvailable = true
        first.pushType = .voip
        first.priority = 5
        first.expiration = 1_700_000_000
        var second = PushgateV1.Notification()
        second.tokens = ["ef"]
        second.dataJSON = #"{"k":"v"}"#
        var request = PushgateV1.SendRequest()
        request.notifications = [first, second]
        return request
    }

    @Test("SendRequest: lowerCamelCase names, a set badge of 0, int64 as a string, defaults left out")
    func sendRequestOutput() throws {
        let request = Self.sendRequest()
        let expected = """
            {"notifications":[{"app":"demo","tokens":["ab","cd"],"alert":{"title":"Hi","body":"Hello \\"ünï\\"\\n",\
            "locArgs":["a","b"]},"badge":0,"threadId":"t1","contentAvailable":true,"pushType":"PUSH_TYPE_VOIP",\
            "priority":5,"expiration":"1700000000"},{"tokens":["ef"],"dataJson":"{\\"k\\":\\"v\\"}"}]}
            """
        #expect(String(decoding: request.jsonBytes(), as: UTF8.self) == expected)
        #expect(try PushgateV1.SendRequest(jsonBytes: request.jsonBytes()) == request)
    }

    @Test("an unset badge and an absent alert stay absent")
    func absentOptionals() throws {
        var notification = PushgateV1.Notification()
        notification.tokens = ["ab"]
        #expect(String(decoding: notification.jsonBytes(), as: UTF8.self) == #"{"tokens":["ab"]}"#)
        let decoded = try decodeJSON(PushgateV1.Notification.self, #"{"tokens":["ab"]}"#)
        #expect(decoded.badge == nil)
        #expect(decoded.alert == nil)
        var withEmptyAlert = notification
        withEmptyAlert.alert = PushgateV1.Alert()
        #expect(String(decoding: withEmptyAlert.jsonBytes(), as: UTF8.self) == #"{"tokens":["ab"],"alert":{}}"#)
        #expect(try decodeJSON(PushgateV1.Notification.self, #"{"alert":{}}"#).alert == PushgateV1.Alert())
    }

    @Test("SendResponse: enums by name, an unknown enum value as its number")
    func sendResponse() throws {
        var delivered = PushgateV1.Result()
        delivered.token = "ab"
        delivered.status = .delivered
        delivered.httpStatus = 200
        delivered.id = "id-1"
        delivered.attempts = 1
        var rejected = PushgateV1.Result()
        rejected.notificationIndex = 1
        rejected.status = .rejected
        rejected.httpStatus = 410
        rejected.reason = "Unregistered"
        rejected.unregisteredAt = 1_700_000_000_123
        var future = PushgateV1.Result()
        future.status = PushgateV1.Status(rawValue: 42)
        var response = PushgateV1.SendResponse()
        response.results = [delivered, rejected, future]
        let expected = """
            {"results":[{"token":"ab","status":"STATUS_DELIVERED","httpStatus":200,"id":"id-1","attempts":1},\
            {"notificationIndex":1,"status":"STATUS_REJECTED","httpStatus":410,"reason":"Unregistered",\
            "unregisteredAt":"1700000000123"},{"status":42}]}
            """
        #expect(String(decoding: response.jsonBytes(), as: UTF8.self) == expected)
        #expect(try PushgateV1.SendResponse(jsonBytes: response.jsonBytes()) == response)
    }

    @Test("PublishRequest: the attributes map as an object, keys sorted")
    func publishMap() throws {
        var publish = PushgateV1.PublishRequest()
        publish.topic = "news"
        publish.message = "m"
        publish.attributes = ["b": "2", "AWS.SNS.MOBILE.APNS.TTL": "60", "a": ""]
        let expected = #"{"topic":"news","message":"m","attributes":{"AWS.SNS.MOBILE.APNS.TTL":"60","a":"","b":"2"}}"#
        #expect(String(decoding: publish.jsonBytes(), as: UTF8.self) == expected)
        #expect(try PushgateV1.PublishRequest(jsonBytes: publish.jsonBytes()) == publish)
    }

    @Test("Registry messages: int64 fields as strings, extremes included; optional string and bool presence")
    func registry() throws {
        var endpoint = PushgateV1.Endpoint()
        endpoint.id = "e1"
        endpoint.app = "ios"
        endpoint.enabled = true
        endpoint.createdAt = Int64.max
        var list = PushgateV1.ListEndpointsResponse()
        list.endpoints = [endpoint]
        list.nextPageToken = "p2"
        let expected =
            #"{"endpoints":[{"id":"e1","app":"ios","enabled":true,"createdAt":"9223372036854775807"}],"#
            + #""nextPageToken":"p2"}"#
        #expect(String(decoding: list.jsonBytes(), as: UTF8.self) == expected)
        #expect(try PushgateV1.ListEndpointsResponse(jsonBytes: list.jsonBytes()) == list)

        var message = PushgateV1.Message()
        message.state = .fanningOut
        message.total = Int64.min
        message.waitingForProvider = 3
        #expect(
            String(decoding: message.jsonBytes(), as: UTF8.self)
                == #"{"state":"MESSAGE_STATE_FANNING_OUT","total":"-9223372036854775808","waitingForProvider":"3"}"#)
        #expect(try PushgateV1.Message(jsonBytes: message.jsonBytes()) == message)

        var update = PushgateV1.UpdateEndpointRequest()
        update.id = "e1"
        update.enabled = false
        update.customUserData = ""
        #expect(
            String(decoding: update.jsonBytes(), as: UTF8.self) == #"{"id":"e1","enabled":false,"customUserData":""}"#)
        let decoded = try PushgateV1.UpdateEndpointRequest(jsonBytes: update.jsonBytes())
        #expect(decoded == update)
        #expect(decoded.token == nil)
    }

    @Test("empty messages are {} and decode back; the health check's nested enum")
    func emptyAndHealth() throws {
        #expect(PushgateV1.SendRequest().jsonBytes() == Array("{}".utf8))
        #expect(PushgateV1.DeleteEndpointResponse().jsonBytes() == Array("{}".utf8))
        #expect(try decodeJSON(PushgateV1.DeleteEndpointResponse.self, "{}") == PushgateV1.DeleteEndpointResponse())
        var health = GRPCHealthV1.HealthCheckResponse()
        health.status = .serving
        #expect(String(decoding: health.jsonBytes(), as: UTF8.self) == #"{"status":"SERVING"}"#)
        #expect(
            try decodeJSON(GRPCHealthV1.HealthCheckResponse.self, #"{"status":"NOT_SERVING"}"#).status == .notServing)
    }

    @Test("JSON and the binary form carry the same message")
    func jsonAndBinaryAgree() throws {
        let request = Self.sendRequest()
        let viaBinary = try PushgateV1.SendRequest(serializedBytes: request.serializedBytes())
        let viaJSON = try PushgateV1.SendRequest(jsonBytes: viaBinary.jsonBytes())
        #expect(viaJSON.serializedBytes() == request.serializedBytes())
    }
}
