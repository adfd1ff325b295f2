import COpenSSL

/// ALPN protocol lists (RFC 7301): the wire form for clients and the server's selection.
enum ALPN {
    /// The length-prefixed wire encoding OpenSSL wants, e.g. "\u{2}h2". Names must be 1…255 bytes.
    static func wireFormat(_ protocols: [String]) throws(TLSError) -> [UInt8] {
        var wire: [UInt8] = []
        for name in protocols {
            let bytes = Array(name.utf8)
            guard (1...255).contains(bytes.count) else {
                throw TLSError(.configuration, "ALPN protocol name must be 1…255 bytes: \"\(name)\"")
            }
            wire.append(UInt8(bytes.count))
            wire.append(contentsOf: bytes)
        }
        return wire
    }

    /// The first of the server's protocols (in the server's preference order) that the client's
    /// wire-format list also contains, as a range into `clientWire`.
    static func select(serverPreference: [[UInt8]], clientWire: UnsafeRawBufferPointer) -> Range<Int>? {
        var offered: [Range<Int>] = []
        var index = 0
        while index < clientWire.count {
            let length = Int(clientWire[index])
            let start = index + 1
            // A malformed list (zero length or running past the end) selects nothing.
            guard length > 0, start + length <= clientWire.count else { return nil }
            offered.append(start..<start + length)
            index = start + length
        }
        for wanted in serverPreference {
            if let match = offered.first(where: { clientWire[$0].elementsEqual(wanted) }) {
                return match
            }
        }
        return nil
    }
}

/// The server's ALPN preference, reachable from OpenSSL's C select callback through its `arg`.
/// The owning TLSContext keeps it alive, and every TLSConnection keeps its context alive, so the
/// pointer OpenSSL holds never dangles while a handshake can run.
final class ALPNServerPreference {
    let protocols: [[UInt8]]

    init(_ protocols: [String]) { self.protocols = protocols.map { Array($0.utf8) } }

    /// Installs the select callback. With no common protocol the server proceeds *without* ALPN
    /// (SSL_TLSEXT_ERR_NOACK) rather than sending no_application_protocol: the client then sees
    /// `negotiatedALPN == nil` and can report "server did not select h2" itself, which is easier to
    /// diagnose than a bare handshake alert.
    func install(on ctx: OpaquePointer) {
        let arg = Unmanaged.passUnretained(self).toOpaque()
        SSL_CTX_set_alpn_select_cb(
            ctx,
            { _, out, outLength, clientList, clientLength, arg in
                guard let arg, let out, let outLength, let clientList else { return SSL_TLSEXT_ERR_NOACK }
                let preference = Unmanaged<ALPNServerPreference>.fromOpaque(arg).takeUnretainedValue()
                let client = UnsafeRawBufferPointer(start: clientList, count: Int(clientLength))
                guard let match = ALPN.select(serverPreference: preference.protocols, clientWire: client) else {
                    return SSL_TLSEXT_ERR_NOACK
                }
                // OpenSSL copies the selection before the client list goes away.
                out.pointee = clientList + match.lowerBound
                outLength.pointee = UInt8(match.count)
                return SSL_TLSEXT_ERR_OK
            }, arg)
    }
}
