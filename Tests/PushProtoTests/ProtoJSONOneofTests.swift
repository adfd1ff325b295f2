import PushProto
import Testing

/// A oneof of several fields (gRPC reflection's request) in proto3 JSON: the set case is written,
/// even with a default value; two cases at once are refused.
@Suite("Proto3 JSON: several-field oneofs")
struct ProtoJSONOneofTests {
    @Test func setCaseRoundTripsAndTwoCasesAreRefused() throws {
        var request = GRPCReflectionV1.ServerReflectionRequest()
        request.host = "h"
        request.messageRequest = .listServices("")
        let json = String(decoding: request.jsonBytes(), as: UTF8.self)
        #expect(json == #"{"host":"h","listServices":""}"#)
        #expect(try GRPCReflectionV1.ServerReflectionRequest(jsonBytes: Array(json.utf8)) == request)
        let symbol = try GRPCReflectionV1.ServerReflectionRequest(
            jsonBytes: Array(#"{"file_containing_symbol":"pushgate.v1.Push"}"#.utf8))
        #expect(symbol.messageRequest == .fileContainingSymbol("pushgate.v1.Push"))
        #expect(throws: ProtoJSONError.self) {
            try GRPCReflectionV1.ServerReflectionRequest(
                jsonBytes: Array(#"{"listServices":"","fileByFilename":"x"}"#.utf8))
        }
    }
}
