import Glibc

/// A failed system call: the `errno` it set and what we were doing.
public struct IOError: Error, Sendable, CustomStringConvertible {
    public let errno: Int32
    public let reason: String

    public init(errno: Int32, reason: String) {
        self.errno = errno
        self.reason = reason
    }

    public var description: String {
        // glibc's strerror returns constant strings for known codes and a thread-local
        // buffer otherwise, so it is safe from any thread.
        "\(reason): \(String(cString: strerror(errno))) (errno \(errno))"
    }
}
