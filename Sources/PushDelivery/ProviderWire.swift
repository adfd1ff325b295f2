import PushHTTP1
public import PushHTTP2

/// Where a dialect puts one request: the connection's HTTP/2 session, or its HTTP/1.1 session.
/// The dialect describes the request once (a header template with per-token slots, and a body)
/// and does not know which version carries it.
public struct ProviderWire {
    enum Carrier {
        case http2(HTTP2Session)
        /// With the id the request is known by on this connection (HTTP/1.1 has no stream ids).
        case http1(HTTP1ClientSession, id: Int32)
    }

    let carrier: Carrier

    /// Sends a request whose headers are `template` with entry `first.index` (and `second.index`,
    /// `third.index`) set to the given bytes, and `body`. HTTP/1.1 gets the same fields: `:method` and `:path`
    /// make the request line, `:authority` the `Host` header, `:scheme` is left out. Returns the
    /// request's id on this connection (the HTTP/2 stream id).
    public func submitRequest(
        template: HTTP2HeaderTemplate, replacing first: (index: Int, value: UnsafeRawBufferPointer),
        _ second: (index: Int, value: UnsafeRawBufferPointer)? = nil,
        _ third: (index: Int, value: UnsafeRawBufferPointer)? = nil, body: [UInt8]
    ) throws(ProviderWireError) -> Int32 {
        switch carrier {
        case .http2(let session):
            do {
                return try session.submitRequest(template: template, replacing: first, second, third, body: body)
            } catch {
                throw ProviderWireError(description: "\(error)")
            }
        case .http1(let session, let id):
            // A head per request: one request at a time on the connection, so an allocation is
            // nothing beside the round trip it waits for.
            var head: [UInt8] = []
            try Self.writeHead(template: template, first, second, third, contentLength: body.count, into: &head)
            body.withUnsafeBytes { session.send(head: head, body: $0) }
            return id
        }
    }

    private static let method = Array(":method".utf8)
    private static let path = Array(":path".utf8)
    private static let authority = Array(":authority".utf8)

    /// The HTTP/1.1 head for the template's fields. Values with CR or LF are refused: a token must
    /// not be able to add a header line.
    static func writeHead(
        template: HTTP2HeaderTemplate, _ first: (index: Int, value: UnsafeRawBufferPointer),
        _ second: (index: Int, value: UnsafeRawBufferPointer)?,
        _ third: (index: Int, value: UnsafeRawBufferPointer)? = nil, contentLength: Int, into head: inout [UInt8]
    ) throws(ProviderWireError) {
        head.removeAll(keepingCapacity: true)
        var method: [UInt8] = []
        var target: [UInt8] = []
        var fields: [UInt8] = []
        var unsafe = false
        template.forEachField(replacing: first, second, third) { name, value in
            if value.contains(where: { $0 == 0x0D || $0 == 0x0A }) { unsafe = true }
            if name.elementsEqual(Self.method) {
                method.append(contentsOf: value)
            } else if name.elementsEqual(Self.path) {
                target.append(contentsOf: value)
            } else if name.elementsEqual(Self.authority) {
                fields.append(contentsOf: "host: ".utf8)
                fields.append(contentsOf: value)
                fields.append(contentsOf: "\r\n".utf8)
            } else if name.first != UInt8(ascii: ":") {
                fields.append(contentsOf: name)
                fields.append(contentsOf: ": ".utf8)
                fields.append(contentsOf: value)
                fields.append(contentsOf: "\r\n".utf8)
            }
        }
        guard !unsafe else {
            throw ProviderWireError(description: "a header value holds CR or LF", refusesRequestOnly: true)
        }
        head.append(contentsOf: method)
        head.append(0x20)
        head.append(contentsOf: target)
        head.append(contentsOf: " HTTP/1.1\r\n".utf8)
        head.append(contentsOf: fields)
        head.append(contentsOf: "content-length: \(contentLength)\r\n\r\n".utf8)
    }
}

/// Why a request could not be written.
public struct ProviderWireError: Error, Sendable, CustomStringConvertible {
    public let description: String
    /// The request itself is at fault (a dialect could not build it): it is FAILED with
    /// ``description`` and the connection goes on. Otherwise the session refused it, and the
    /// connection is replaced with the request kept for the next one.
    public let refusesRequestOnly: Bool

    public init(description: String, refusesRequestOnly: Bool = false) {
        self.description = description
        self.refusesRequestOnly = refusesRequestOnly
    }
}
