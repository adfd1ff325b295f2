#if canImport(Glibc)
    import Glibc
#endif

/// Writes a line to standard error (fd 2 directly: the C `stderr` global is not concurrency-safe);
/// `newline` false: the text alone (a progress line rewritten in place).
public func printError(_ message: String, newline: Bool = true) {
    let line = Array((newline ? message + "\n" : message).utf8)
    line.withUnsafeBytes { bytes in
        var offset = 0
        while offset < bytes.count {
            let written = write(2, bytes.baseAddress! + offset, bytes.count - offset)
            if written <= 0 { return }
            offset += written
        }
    }
}
