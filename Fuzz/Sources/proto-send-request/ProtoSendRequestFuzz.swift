// Fuzzes protobuf decoding of `pushgate.v1.SendRequest` (protoc-c unpack + the generated Swift
// copy-out) and the validation every notification then goes through.
//
// Invariants: no crash or sanitizer report; decode → encode → decode gives an equal message and
// encoding is deterministic; a notification that validates has a payload that is a JSON object
// within the push type's limit, one normalized token per token, a header-safe topic, and (with no
// explicit push type) the push type that inference over the payload bytes gives.
import FuzzSupport
import PushCore
import PushProto

@_cdecl("proto_send_request_main")
func protoSendRequestMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzz)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: start, count: count)
    let request: PushgateV1.SendRequest
    do throws(ProtoDecodingError) {
        request = try PushgateV1.SendRequest(serializedBytes: input)
    } catch {
        return 0
    }

    let encoded = request.serializedBytes()
    let again: PushgateV1.SendRequest
    do throws(ProtoDecodingError) {
        again = try PushgateV1.SendRequest(serializedBytes: encoded)
    } catch {
        fuzzCheck(false, "re-encoded request does not decode: \(error)")
        return 0
    }
    fuzzCheck(again == request, "decode(encode(request)) != request")
    fuzzCheck(again.serializedBytes() == encoded, "encoding is not deterministic")

    for (index, notification) in request.notifications.enumerated() {
        guard let domain = NotificationRequest(proto: notification) else { continue }
        let path = "notifications[\(index)]"
        switch NotificationValidator.prepare(domain, at: path, bundleID: "com.example.app") {
        case .failure(let error):
            fuzzCheck(error.field.hasPrefix(path), "error field \(error.field) not under \(path)")
        case .success(let prepared):
            fuzzCheck(prepared.tokens.count == domain.tokens.count, "token count changed")
            fuzzCheck(prepared.payload.count <= prepared.pushType.maxPayloadBytes, "payload over the limit")
            let payload = try? JSONParser.parse(prepared.payload)
            fuzzCheck(payload?.objectMembers != nil, "payload is not a JSON object")
            fuzzCheck(prepared.topic.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }, "topic is not printable ASCII")
            fuzzCheck([1, 5, 10].contains(prepared.priority), "priority \(prepared.priority)")
            if let collapseID = prepared.collapseID { fuzzCheck(collapseID.utf8.count <= 64, "collapse id too long") }
            if domain.pushType == nil, let payload {
                // The builder infers without re-parsing; it must agree with inference over the bytes.
                let inferred = PushType.infer(fromPayload: payload)
                fuzzCheck(prepared.pushType == inferred, "push type \(prepared.pushType), the payload says \(inferred)")
            }
        }
    }
    return 0
}
