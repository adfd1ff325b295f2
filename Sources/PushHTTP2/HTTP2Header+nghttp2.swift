import CNGHTTP2

/// Stands in for the base address of an empty byte array, which Swift may report as nil;
/// nghttp2 never reads through it (length 0) but should not be handed a null pointer.
nonisolated(unsafe) private let emptyBytes = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)

extension Array where Element == HTTP2Header {
    /// Calls `body` with an `nghttp2_nv` array that points straight into the headers' own
    /// `[UInt8]` storage, so Swift copies nothing. The pointers are valid only inside `body`;
    /// that is enough because the NO_COPY flags are never set, so nghttp2 copies the fields
    /// while `nghttp2_submit_*` runs. (Guaranteeing the arrays' lifetime until the frame is
    /// serialized would need per-frame bookkeeping in on_frame_send/not_send for a saving of a
    /// few hundred bytes of memcpy per request.)
    func withNghttp2NVs<R>(_ body: (UnsafePointer<nghttp2_nv>?, Int) -> R) -> R {
        if isEmpty { return body(nil, 0) }
        // Stack storage for the nv array: no heap allocation per submission.
        return withUnsafeTemporaryAllocation(of: nghttp2_nv.self, capacity: count) { nvs in
            fillNVs(nvs, from: 0, body)
        }
    }

    /// Recursion keeps every header's buffers pinned at once (each closure scope holds two);
    /// depth is the header count, a dozen or so in practice.
    private func fillNVs<R>(
        _ nvs: UnsafeMutableBufferPointer<nghttp2_nv>, from index: Int,
        _ body: (UnsafePointer<nghttp2_nv>?, Int) -> R
    ) -> R {
        if index == count { return body(UnsafePointer(nvs.baseAddress), count) }
        let header = self[index]
        return header.name.withUnsafeBufferPointer { name in
            header.value.withUnsafeBufferPointer { value in
                nvs.initializeElement(
                    at: index,
                    to: nghttp2_nv(
                        name: UnsafeMutablePointer(mutating: name.baseAddress) ?? emptyBytes,
                        value: UnsafeMutablePointer(mutating: value.baseAddress) ?? emptyBytes,
                        namelen: name.count, valuelen: value.count,
                        flags: UInt8(
                            header.indexable ? NGHTTP2_NV_FLAG_NONE.rawValue : NGHTTP2_NV_FLAG_NO_INDEX.rawValue)))
                return fillNVs(nvs, from: index + 1, body)
            }
        }
    }
}
