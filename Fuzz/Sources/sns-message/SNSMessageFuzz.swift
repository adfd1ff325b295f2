// Fuzzes the SNS publish path up to the APNs payload: SNSMessage.parse (message structure "json" or
// "", checked for a topic or an endpoint), then SNSAPNsPayload.build for the APNs keys.
//
// Input: byte 0 picks the structure (bit 0: "json", bit 1: an odd structure string) and the target
// (bits 2-3: topic, or an endpoint of APNS / APNS_SANDBOX / GCM); with bit 4 set, message
// attributes follow (a count byte, then per attribute a name choice byte and a length-prefixed
// value) and a byte of seconds since publishing; the rest is the message (invalid UTF-8 repaired,
// as the protobuf layer does).
//
// Invariants: no crash; a parsed message has the text the target needs; a built payload is a JSON
// object within the push type's limit.
import FuzzSupport
import PushCore

@_cdecl("sns_message_main")
func snsMessageMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzz)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    var input = FuzzInput(start, count)
    let selector = input.byte()
    let structure = selector & 2 != 0 ? "JSON" : (selector & 1 != 0 ? "json" : "")
    let targets: [SNSTarget] = [.topic, .endpoint(.apns), .endpoint(.apnsSandbox), .endpoint(.gcm)]
    let target = targets[Int(selector >> 2) & 3]
    var attributes: [String: String] = [:]
    var elapsed: Int64 = 0
    if selector & 16 != 0 {
        let names = [
            "AWS.SNS.MOBILE.APNS.PUSH_TYPE", "AWS.SNS.MOBILE.APNS.PRIORITY", "AWS.SNS.MOBILE.APNS.TOPIC",
            "AWS.SNS.MOBILE.APNS.COLLAPSE_ID", "AWS.SNS.MOBILE.APNS.TTL", "AWS.SNS.MOBILE.APNS_SANDBOX.TTL",
            "AWS.SNS.MOBILE.FCM.TTL", "AWS.Other", "store",
        ]
        for _ in 0..<(input.byte() & 3) {
            let choice = Int(input.byte())
            let name = choice < names.count ? names[choice] : String(decoding: [UInt8(choice)], as: UTF8.self)
            attributes[name] = input.shortString()
        }
        elapsed = Int64(input.byte())
    }
    let message = String(decoding: input.rest(), as: UTF8.self)

    let parsed: SNSMessage
    do throws(ValidationError) {
        parsed = try SNSMessage.parse(message: message, structure: structure, target: target, attributes: attributes)
    } catch {
        // `message.GCM…` names a problem inside the GCM value (SNSFCMPayload checks its shape).
        fuzzCheck(
            ["message", "message_structure"].contains(error.field) || error.field.hasPrefix("message.GCM"),
            "error field \(error.field)")
        return 0
    }
    fuzzCheck(structure != "JSON", "structure \"JSON\" accepted")
    switch target {
    case .topic: fuzzCheck(parsed.defaultText != nil, "topic message without default")
    case .endpoint(let key): fuzzCheck(parsed.text(for: key) != nil, "endpoint message without its text")
    }
    if structure.isEmpty { fuzzCheck(parsed.defaultText == message, "plain message changed") }

    for key in [PlatformKey.apns, .apnsSandbox] {
        guard parsed.text(for: key) != nil else { continue }
        let built: PreparedNotification?
        let publishedAt: Int64 = 1_700_000_000
        do throws(ValidationError) {
            let options = try SNSAttributes.parse(attributes, platformKey: key)
            built = try SNSAPNsPayload.build(
                message: parsed, key: key, options: options, bundleID: "com.example.app",
                publishedAt: publishedAt, now: publishedAt + elapsed)
        } catch {
            continue
        }
        guard let built else {
            fuzzCheck(elapsed > 0, "expired at the moment of publishing")
            continue
        }
        if let expiration = built.expiration { fuzzCheck(expiration >= 0, "negative expiration") }
        fuzzCheck(built.payload.count <= built.pushType.maxPayloadBytes, "payload over the limit")
        let document = try? JSONParser.parse(built.payload)
        fuzzCheck(document?.objectMembers != nil, "payload is not a JSON object")
        if attributes["AWS.SNS.MOBILE.APNS.PUSH_TYPE"] == nil, let document {
            let inferred = SNSPushTypeInference.infer(fromPayload: document)
            fuzzCheck(built.pushType == inferred, "push type \(built.pushType), the payload says \(inferred)")
        }
        if parsed.platformTexts[key.rawValue] == nil {
            // The default text wrapped as {"aps":{"alert":text}}.
            fuzzCheck(document?["aps"]?["alert"] == .string(parsed.defaultText!), "default text not kept")
        }
    }
    return 0
}
