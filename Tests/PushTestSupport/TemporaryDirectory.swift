import Foundation
import Glibc

/// A fresh directory under /tmp for one test's files; `remove()` deletes it and all it holds.
public struct TemporaryDirectory: Sendable {
    public let path: String

    /// Makes `/tmp/<prefix>-XXXXXX`.
    public init(prefix: String = "pushgate-test") throws {
        var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw TestSetupError("mkdtemp failed: errno \(errno)") }
        path = String(cString: made)
    }

    /// The path of `name` in the directory (for a file the code under test writes).
    public func path(of name: String) -> String { path + "/" + name }

    /// Writes `text` to `name` in the directory (mode 0600); its path.
    @discardableResult
    public func write(_ name: String, _ text: String) throws -> String { try write(name, Array(text.utf8)) }

    /// Writes `bytes` to `name` in the directory (mode 0600); its path.
    @discardableResult
    public func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let file = path(of: name)
        let fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else { throw TestSetupError("\(file): errno \(errno)") }
        defer { close(fd) }
        guard Glibc.write(fd, bytes, bytes.count) == bytes.count else { throw TestSetupError("\(file): short write") }
        return file
    }

    /// The contents of `file` as text, or nil when it cannot be read.
    public func read(_ file: String) -> String? {
        FileManager.default.contents(atPath: file).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Deletes the directory and everything in it.
    public func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// A test's own set-up failed (not the code under test).
public struct TestSetupError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
