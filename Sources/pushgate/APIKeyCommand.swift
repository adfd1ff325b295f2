import PushCommandLine
import PushGateway

#if canImport(Glibc)
    import Glibc
#endif

/// `pushgate api-key`: makes a fresh API key and the `key_sha256` for the config, or hashes a key
/// read from standard input (never from the command line, where it would end up in shell history).
enum APIKeyCommand {
    static let usage = """
        Usage: pushgate api-key [--generate] [--name NAME] [--apps A,B|*] [--admin]
               pushgate api-key --hash < keyfile

        Prints a fresh random API key and its SHA-256, and a ready api_keys entry for the config.
        Give the key to the client (it sends `authorization: Bearer <key>`); put only the hash in
        the config. With --hash, reads one key from standard input and prints its SHA-256.

          --generate        make a new key (the default)
          --name NAME       the entry's name (default "client")
          --apps LIST       comma-separated app names, or * for all apps (default *)
          --admin           the entry may write the Registry and Publish to topics
          --hash            hash the key on standard input instead of making one
          -h, --help        this text
        """

    struct Options {
        var name = "client"
        var apps = ["*"]
        var admin = false
        var hashOnly = false
    }

    /// nil when --help was asked for.
    static func parse(_ arguments: [String]) throws -> Options? {
        var options = Options()
        let read = try CommandOptions.readFlags(arguments) { flag, flags in
            switch flag {
            case "--generate": options.hashOnly = false
            case "--hash": options.hashOnly = true
            case "--name": options.name = try flags.value(for: flag)
            case "--apps": options.apps = try CommandOptions.apps(&flags, flag)
            case "--admin": options.admin = true
            default: throw CommandLineError("unknown flag \(flag.debugDescription) (see pushgate api-key --help)")
            }
        }
        return read ? options : nil
    }

    static func run(_ arguments: [String]) -> Int32 {
        CommandOptions.run("api-key", usage: usage, arguments, parse: parse, run(with:))
    }

    private static func run(with options: Options) -> Int32 {
        if options.hashOnly {
            guard let line = readLine(strippingNewline: true), !line.isEmpty else {
                printError("pushgate api-key --hash: expected a key on standard input")
                return 2
            }
            print(APIKeys.sha256Hex(of: line))
            return 0
        }
        let generated: (key: String, sha256Hex: String)
        do {
            generated = try APIKeys.generate()
        } catch {
            printError("pushgate api-key: \(error)")
            return 1
        }
        let appList = options.apps.map { "\"\($0)\"" }.joined(separator: ", ")
        print("key:        \(generated.key)")
        print("key_sha256: \(generated.sha256Hex)")
        print(
            "config:     {\"name\": \(options.name.debugDescription), \"key_sha256\": \"\(generated.sha256Hex)\", \"apps\": [\(appList)], \"admin\": \(options.admin)}"
        )
        return 0
    }
}
