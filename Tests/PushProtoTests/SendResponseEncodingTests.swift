import PushCore
import PushProto
import Testing

@Suite("A SendResponse written straight from delivery results")
struct SendResponseEncodingTests {
    /// What protobuf-c packs for the same results mapped to `PushgateV1.Result`s.
    static func packed(_ results: [DeliveryResult], prefix: Int) -> [UInt8] {
        var response = PushgateV1.SendResponse()
        response.results = results.map { PushgateV1.Result($0) }
        return response.serializedBytes(reservingPrefix: prefix)
    }

    static let samples: [DeliveryResult] = [
        DeliveryResult(
            notificationIndex: 0, token: String(repeating: "a1", count: 32), status: .delivered, code: .delivered,
            httpStatus: 200, providerID: "0F4E2B6C-1D5A-4E7B-9C3D-2A1B0C9D8E7F", attempts: 1),
        DeliveryResult(
            notificationIndex: 1, token: "short", status: .rejected, code: .rejectedByProvider, httpStatus: 410,
            reason: "Unregistered", unregisteredAt: 1_700_000_000_123, attempts: 1, invalidatesToken: true),
        DeliveryResult(
            notificationIndex: 2, token: "", status: .failed, code: .deadlineExceeded, reason: "DeadlineExceeded"),
        DeliveryResult(
            notificationIndex: 300, token: "ünï ☃", status: .delivered, code: .delivered, httpStatus: 201,
            providerID: String(repeating: "x", count: 200), attempts: 3, canonicalToken: "amzn1.adm-registration.v3.new"
        ),
        DeliveryResult(
            notificationIndex: -1, token: "t", status: .failed, code: .connectionLost, httpStatus: -5,
            unregisteredAt: -1,
            attempts: 129),
    ]

    @Test("the same bytes as protobuf-c's pack, one result or many, with and without a prefix")
    func matchesProtobufC() {
        for prefix in [0, 5] {
            #expect(
                PushgateV1.SendResponse.serializedBytes(of: [], reservingPrefix: prefix)
                    == Self.packed([], prefix: prefix))
            for sample in Self.samples {
                #expect(
                    PushgateV1.SendResponse.serializedBytes(of: [sample], reservingPrefix: prefix)
                        == Self.packed([sample], prefix: prefix))
            }
            #expect(
                PushgateV1.SendResponse.serializedBytes(of: Self.samples, reservingPrefix: prefix)
                    == Self.packed(Self.samples, prefix: prefix))
        }
    }

    @Test("a 1,000-result response reads back as the results")
    func largeResponseDecodes() throws {
        let results = (0..<1000).map {
            DeliveryResult(
                notificationIndex: $0 % 7, token: String(repeating: "0", count: 60) + String($0 + 1000, radix: 16),
                status: .delivered, code: .delivered, httpStatus: 200,
                providerID: "id-\($0)", attempts: 1)
        }
        let bytes = PushgateV1.SendResponse.serializedBytes(of: results, reservingPrefix: 0)
        #expect(bytes == Self.packed(results, prefix: 0))
        let decoded = try PushgateV1.SendResponse(serializedBytes: bytes)
        #expect(decoded.results == results.map { PushgateV1.Result($0) })
    }
}
