import Foundation
import PushCore
import PushProto
import Testing

/// Our proto3 JSON against an independent implementation: Python protobuf's json_format wrote
/// Resources/proto-json-corpus.json (scripts/gen-proto-json-corpus.py), and
/// Tests/interop/test_proto_json.py keeps it current.
@Suite("Proto3 JSON: the json_format corpus")
struct ProtoJSONCorpusTests {
    struct Case {
        let name: String
        let message: String
        let binary: [UInt8]
        let json: String
        let inputs: [String]
    }

    struct Refusal {
        let message: String
        let json: String
        let path: String
    }

    static let types: [String: any ProtoJSONMessage.Type] = [
        "pushgate.v1.SendRequest": PushgateV1.SendRequest.self,
        "pushgate.v1.SendResponse": PushgateV1.SendResponse.self,
        "pushgate.v1.PublishRequest": PushgateV1.PublishRequest.self,
        "pushgate.v1.Message": PushgateV1.Message.self,
        "pushgate.v1.ListEndpointsResponse": PushgateV1.ListEndpointsResponse.self,
        "pushgate.v1.UpdateEndpointRequest": PushgateV1.UpdateEndpointRequest.self,
        "pushgate.v1.DeliveryEvent": PushgateV1.DeliveryEvent.self,
        "pushgate.v1.WatchEventsRequest": PushgateV1.WatchEventsRequest.self,
        "grpc.health.v1.HealthCheckResponse": GRPCHealthV1.HealthCheckResponse.self,
    ]

    static func corpus() throws -> JSONValue {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Resources/proto-json-corpus.json").path
        let data = try #require(FileManager.default.contents(atPath: path), "cannot read \(path)")
        return try JSONParser.parse([UInt8](data))
    }

    static func string(_ value: JSONValue?) throws -> String {
        guard case .string(let text)? = value else { throw CorpusError(what: "a string") }
        return text
    }

    static func array(_ value: JSONValue?) throws -> [JSONValue] {
        guard case .array(let elements)? = value else { throw CorpusError(what: "an array") }
        return elements
    }

    struct CorpusError: Error { let what: String }

    static func cases() throws -> [Case] {
        try array(corpus()["cases"]).map { entry in
            Case(
                name: try string(entry["name"]), message: try string(entry["message"]),
                binary: try hexBytes(try string(entry["binary"])), json: try string(entry["json"]),
                inputs: try array(entry["inputs"]).map(string))
        }
    }

    static func refusals() throws -> [Refusal] {
        try array(corpus()["refusals"]).map { entry in
            Refusal(
                message: try string(entry["message"]), json: try string(entry["json"]), path: try string(entry["path"]))
        }
    }

    static func hexBytes(_ text: String) throws -> [UInt8] {
        let digits = Array(text.utf8)
        return try stride(from: 0, to: digits.count, by: 2).map { index in
            guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else {
                throw CorpusError(what: "hex")
            }
            return byte
        }
    }

    @Test("the corpus covers what it should")
    func coverage() throws {
        #expect(try Self.cases().count >= 10)
        #expect(try Self.refusals().count >= 10)
    }

    @Test("json_format's JSON decodes to the message its binary form holds, and ours means the same")
    func cases() throws {
        for entry in try Self.cases() {
            let type = try #require(Self.types[entry.message], "no Swift type for \(entry.message)")
            try Self.check(type, entry)
        }
    }

    static func check<M: ProtoJSONMessage>(_ type: M.Type, _ entry: Case) throws {
        let fromBinary = try M(serializedBytes: entry.binary)
        let fromJSON = try M(jsonBytes: Array(entry.json.utf8))
        #expect(fromJSON == fromBinary, "\(entry.name): json_format's JSON")
        #expect(
            try canonicalJSON(fromBinary.jsonBytes()) == canonicalJSON(Array(entry.json.utf8)),
            "\(entry.name): ours is \(String(decoding: fromBinary.jsonBytes(), as: UTF8.self))")
        for input in entry.inputs {
            #expect(try M(jsonBytes: Array(input.utf8)) == fromBinary, "\(entry.name): \(input)")
        }
    }

    @Test("what json_format refuses, ours refuses at the path the corpus names")
    func refusals() throws {
        for refusal in try Self.refusals() {
            let type = try #require(Self.types[refusal.message], "no Swift type for \(refusal.message)")
            let error = jsonError(type, refusal.json)
            #expect(error?.path == refusal.path, "\(refusal.json): \(error?.description ?? "accepted")")
        }
    }
}
