import PushCommandLine
import PushCore
import PushGateway

#if canImport(Glibc)
    import Glibc
#endif

/// `pushgate sns-credential`: mints an AWS-style access key pair for the SNS API, writes the secret
/// to a new file only its owner can read, and prints the `sns.credentials` entry for the config.
enum SNSCredentialCommand {
    static let usage = """
        Usage: pushgate sns-credential --secret-file PATH [--apps A,B|*] [--admin]

        Makes an access key id and a secret access key for the SNS API (AWS Signature Version 4),
        writes the secret to PATH (a new file, mode 0600; never printed), and prints the access key
        id and a ready sns.credentials entry for the config. Give both to the AWS SDK or CLI
        (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY); the gateway reads the secret from PATH at
        start and on SIGHUP.

          --secret-file PATH  where to write the secret (must not exist yet)
          --apps LIST         comma-separated app names, or * for all apps (default *)
          --admin             the credential may write the registry and publish to topics
          -h, --help          this text
        """

    struct Options {
        var secretFile = ""
        var apps = ["*"]
        var admin = false
    }

    /// nil when --help was asked for.
    static func parse(_ arguments: [String]) throws -> Options? {
        var options = Options()
        let read = try CommandOptions.readFlags(arguments) { flag, flags in
            switch flag {
            case "--secret-file": options.secretFile = try flags.value(for: flag)
            case "--apps": options.apps = try CommandOptions.apps(&flags, flag)
            case "--admin": options.admin = true
            default:
                throw CommandLineError("unknown flag \(flag.debugDescription) (see pushgate sns-credential --help)")
            }
        }
        guard read else { return nil }
        guard !options.secretFile.isEmpty else {
            throw CommandLineError("--secret-file: required (the file the secret access key is written to)")
        }
        return options
    }

    private static func quoted(_ text: String) -> String {
        var out: [UInt8] = []
        JSONWriter.appendQuoted(text, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    static func run(_ arguments: [String]) -> Int32 {
        CommandOptions.run("sns-credential", usage: usage, arguments, parse: parse, run(with:))
    }

    private static func run(with options: Options) -> Int32 {
        let pair: (accessKeyID: String, secretAccessKey: String)
        do {
            pair = try SNSCredential.generate()
        } catch {
            printError("pushgate sns-credential: \(error)")
            return 1
        }
        let fd = open(options.secretFile, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            printError(
                "pushgate sns-credential: --secret-file \(options.secretFile): \(String(cString: strerror(errno))) "
                    + "(the file must not exist yet)")
            return 1
        }
        let bytes = Array((pair.secretAccessKey + "\n").utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let closed = close(fd)
        guard written == bytes.count, closed == 0 else {
            printError("pushgate sns-credential: --secret-file \(options.secretFile): the secret could not be written")
            unlink(options.secretFile)
            return 1
        }
        // JSON-quoted: app names and paths may hold anything a JSON string must escape.
        let appList = options.apps.map(Self.quoted).joined(separator: ", ")
        print("access_key_id:          \(pair.accessKeyID)")
        print("secret_access_key_file: \(options.secretFile)")
        print(
            "config:                 {\"access_key_id\": \"\(pair.accessKeyID)\", \"secret_access_key_file\": "
                + "\(Self.quoted(options.secretFile)), \"apps\": [\(appList)], \"admin\": \(options.admin)}")
        return 0
    }
}
