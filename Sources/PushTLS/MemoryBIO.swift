import COpenSSL

/// Owns a growable OpenSSL memory BIO: the in-memory stand-in for a file when loading PEM from a
/// String or writing PEM out to one.
final class MemoryBIO {
    let bio: OpaquePointer

    /// An empty BIO to write into.
    init() throws(TLSError) {
        guard let bio = BIO_new(BIO_s_mem()) else { throw .openSSL(.certificate, "BIO_new failed") }
        self.bio = bio
    }

    /// A BIO holding a copy of `text`'s UTF-8 bytes (BIO_new_mem_buf would borrow them, and the
    /// String's storage may not outlive the call).
    convenience init(copying text: String) throws(TLSError) {
        try self.init()
        let bytes = Array(text.utf8)
        var written = 0
        let ok = bytes.withUnsafeBytes { raw in
            raw.isEmpty || BIO_write_ex(bio, raw.baseAddress, raw.count, &written) == 1
        }
        guard ok, written == bytes.count else { throw .openSSL(.certificate, "BIO_write failed") }
    }

    deinit { BIO_free(bio) }

    /// Everything written so far, as text (PEM is ASCII).
    func text() throws(TLSError) -> String {
        var data: UnsafeMutablePointer<CChar>? = nil
        let length = COpenSSL_BIO_get_mem_data(bio, &data)
        guard length >= 0 else { throw .openSSL(.certificate, "BIO_get_mem_data failed") }
        guard length > 0, let data else { return "" }
        let bytes = UnsafeRawBufferPointer(start: data, count: length)
        return String(decoding: bytes, as: UTF8.self)
    }
}
