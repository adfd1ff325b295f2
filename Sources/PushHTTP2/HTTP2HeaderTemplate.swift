import CNGHTTP2

/// A request header list prepared once and submitted many times, with a value or two that differ
/// per request (APNs: `:path`, and the cached `authorization`).
///
/// The names and values are copied once into one buffer owned by the template, and the
/// `nghttp2_nv` array pointing into it is built once; a submission copies that small array onto
/// the stack and points the varying entries at the caller's bytes. So per request there is no
/// header array to copy, no re-encoding, and no retain/release per field. Immutable after `init`,
/// so one template may be shared by connections on several loops.
///
/// nghttp2 is told not to copy the template's own names and values (`NO_COPY_NAME`,
/// `NO_COPY_VALUE`: it otherwise copies and lower-cases every field of every submission), so the
/// names are lower-cased here once, and a session keeps the template of a queued HEADERS frame
/// alive in the stream's state until the stream is forgotten: nghttp2 reads the bytes when it
/// packs the frame, which happens before the stream can close. Entries replaced per submission
/// point at the caller's bytes and are still copied.
public final class HTTP2HeaderTemplate: @unchecked Sendable {
    let count: Int
    private let nvs: UnsafeMutableBufferPointer<nghttp2_nv>
    private let storage: UnsafeMutableRawBufferPointer

    public convenience init(_ headers: [HTTP2Header]) {
        var builder = Builder()
        for header in headers { builder.add(name: header.name, value: header.value, indexable: header.indexable) }
        self.init(builder)
    }

    /// The fields collected by `builder`, copied into one buffer.
    public init(_ builder: Builder) {
        count = builder.fields.count
        storage = .allocate(byteCount: max(builder.bytes.count, 1), alignment: 1)
        nvs = .allocate(capacity: max(count, 1))
        let base = storage.baseAddress!.assumingMemoryBound(to: UInt8.self)
        builder.bytes.withUnsafeBytes { source in
            if let from = source.baseAddress { storage.baseAddress!.copyMemory(from: from, byteCount: source.count) }
        }
        let noCopy = NGHTTP2_NV_FLAG_NO_COPY_NAME.rawValue | NGHTTP2_NV_FLAG_NO_COPY_VALUE.rawValue
        for (index, field) in builder.fields.enumerated() {
            // HTTP/2 field names are lower case; nghttp2 lower-cases only the names it copies.
            for offset in field.nameStart..<(field.nameStart + field.nameCount) {
                if (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(base[offset]) { base[offset] |= 0x20 }
            }
            nvs.initializeElement(
                at: index,
                to: nghttp2_nv(
                    name: base + field.nameStart, value: base + field.valueStart, namelen: field.nameCount,
                    valuelen: field.valueCount,
                    flags: UInt8(noCopy | (field.indexable ? 0 : NGHTTP2_NV_FLAG_NO_INDEX.rawValue))))
        }
    }

    /// Collects the fields of a template in one growing byte buffer, so that a template made per
    /// message (APNs: one per notification) costs no `[UInt8]` per name and value on the way.
    public struct Builder {
        fileprivate struct Field {
            var nameStart: Int
            var nameCount: Int
            var valueStart: Int
            var valueCount: Int
            var indexable: Bool
        }

        fileprivate var bytes: [UInt8] = []
        fileprivate var fields: [Field] = []

        public init(capacity: Int = 256, fields: Int = 10) {
            bytes.reserveCapacity(capacity)
            self.fields.reserveCapacity(fields)
        }

        /// How many fields so far (the index the next one gets).
        public var count: Int { fields.count }

        /// Adds a field; `indexable: false` is sent without HPACK indexing (see ``HTTP2Header/indexable``).
        public mutating func add(_ name: StaticString, _ value: String, indexable: Bool = true) {
            let nameStart = bytes.count
            name.withUTF8Buffer { bytes.append(contentsOf: $0) }
            let valueStart = bytes.count
            bytes.append(contentsOf: value.utf8)
            fields.append(
                Field(
                    nameStart: nameStart, nameCount: valueStart - nameStart, valueStart: valueStart,
                    valueCount: bytes.count - valueStart, indexable: indexable))
        }

        public mutating func add(name: [UInt8], value: [UInt8], indexable: Bool = true) {
            let nameStart = bytes.count
            bytes.append(contentsOf: name)
            let valueStart = bytes.count
            bytes.append(contentsOf: value)
            fields.append(
                Field(
                    nameStart: nameStart, nameCount: name.count, valueStart: valueStart, valueCount: value.count,
                    indexable: indexable))
        }
    }

    /// The fields as header values (for tests and logs; submissions use the prepared array).
    public var headers: [HTTP2Header] {
        (0..<count).map { index in
            let nv = nvs[index]
            return HTTP2Header(
                name: Array(UnsafeBufferPointer(start: nv.name, count: nv.namelen)),
                value: Array(UnsafeBufferPointer(start: nv.value, count: nv.valuelen)),
                indexable: nv.flags & UInt8(NGHTTP2_NV_FLAG_NO_INDEX.rawValue) == 0)
        }
    }

    deinit {
        nvs.deallocate()
        storage.deallocate()
    }

    /// Calls `body` with the nv array as prepared.
    func withNVs<R>(_ body: (UnsafePointer<nghttp2_nv>, Int) -> R) -> R {
        body(UnsafePointer(nvs.baseAddress!), count)
    }

    /// Calls `body` with the nv array, entry `first.index` (and `second.index`, `third.index`)
    /// pointing at the given bytes instead of the template's value. The pointers are valid only
    /// inside `body`, so those entries lose `NO_COPY_VALUE`: nghttp2 copies them while
    /// `nghttp2_submit_*` runs.
    func withNVs<R>(
        replacing first: (index: Int, value: UnsafeRawBufferPointer),
        _ second: (index: Int, value: UnsafeRawBufferPointer)?,
        _ third: (index: Int, value: UnsafeRawBufferPointer)? = nil,
        _ body: (UnsafePointer<nghttp2_nv>, Int) -> R
    ) -> R {
        withUnsafeTemporaryAllocation(of: nghttp2_nv.self, capacity: count) { scratch in
            _ = scratch.initialize(fromContentsOf: UnsafeBufferPointer(rebasing: nvs[0..<count]))
            Self.point(&scratch[first.index], at: first.value)
            if let second { Self.point(&scratch[second.index], at: second.value) }
            if let third { Self.point(&scratch[third.index], at: third.value) }
            return body(UnsafePointer(scratch.baseAddress!), count)
        }
    }

    /// Calls `body` with each field's name and value, entries `first.index` (and `second.index`,
    /// `third.index`) given the bytes passed instead: for writing the same request in HTTP/1.1.
    public func forEachField(
        replacing first: (index: Int, value: UnsafeRawBufferPointer),
        _ second: (index: Int, value: UnsafeRawBufferPointer)?,
        _ third: (index: Int, value: UnsafeRawBufferPointer)? = nil,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Void
    ) {
        withNVs(replacing: first, second, third) { nvs, count in
            for index in 0..<count {
                let nv = nvs[index]
                body(
                    UnsafeRawBufferPointer(start: nv.name, count: nv.namelen),
                    UnsafeRawBufferPointer(start: nv.value, count: nv.valuelen))
            }
        }
    }

    private static func point(_ nv: inout nghttp2_nv, at value: UnsafeRawBufferPointer) {
        nv.value = UnsafeMutablePointer(mutating: value.baseAddress?.assumingMemoryBound(to: UInt8.self)) ?? nv.value
        nv.valuelen = value.count
        nv.flags &= ~UInt8(NGHTTP2_NV_FLAG_NO_COPY_VALUE.rawValue)
    }
}

extension HTTP2Session {
    /// Submits a request whose headers are `template` with entry `first.index` (and optionally
    /// `second.index`, `third.index`) set to the given bytes, and `body` (shared, not copied by
    /// Swift) with END_STREAM at its end. Returns the stream id. See ``submitRequest(headers:body:)``.
    public func submitRequest(
        template: HTTP2HeaderTemplate, replacing first: (index: Int, value: UnsafeRawBufferPointer),
        _ second: (index: Int, value: UnsafeRawBufferPointer)? = nil,
        _ third: (index: Int, value: UnsafeRawBufferPointer)? = nil, body: [UInt8]
    ) throws(HTTP2Error) -> Int32 {
        precondition(
            first.index < template.count && (second?.index ?? 0) < template.count
                && (third?.index ?? 0) < template.count, "no such header entry")
        var provider = Self.bodyProvider
        let streamID = template.withNVs(replacing: first, second, third) { nvs, count in
            nghttp2_submit_request(session, nil, nvs, count, &provider, nil)
        }
        try HTTP2Error.check(streamID)
        streams[streamID] = StreamState(outbound: OutboundStream(body: body), headers: template)
        return streamID
    }
}

extension HTTP2Session {
    /// Server role: response headers prepared once (gRPC's `:status: 200` block), with a body to
    /// follow (``sendData(streamID:_:endStream:)``) unless `endStream`. See
    /// ``sendResponseHeaders(streamID:headers:endStream:)``.
    public func sendResponseHeaders(streamID: Int32, template: HTTP2HeaderTemplate, endStream: Bool) throws(HTTP2Error)
    {
        try submitResponseHeaders(streamID: streamID, endStream: endStream) { submit in
            template.withNVs { submit($0, $1) }
        }
        streams[streamID]?.sentHeaders = template
    }

    /// Server role: a whole response at once: `headers`, `body` and `trailers`, all prepared
    /// before (gRPC's unary answer: HEADERS, one DATA, OK trailers). One submission, no resume of
    /// a deferred body, no header list converted per response.
    public func sendResponse(
        streamID: Int32, headers: HTTP2HeaderTemplate, body: [UInt8], trailers: HTTP2HeaderTemplate
    ) throws(HTTP2Error) {
        guard let state = streams[streamID] else { throw HTTP2Error.streamNotOpen(streamID) }
        state.outbound = OutboundStream(body: body, trailers: .template(trailers))
        state.sentHeaders = headers
        queuedBodyBytes += body.count
        var provider = Self.bodyProvider
        let rv = headers.withNVs { nghttp2_submit_response(session, streamID, $0, $1, &provider) }
        if rv < 0 {
            state.outbound = nil
            queuedBodyBytes -= body.count
        }
        try HTTP2Error.check(rv)
    }

    /// Server role: a headers-only response (END_STREAM) whose headers are `template` with entry
    /// `replacing.index` set to the given bytes, e.g. `:status: 200` and a per-response id. See
    /// ``sendResponseHeaders(streamID:headers:endStream:)``.
    public func sendResponseHeaders(
        streamID: Int32, template: HTTP2HeaderTemplate, replacing: (index: Int, value: UnsafeRawBufferPointer)
    ) throws(HTTP2Error) {
        precondition(replacing.index < template.count, "no such header entry")
        guard let state = streams[streamID] else { throw HTTP2Error.streamNotOpen(streamID) }
        let rv = template.withNVs(replacing: replacing, nil) { nvs, count in
            nghttp2_submit_response(session, streamID, nvs, count, nil)
        }
        try HTTP2Error.check(rv)
        state.sentHeaders = template
    }
}
