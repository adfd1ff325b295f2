import Testing

@testable import PushCore

@Suite("PushType")
struct PushTypeTests {
    @Test("topic suffixes follow docs/providers.md A.3")
    func suffixes() {
        let expected: [PushType: String] = [
            .alert: "", .background: "", .mdm: "", .voip: ".voip", .complication: ".complication",
            .fileprovider: ".pushkit.fileprovider", .location: ".location-query",
            .liveactivity: ".push-type.liveactivity", .pushtotalk: ".voip-ptt", .widgets: ".push-type.widgets",
            .controls: ".push-type.controls",
        ]
        #expect(PushType.allCases.count == 11)
        for type in PushType.allCases {
            #expect(type.topicSuffix == expected[type], "\(type)")
        }
    }

    @Test("raw values are the apns-push-type header values")
    func rawValues() {
        #expect(PushType.liveactivity.rawValue == "liveactivity")
        #expect(PushType(rawValue: "pushtotalk") == .pushtotalk)
    }

    @Test("voip allows 5120 bytes, everything else 4096")
    func limits() {
        for type in PushType.allCases {
            #expect(type.maxPayloadBytes == (type == .voip ? 5120 : 4096))
        }
    }

    @Test(
        "inference from a payload",
        arguments: [
            (#"{"aps":{"content-available":1}}"#, PushType.background),
            (#"{"aps":{"content-available":1},"custom":1}"#, .background),
            (#"{"custom":{"aps":2},"aps":{"content-available":1}}"#, .background),
            (#"{"aps":{"content-available":1,"badge":1}}"#, .alert),
            (#"{"aps":{"content-available":1,"thread-id":"t"}}"#, .alert),
            (#"{"aps":{"content-available":0}}"#, .alert),
            (#"{"aps":{"content-available":true}}"#, .alert),
            (#"{"aps":{"content-available":"1"}}"#, .alert),
            (#"{"aps":{"content-available":1.0}}"#, .alert),
            (#"{"aps":{}}"#, .alert),
            (#"{"aps":{"alert":"hi"}}"#, .alert),
            (#"{"custom":1}"#, .alert),
            (#"{"aps":[1]}"#, .alert),
            (#"[1]"#, .alert),
        ])
    func inference(payload: String, expected: PushType) throws {
        #expect(PushType.infer(fromPayload: try JSONParser.parse(payload.utf8)) == expected)
    }
}
