// Fuzzes protobuf decoding of the server reflection messages (`grpc.reflection.v1`): protoc-c
// unpack and the generated copy-out of a oneof of several fields (a C union read by its case).
//
// Invariants: no crash or sanitizer report; decode → encode → decode gives an equal message and
// encoding is deterministic; the same bytes decode as v1alpha to the same encoding (the two versions
// are one protocol on the wire, which the gateway relies on to answer both with the v1 types).
import FuzzSupport
import PushProto

@_cdecl("proto_reflection_main")
func protoReflectionMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzz)
}

/// decode → encode → decode of `M` on `input`, checked; the encoding, or nil when `input` is not an `M`.
func roundTrip<M: ProtoMessage>(_ type: M.Type, _ input: UnsafeRawBufferPointer) -> [UInt8]? {
    let message: M
    do throws(ProtoDecodingError) {
        message = try M(serializedBytes: input)
    } catch {
        return nil
    }
    let encoded = message.serializedBytes()
    do throws(ProtoDecodingError) {
        let again = try M(serializedBytes: encoded)
        fuzzCheck(again == message, "decode(encode(\(M.self))) differs")
        fuzzCheck(again.serializedBytes() == encoded, "encoding of \(M.self) is not deterministic")
    } catch {
        fuzzCheck(false, "re-encoded \(M.self) does not decode: \(error)")
    }
    return encoded
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: start, count: count)
    let request = roundTrip(GRPCReflectionV1.ServerReflectionRequest.self, input)
    let alphaRequest = roundTrip(GRPCReflectionV1alpha.ServerReflectionRequest.self, input)
    fuzzCheck(request == alphaRequest, "v1 and v1alpha requests differ on the wire")
    let response = roundTrip(GRPCReflectionV1.ServerReflectionResponse.self, input)
    let alphaResponse = roundTrip(GRPCReflectionV1alpha.ServerReflectionResponse.self, input)
    fuzzCheck(response == alphaResponse, "v1 and v1alpha responses differ on the wire")
    return 0
}
