import PushProto
import Testing

@Suite("Proto3 JSON: every accepted spelling of the input")
struct ProtoJSONInputTests {
    @Test("original proto field names are accepted beside the lowerCamelCase ones")
    func originalNames() throws {
        let camel = try decodeJSON(
            PushgateV1.Notification.self,
            #"{"threadId":"t","contentAvailable":true,"pushType":"PUSH_TYPE_ALERT","collapseId":"c"}"#)
        let original = try decodeJSON(
            PushgateV1.Notification.self,
            #"{"thread_id":"t","content_available":true,"push_type":"PUSH_TYPE_ALERT","collapse_id":"c"}"#)
        #expect(camel == original)
        #expect(original.threadID == "t")
        #expect(original.contentAvailable)
        #expect(original.pushType == .alert)
        #expect(original.collapseID == "c")
        let nested = try decodeJSON(
            PushgateV1.SendRequest.self, #"{"notifications":[{"alert":{"title_loc_key":"k","locArgs":["x"]}}]}"#)
        #expect(nested.notifications[0].alert?.titleLocKey == "k")
        #expect(nested.notifications[0].alert?.locArgs == ["x"])
    }

    @Test("int64 as a string, a number, with an exponent or a zero fraction")
    func int64Spellings() throws {
        for text in [#""1700000000""#, "1700000000", "1.7e9", #""1.7E+9""#, "1700000000.000", "17e8"] {
            let notification = try decodeJSON(PushgateV1.Notification.self, #"{"expiration":\#(text)}"#)
            #expect(notification.expiration == 1_700_000_000, "\(text)")
        }
        let extremes = try decodeJSON(
            PushgateV1.Message.self, #"{"total":"9223372036854775807","delivered":-9223372036854775808}"#)
        #expect(extremes.total == Int64.max)
        #expect(extremes.delivered == Int64.min)
    }

    @Test("int32 as a number or a string of digits")
    func int32Spellings() throws {
        for text in ["5", #""5""#, "5.0", "0.5e1", #""-0""#] {
            let notification = try decodeJSON(PushgateV1.Notification.self, #"{"priority":\#(text)}"#)
            #expect(notification.priority == (text == #""-0""# ? 0 : 5), "\(text)")
        }
        let bounds = try decodeJSON(PushgateV1.Result.self, #"{"httpStatus":2147483647,"attempts":"-2147483648"}"#)
        #expect(bounds.httpStatus == Int32.max)
        #expect(bounds.attempts == Int32.min)
    }

    @Test("enums by name or by number, unknown numbers kept")
    func enumSpellings() throws {
        #expect(try decodeJSON(PushgateV1.Notification.self, #"{"pushType":3}"#).pushType == .voip)
        #expect(try decodeJSON(PushgateV1.Notification.self, #"{"pushType":"PUSH_TYPE_VOIP"}"#).pushType == .voip)
        #expect(try decodeJSON(PushgateV1.Notification.self, #"{"pushType":"3"}"#).pushType == .voip)
        #expect(try decodeJSON(PushgateV1.Notification.self, #"{"pushType":3.0}"#).pushType == .voip)
        let unknown = try decodeJSON(PushgateV1.Result.self, #"{"status":42}"#)
        #expect(unknown.status.rawValue == 42)
        #expect(String(decoding: unknown.jsonBytes(), as: UTF8.self) == #"{"status":42}"#)
        let kind = try decodeJSON(PushgateV1.DeliveryEvent.self, #"{"kind":"KIND_ENDPOINT_DISABLED"}"#)
        #expect(kind.kind == .endpointDisabled)
    }

    @Test("null means the default for every kind of field")
    func nulls() throws {
        let notification = try decodeJSON(
            PushgateV1.Notification.self,
            #"{"app":null,"tokens":null,"alert":null,"badge":null,"contentAvailable":null,"pushType":null,"#
                + #""priority":null,"expiration":null}"#)
        #expect(notification == PushgateV1.Notification())
        #expect(notification.badge == nil)
        let publish = try decodeJSON(PushgateV1.PublishRequest.self, #"{"attributes":null,"topic":"t"}"#)
        #expect(publish.attributes.isEmpty)
        #expect(publish.topic == "t")
        let update = try decodeJSON(PushgateV1.UpdateEndpointRequest.self, #"{"id":"e","enabled":null}"#)
        #expect(update.enabled == nil)
    }

    @Test("a field under both its names keeps the last, null included")
    func bothNames() throws {
        #expect(try decodeJSON(PushgateV1.Notification.self, #"{"threadId":"a","thread_id":"b"}"#).threadID == "b")
        #expect(try decodeJSON(PushgateV1.Notification.self, #"{"thread_id":"a","threadId":"b"}"#).threadID == "b")
        #expect(
            try decodeJSON(PushgateV1.Notification.self, #"{"pushType":1,"push_type":null}"#).pushType == .unspecified)
    }

    @Test("members in any order, and whitespace around them")
    func orderAndWhitespace() throws {
        let request = try decodeJSON(
            PushgateV1.SendRequest.self,
            " {\n \"notifications\" : [ { \"badge\" : 3 , \"app\" : \"a\" } ] } \n")
        #expect(request.notifications[0].badge == 3)
        #expect(request.notifications[0].app == "a")
    }
}
