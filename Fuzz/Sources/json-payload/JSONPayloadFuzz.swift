// Fuzzes the JSON parser and writer and the APNs payload builder.
//
// Invariants: no crash; parse → encode → parse gives an equal value, and encoding that is a fixed
// point; a payload built with the input as data_json (or as payload_json) parses, is an object
// whose first key is "aps" (built) or equals the input bytes (verbatim), and carries data_json's
// members after "aps"; data_json that is an object without "aps" always builds next to an alert.
import FuzzSupport
import PushCore

@_cdecl("json_payload_main")
func jsonPayloadMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzz)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: start, count: count)
    let parsed = try? JSONParser.parse(input)
    if let parsed {
        let encoded = JSONWriter.encode(parsed)
        let reparsed: JSONValue
        do throws(JSONError) {
            reparsed = try JSONParser.parse(encoded)
        } catch {
            fuzzCheck(false, "encoded JSON does not parse: \(error)")
            return 0
        }
        fuzzCheck(reparsed == parsed, "parse(encode(value)) != value")
        fuzzCheck(JSONWriter.encode(reparsed) == encoded, "encoding is not a fixed point")
    }

    // data_json: the text the protobuf layer would hand over (invalid UTF-8 repaired).
    let text = String(decoding: input, as: UTF8.self)
    let textValue = try? JSONParser.parse(text.utf8)
    let alert = NotificationRequest.Alert(title: "t")
    do throws(ValidationError) {
        let payload = try APNsPayloadBuilder.build(NotificationRequest(tokens: [], alert: alert, dataJSON: text))
        let document = try? JSONParser.parse(payload)
        guard let members = document?.objectMembers else {
            fuzzCheck(false, "built payload is not a JSON object")
            return 0
        }
        fuzzCheck(members.first?.0 == "aps", "built payload does not start with aps")
        let data = textValue?.objectMembers ?? []
        fuzzCheck(members.count == data.count + 1, "built payload has \(members.count) members, data \(data.count)")
        fuzzCheck(zip(members.dropFirst(), data).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }, "data members changed")
    } catch {
        fuzzCheck(error.field == "data_json", "error field \(error.field)")
        if let members = textValue?.objectMembers {
            fuzzCheck(members.contains { $0.0 == "aps" }, "an object data_json without aps was refused: \(error)")
        }
    }

    // payload_json: used verbatim when it is an object.
    do throws(ValidationError) {
        let payload = try APNsPayloadBuilder.build(NotificationRequest(tokens: [], payloadJSON: text))
        fuzzCheck(payload.elementsEqual(text.utf8), "payload_json not kept verbatim")
        fuzzCheck(textValue?.objectMembers != nil, "payload_json that is not an object accepted")
    } catch {
        if !text.isEmpty { fuzzCheck(error.field == "payload_json", "error field \(error.field)") }
    }
    return 0
}
