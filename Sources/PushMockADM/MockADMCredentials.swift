import PushCore
public import PushTLS

/// The Login-with-Amazon client credentials of an ADM app (Amazon's developer console calls
/// them "Client ID" and "Client Secret").
///
/// The gateway's ADM app names them `client_id` (the text) and `client_secret_file` (a file
/// holding only the secret), so a mock and a gateway agree when the mock is started with
/// `--client-id <client_id> --client-secret-file <client_secret_file>`, or when it writes the
/// secret for the gateway with `--write-client-secret`. ``json`` is the one-file form
/// (`{"client_id":"…","client_secret":"…"}`) of `--write-credentials` / `--credentials`.
public struct MockADMCredentials: Sendable, Equatable {
    public var clientID: String
    public var clientSecret: String

    public init(clientID: String, clientSecret: String) {
        self.clientID = clientID
        self.clientSecret = clientSecret
    }

    /// A random pair shaped like Amazon's: `amzn1.application-oa2-client.` + 32 hex digits, and
    /// a 64-hex-digit secret (or `clientID` as given, with a random secret).
    public static func generate(clientID: String? = nil) throws(TLSError) -> Self {
        let id: String
        if let clientID {
            id = clientID
        } else {
            id = "amzn1.application-oa2-client." + hex(try SecureRandom.bytes(count: 16))
        }
        return MockADMCredentials(clientID: id, clientSecret: hex(try SecureRandom.bytes(count: 32)))
    }

    /// `{"client_id":"…","client_secret":"…"}`.
    public var json: [UInt8] {
        var writer = JSONWriter(reservingCapacity: 160)
        writer.beginObject()
        writer.key("client_id")
        writer.string(clientID)
        writer.key("client_secret")
        writer.string(clientSecret)
        writer.endObject()
        return writer.bytes
    }

    /// Reads ``json``'s form; nil unless both members are non-empty strings.
    public init?(json: [UInt8]) {
        guard let document = try? JSONParser.parse(json), case .string(let id)? = document["client_id"],
            case .string(let secret)? = document["client_secret"], !id.isEmpty, !secret.isEmpty
        else { return nil }
        self.init(clientID: id, clientSecret: secret)
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0xF)]] })
    }
}
