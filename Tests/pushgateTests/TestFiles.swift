import Glibc

/// The message of the error `body` throws (as a command prints it after its name), or nil if it
/// throws none.
func usageError<T>(_ body: () throws -> T) -> String? {
    do {
        _ = try body()
        return nil
    } catch {
        return "\(error)"
    }
}

/// The permission bits of `path`, or nil when it does not exist.
func fileMode(_ path: String) -> mode_t? {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    return info.st_mode & 0o777
}
