import PushCommandLine
import PushPosix
import PushTLS

#if canImport(Glibc)
    import Glibc
#endif

/// `pushgate vapid-key`: makes the P-256 key pair a Web Push app signs its VAPID tokens with, and
/// prints the application server key a web page subscribes with.
enum VAPIDKeyCommand {
    static let usage = """
        Usage: pushgate vapid-key --out FILE [--force]
               pushgate vapid-key --key FILE

        Makes a VAPID key pair (RFC 8292, ECDSA P-256) for a webpush app: writes the private key
        as PEM (PKCS#8, mode 0600) to FILE, the app's vapid_key_file, and prints the application
        server key: the public key in base64url (the 65-byte uncompressed point), which the web
        page passes to pushManager.subscribe({userVisibleOnly: true, applicationServerKey: …}).
        Keep the private key: subscriptions made with its public key only accept tokens it signs.

          --out FILE     where to write the new private key (refused if FILE exists, unless --force)
          --force        overwrite FILE
          --key FILE     print the application server key of an existing PEM key instead
          -h, --help     this text
        """

    struct Options {
        /// Where to write a new key (`--out`), or the key to read (`--key`): one of them.
        var out: String?
        var existing: String?
        var force = false
    }

    /// nil when --help was asked for.
    static func parse(_ arguments: [String]) throws -> Options? {
        var options = Options()
        let read = try CommandOptions.readFlags(arguments) { flag, flags in
            switch flag {
            case "--out": options.out = try flags.value(for: flag)
            case "--key": options.existing = try flags.value(for: flag)
            case "--force": options.force = true
            default: throw CommandLineError("unknown flag \(flag.debugDescription) (see pushgate vapid-key --help)")
            }
        }
        guard read else { return nil }
        guard (options.out == nil) != (options.existing == nil) else {
            throw CommandLineError("give --out FILE (make a key) or --key FILE (read one)")
        }
        return options
    }

    static func run(_ arguments: [String]) -> Int32 {
        CommandOptions.run("vapid-key", usage: usage, arguments, parse: parse, run(with:))
    }

    private static func run(with options: Options) -> Int32 {
        do {
            if let existing = options.existing {
                let signer = try ES256Signer(p8PEM: try FileContents.readText(existing))
                print(base64URLEncode(try signer.publicPoint()))
                return 0
            }
            let path = options.out!
            if !options.force, access(path, F_OK) == 0 {
                printError("pushgate vapid-key: --out: \(path) exists (use --force to replace it)")
                return 1
            }
            let pair = try ES256Signer.generateP8()
            try writeFile(path, Array(pair.privateKeyPEM.utf8), mode: 0o600)
            let signer = try ES256Signer(p8PEM: pair.privateKeyPEM)
            print("vapid_key_file:         \(path)")
            print("application server key: \(base64URLEncode(try signer.publicPoint()))")
            return 0
        } catch {
            printError("pushgate vapid-key: \(error)")
            return 1
        }
    }
}
