import Foundation
import PushTLS

/// One RSA key pair for the whole suite: generating one costs tens of milliseconds.
let sharedRSAKeys = try! RSAKeyPair.generate()

/// A fresh directory for key and service-account files, removed when the value is released.
final class TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("PushCredentialsTests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    func write(_ name: String, _ text: String) throws -> String { try write(name, Array(text.utf8)) }

    func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        try Data(bytes).write(to: url.appendingPathComponent(name))
        return path(name)
    }
}
