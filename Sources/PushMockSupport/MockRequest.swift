import PushCredentials
import PushTLS

/// One request as a mock connection hands it to its server: the headers and the body.
package struct MockRequest: Sendable {
    package var method = ""
    package var path = ""
    package var authority = ""
    /// Regular (non-pseudo) headers by lower-case name; a repeated header keeps its last value.
    package var headers: [String: String] = [:]
    /// The first `maxBodyBytes + 1` bytes; `bodyLength` counts all of them.
    package var body: [UInt8] = []
    package var bodyLength = 0
    /// Which connection (numbered from 1 in accept order) and stream carried it.
    package var connectionID = 0
    package var streamID: Int32 = 0

    package init(connectionID: Int, streamID: Int32) {
        self.connectionID = connectionID
        self.streamID = streamID
    }

    package var contentType: String { headers["content-type"] ?? "" }
    package var authorization: String? { headers["authorization"] }

    /// The path without its query.
    package var route: Substring {
        // By byte: a Character-wise split costs grapheme breaking on every character of the path.
        guard let question = path.utf8.firstIndex(of: UInt8(ascii: "?")) else { return path[...] }
        return path[..<question]
    }

    /// The token of `Authorization: Bearer <token>` (the scheme in any case), else nil.
    package var bearerToken: Substring? {
        guard let authorization, authorization.utf8.count > 7,
            equalsIgnoringASCIICase(authorization.utf8.prefix(7), "bearer ".utf8)
        else { return nil }
        return authorization[authorization.utf8.index(authorization.startIndex, offsetBy: 7)...]
    }

    /// The form of an OAuth2 token request (RFC 6749 §4.1.3, §4.4.2) whose `grant_type` is
    /// `grantType`, or the OAuth2 error answer: 405 for another method, 400 `invalid_request`
    /// for another content type, a body that is not a form or has no `grant_type`, 400
    /// `unsupported_grant_type` for another grant.
    package func oauthForm(grantType: String, maxBodyBytes: Int) -> Result<
        [(name: String, value: String)], MockResponse
    > {
        guard method == "POST" else {
            return .failure(.oauth(405, error: "invalid_request", "The token endpoint only accepts POST."))
        }
        guard contentType.lowercased().hasPrefix("application/x-www-form-urlencoded") else {
            return .failure(
                .oauth(400, error: "invalid_request", "Content-Type must be application/x-www-form-urlencoded."))
        }
        guard bodyLength <= maxBodyBytes, let form = FormURLEncoding.decode(body) else {
            return .failure(.oauth(400, error: "invalid_request", "The request body is not a valid form."))
        }
        guard let grant = FormURLEncoding.value("grant_type", in: form) else {
            return .failure(.oauth(400, error: "invalid_request", "Missing required parameter: grant_type"))
        }
        guard grant == grantType else {
            return .failure(.oauth(400, error: "unsupported_grant_type", "Invalid grant_type: \(grant)"))
        }
        return .success(form)
    }
}

/// Whether two byte strings are equal but for the case of ASCII letters (header values, paths),
/// without making lowercased copies.
package func equalsIgnoringASCIICase(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
    func lowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
    }
    return a.count == b.count && zip(a, b).allSatisfy { lowercased($0) == lowercased($1) }
}
