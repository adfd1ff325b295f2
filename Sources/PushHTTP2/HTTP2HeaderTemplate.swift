import CNGHTTP2

/// A request header list prepared once and submitted many times, with a value or two that differ
/// per request (APNs: `:path`, and the cached `authorization`).
///
/// The names and values are copied once into one buffer owned by the template, and the
/// `nghttp2_nv` array pointing into it is built once; a submission copies that small array onto
/// the stack and points the varying entries at the caller's bytes. So per request there is no
/// header array to copy, no re-encoding, and no retain/release per field. Immutable after `init`,
/// so one template may be shared by connections on several loops.
public final class HTTP2HeaderTemplate: @unchecked Sendable {
    let count: Int
    private let nvs: UnsafeMutableBufferPointer<nghttp2_nv>
    private let storage: UnsafeMutableRawBufferPointer

    public init(_ headers: [HTTP2Header]) {
        count = headers.count
        let bytes = headers.reduce(0) { $0 + $1.name.count + $1.value.count }
        storage = .allocate(byteCount: max(bytes, 1), alignment: 1)
        nvs = .allocate(capacity: max(headers.count, 1))
        var offset = 0
        for (index, header) in headers.enumerated() {
            let name = Self.copy(header.name, into: storage, at: &offset)
            let value = Self.copy(header.value, into: storage, at: &offset)
            nvs.initializeElement(
                at: index,
                to: nghttp2_nv(
                    name: name, value: value, namelen: header.name.count, valuelen: header.value.count,
                    flags: UInt8(header.indexable ? NGHTTP2_NV_FLAG_NONE.rawValue : NGHTTP2_NV_FLAG_NO_INDEX.rawValue)))
        }
    }

    deinit {
        nvs.deallocate()
        storage.deallocate()
    }

    private static func copy(
        _ bytes: [UInt8], into storage: UnsafeMutableRawBufferPointer, at offset: inout Int
    ) -> UnsafeMutablePointer<UInt8> {
        let start = storage.baseAddress!.advanced(by: offset).assumingMemoryBound(to: UInt8.self)
        bytes.withUnsafeBytes { source in
            if let base = source.baseAddress { start.update(from: base.assumingMemoryBound(to: UInt8.self), count: source.count) }
        }
        offset += bytes.count
        return start
    }

    /// Calls `body` with the nv array, entry `first.index` (and `second.index`) pointing at the
    /// given bytes instead of the template's value. The pointers are valid only inside `body`;
    /// nghttp2 copies the fields while `nghttp2_submit_*` runs (no NO_COPY flags).
    func withNVs<R>(
        replacing first: (index: Int, value: UnsafeRawBufferPointer),
        _ second: (index: Int, value: UnsafeRawBufferPointer)?,
        _ body: (UnsafePointer<nghttp2_nv>, Int) -> R
    ) -> R {
        withUnsafeTemporaryAllocation(of: nghttp2_nv.self, capacity: count) { scratch in
            _ = scratch.initialize(fromContentsOf: UnsafeBufferPointer(rebasing: nvs[0..<count]))
            Self.point(&scratch[first.index], at: first.value)
            if let second { Self.point(&scratch[second.index], at: second.value) }
            return body(UnsafePointer(scratch.baseAddress!), count)
        }
    }

    private static func point(_ nv: inout nghttp2_nv, at value: UnsafeRawBufferPointer) {
        nv.value = UnsafeMutablePointer(mutating: value.baseAddress?.assumingMemoryBound(to: UInt8.self)) ?? nv.value
        nv.valuelen = value.count
    }
}

extension HTTP2Session {
    /// Submits a request whose headers are `template` with entry `first.index` (and optionally
    /// `second.index`) set to the given bytes, and `body` (shared, not copied by Swift) with
    /// END_STREAM at its end. Returns the stream id. See ``submitRequest(headers:body:)``.
    public func submitRequest(
        template: HTTP2HeaderTemplate, replacing first: (index: Int, value: UnsafeRawBufferPointer),
        _ second: (index: Int, value: UnsafeRawBufferPointer)? = nil, body: [UInt8]
    ) throws(HTTP2Error) -> Int32 {
        precondition(first.index < template.count && (second?.index ?? 0) < template.count, "no such header entry")
        var provider = Self.bodyProvider
        let streamID = template.withNVs(replacing: first, second) { nvs, count in
            nghttp2_submit_request(session, nil, nvs, count, &provider, nil)
        }
        try HTTP2Error.check(streamID)
        streams[streamID] = StreamState(outbound: OutboundStream(body: body))
        return streamID
    }
}

extension HTTP2Session {
    /// Server role: a headers-only response (END_STREAM) whose headers are `template` with entry
    /// `replacing.index` set to the given bytes, e.g. `:status: 200` and a per-response id. See
    /// ``sendResponseHeaders(streamID:headers:endStream:)``.
    public func sendResponseHeaders(
        streamID: Int32, template: HTTP2HeaderTemplate, replacing: (index: Int, value: UnsafeRawBufferPointer)
    ) throws(HTTP2Error) {
        precondition(replacing.index < template.count, "no such header entry")
        guard streams[streamID] != nil else { throw HTTP2Error.streamNotOpen(streamID) }
        let rv = template.withNVs(replacing: replacing, nil) { nvs, count in
            nghttp2_submit_response(session, streamID, nvs, count, nil)
        }
        try HTTP2Error.check(rv)
    }
}
