import PushCommandLine
import PushGateway
import PushStore

#if canImport(Glibc)
    import Glibc
#endif

/// `pushgate export`: the store's endpoints with their topics, in the format `pushgate import` reads.
enum ExportCommand {
    static let usage = """
        Usage: pushgate export --config FILE [--format jsonl|csv] [--app A] [OUTPUT]

        Writes every endpoint of the config's store (of app A only, with --app) with its topics to
        OUTPUT (a file, created or truncated; "-" or none: stdout), one row per endpoint in creation
        order: app, token, user_id, custom_user_data, enabled and topics, as JSON Lines or CSV (with
        a header line). The format is --format, else the file name's (.csv, .jsonl, .ndjson, .json),
        else jsonl. `pushgate import` of the output into another store gives the same endpoints and
        subscriptions (new ids). Reads a page of 1,000 endpoints at a time; may run beside a gateway.
        """

    struct Options {
        var config: String
        var output: String?
        var format: ImportFormat
        var app: String?
    }

    static func parse(_ arguments: [String]) throws -> Options? {
        var common = StoreToolFlags()
        var app: String?
        let read = try CommandOptions.readFlags(arguments) { flag, flags in
            switch flag {
            case "--app": app = try flags.value(for: flag)
            default: try common.read(flag, &flags, pathName: "OUTPUT", usage: usage)
            }
        }
        guard read else { return nil }
        return Options(
            config: try common.requiredConfig(usage: usage), output: common.path, format: common.chosenFormat, app: app)
    }

    static func run(_ arguments: [String]) async -> Int32 {
        await CommandOptions.run("export", usage: usage, arguments, parse: parse, export)
    }

    private static func export(_ options: Options) async -> Int32 {
        let configuration: GatewayConfiguration
        do {
            configuration = try GatewayConfiguration.parse(json: try readFile(options.config), readingSecrets: false)
        } catch {
            printError("pushgate export: \(error)")
            return 2
        }
        // Opening a path that is not there would make an empty store, and export nothing: a typo.
        if !PostgresStore.isPostgresURL(configuration.storePath), access(configuration.storePath, F_OK) != 0 {
            printError("pushgate export: store \(configuration.storePath): no such file")
            return 2
        }
        let store: any Store
        do {
            store = try await StoreSetting.openForTool(configuration.storePath)
        } catch {
            printError("pushgate export: store \(StoreSetting.redacted(configuration.storePath)): \(error)")
            return 1
        }
        var descriptor: Int32 = 1
        if let path = options.output, path != "-" {
            descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else {
                printError("pushgate export: \(path): \(String(cString: strerror(errno)))")
                await store.close()
                return 2
            }
        }
        let problem = await writeRows(of: store, app: options.app, format: options.format, to: descriptor)
        if descriptor != 1 { close(descriptor) }
        await store.close()
        guard let problem else { return 0 }
        printError("pushgate export: \(problem)")
        return 1
    }

    /// Every page of endpoints written as it is read; answers what went wrong, if anything.
    private static func writeRows(of store: any Store, app: String?, format: ImportFormat, to descriptor: Int32) async
        -> String?
    {
        var out: [UInt8] = []
        out.reserveCapacity(1 << 17)
        if format == .csv { out += ImportRowWriter.csvHeader.utf8 }
        var cursor: String?
        repeat {
            let page: Page<ExportedEndpoint>
            do {
                page = try await store.exportEndpoints(app: app, cursor: cursor, limit: 1000)
            } catch {
                return "\(error)"
            }
            for exported in page.items { ImportRowWriter.append(exported, format: format, to: &out) }
            if let failure = writeAll(&out, to: descriptor) { return "cannot write: \(failure)" }
            cursor = page.nextCursor
        } while cursor != nil
        return nil
    }

    /// Writes and empties `out`; answers the error, if writing failed.
    private static func writeAll(_ out: inout [UInt8], to descriptor: Int32) -> String? {
        let failure = out.withUnsafeBytes { bytes -> Int32? in
            var offset = 0
            while offset < bytes.count {
                let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += written
            }
            return nil
        }
        out.removeAll(keepingCapacity: true)
        return failure.map { String(cString: strerror($0)) }
    }
}
