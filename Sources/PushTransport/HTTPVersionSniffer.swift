/// Tells the HTTP version of a cleartext connection from its first bytes: an HTTP/2 client with
/// prior knowledge begins with the connection preface (RFC 9113 §3.4), which no HTTP/1.1 request
/// can begin with (`PRI` is no method a server accepts); anything else is HTTP/1.1.
public enum HTTPVersionSniffer {
    /// `PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n`.
    public static let http2Preface: [UInt8] = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    /// The version `prefix` (the first bytes received) shows, or nil while it is a proper prefix of
    /// the preface (more bytes are needed). Only as many bytes as the preface has are looked at.
    public static func version(of prefix: some Collection<UInt8>) -> HTTPVersion? {
        var count = 0
        for (byte, expected) in zip(prefix, http2Preface) {
            guard byte == expected else { return .http1 }
            count += 1
        }
        return count == http2Preface.count ? .http2 : nil
    }
}
