// Fuzzes the generated proto3 JSON decoding of every request message (what a Connect
// `application/json` call hands the gateway): the input's first byte picks the message, the rest is
// the JSON document.
//
// Invariants: no crash (deep nesting, huge numbers, bad base64 are errors); an error always says
// what is wrong; a decoded message encodes to JSON that decodes to an equal message, and that
// encoding is a fixed point; the binary form of a decoded message decodes to an equal message
// (unless a string holds U+0000, which protobuf-c's C strings cannot carry).
import FuzzSupport
import PushCore
import PushProto

@_cdecl("proto_json_main")
func protoJSONMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzz)
}

/// Every request message of the Push, Registry, Channels and Health services.
let requestTypes: [any ProtoJSONMessage.Type] = [
    PushgateV1.SendRequest.self, PushgateV1.PublishRequest.self, PushgateV1.GetMessageRequest.self,
    PushgateV1.WatchEventsRequest.self, PushgateV1.ListApplicationsRequest.self,
    PushgateV1.CreateEndpointRequest.self, PushgateV1.GetEndpointRequest.self,
    PushgateV1.UpdateEndpointRequest.self, PushgateV1.DeleteEndpointRequest.self,
    PushgateV1.ListEndpointsRequest.self, PushgateV1.CreateTopicRequest.self, PushgateV1.DeleteTopicRequest.self,
    PushgateV1.ListTopicsRequest.self, PushgateV1.SubscribeRequest.self, PushgateV1.UnsubscribeRequest.self,
    PushgateV1.ListSubscriptionsRequest.self, PushgateV1.CreateChannelRequest.self,
    PushgateV1.GetChannelRequest.self, PushgateV1.ListChannelsRequest.self, PushgateV1.DeleteChannelRequest.self,
    PushgateV1.BroadcastRequest.self, GRPCHealthV1.HealthCheckRequest.self,
]

func check<M: ProtoJSONMessage>(_ type: M.Type, _ json: ArraySlice<UInt8>) {
    let message: M
    do throws(ProtoJSONError) {
        message = try M(jsonBytes: json)
    } catch {
        fuzzCheck(!error.message.isEmpty, "an error without a message")
        return
    }
    let encoded = message.jsonBytes()
    let again: M
    do throws(ProtoJSONError) {
        again = try M(jsonBytes: encoded)
    } catch {
        fuzzCheck(false, "our own JSON does not decode: \(error)")
        return
    }
    fuzzCheck(again == message, "decode(encode(message)) != message")
    fuzzCheck(again.jsonBytes() == encoded, "JSON encoding is not a fixed point")
    let nul = Array(#"\u0000"#.utf8)
    if !encoded.indices.contains(where: { encoded[$0...].starts(with: nul) }) {
        let binary = try? M(serializedBytes: message.serializedBytes())
        fuzzCheck(binary == message, "the binary form of a JSON-decoded message decodes differently")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
    guard let selector = bytes.first else { return 0 }
    let type = requestTypes[Int(selector) % requestTypes.count]
    check(type, bytes[1...])
    return 0
}
