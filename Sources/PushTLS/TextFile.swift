internal import COpenSSL

#if canImport(Glibc)
import Glibc
#endif

/// Reads a whole (PEM) file through an OpenSSL file BIO, so this module needs no Foundation.
public func readTextFile(_ path: String) throws(TLSError) -> String {
    guard let bio = BIO_new_file(path, "rb") else {
        // fopen's reason (no such file, permission denied), not OpenSSL's queue, says what to fix.
        let reason = String(cString: strerror(errno))
        ERR_clear_error()
        throw TLSError(.file, "cannot open \(path): \(reason)")
    }
    defer { BIO_free(bio) }
    var contents: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        var got = 0
        let status = chunk.withUnsafeMutableBytes { BIO_read_ex(bio, $0.baseAddress, $0.count, &got) }
        if status == 1 {
            contents.append(contentsOf: chunk[..<got])
            continue
        }
        // BIO_read_ex also "fails" at end of file; only a failure before EOF is an error.
        guard BIO_ctrl(bio, BIO_CTRL_EOF, 0, nil) == 1 else { throw .openSSL(.file, "cannot read \(path)") }
        break
    }
    _ = drainOpenSSLErrorQueue()
    return String(decoding: contents, as: UTF8.self)
}
