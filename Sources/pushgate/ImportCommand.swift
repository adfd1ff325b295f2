import PushCommandLine
import PushGateway
import PushStore

#if canImport(Glibc)
    import Glibc
#endif

/// `pushgate import`: endpoints and their topics from JSON Lines or CSV into the config's store
/// (docs/import.md).
enum ImportCommand {
    static let usage = """
        Usage: pushgate import --config FILE [--format jsonl|csv] [--batch-rows N] [--quiet] [INPUT]

        Imports endpoints and their topic subscriptions into the store of the gateway's config
        (an SQLite file or a PostgreSQL URL), from INPUT (a file; "-" or none: stdin).

        JSON Lines: one object a line, {"app", "token", "user_id", "custom_user_data", "enabled",
        "topics": [...]}; only app and token are required. CSV: a header line with the same column
        names (any order; app and token required), enabled as true/false, topics separated by ";".
        The format is --format, else the file name's (.csv, .jsonl, .ndjson, .json), else jsonl.

        Each row is checked as CreateEndpoint checks it (the app must be in the config; the token is
        checked and normalized for its platform). A token the app already has keeps its endpoint and
        gets the fields the row gives; topics are created when missing and subscribed (none removed).
        So the import is idempotent: after a crash, run it again. Rows are committed N at a time
        (--batch-rows, default 50000, at most 100000; one transaction each, ended early at 100000
        subscriptions). On SQLite a batch holds the write lock while it is written (about 0.5 s for
        50000 rows): a gateway on the same file waits for it, and fails a call that waits over 5 s;
        beside a gateway under load, give --batch-rows 10000. On PostgreSQL an import that changed
        anything ends with VACUUM (ANALYZE) of the endpoint, topic and subscription tables, so the
        next fan-out reads the new rows at full speed. Bad rows are reported on stderr as
        "line N: field: problem" and skipped. A progress line is shown when stderr is a terminal
        (--quiet: none). It may run while a gateway uses the store.

        Exit status: 0 every row imported; 1 some rows were bad, or the store failed; 2 a usage
        error or an input that cannot be read (a CSV header without app or token, say).
        """

    struct Options {
        var config: String
        var input: String?
        var format: ImportFormat
        var batchRows = 50_000
        var quiet = false
    }

    static func parse(_ arguments: [String]) throws -> Options? {
        var common = StoreToolFlags()
        var batchRows = 50_000
        var quiet = false
        let read = try CommandOptions.readFlags(arguments) { flag, flags in
            switch flag {
            case "--batch-rows": batchRows = try flags.int(for: flag, range: 1...100_000)
            case "--quiet": quiet = true
            default: try common.read(flag, &flags, pathName: "INPUT", usage: usage)
            }
        }
        guard read else { return nil }
        return Options(
            config: try common.requiredConfig(usage: usage), input: common.path, format: common.chosenFormat,
            batchRows: batchRows, quiet: quiet)
    }

    static func run(_ arguments: [String]) async -> Int32 {
        await CommandOptions.run("import", usage: usage, arguments, parse: parse, importRows)
    }

    private static func importRows(_ options: Options) async -> Int32 {
        let configuration: GatewayConfiguration
        let descriptor: Int32
        do {
            configuration = try GatewayConfiguration.parse(json: try readFile(options.config), readingSecrets: false)
            descriptor = try openInput(options.input)
        } catch {
            printError("pushgate import: \(error)")
            return 2
        }
        defer { if descriptor != 0 { close(descriptor) } }
        let store: any Store
        do {
            store = try await StoreSetting.openForTool(configuration.storePath, cacheMiB: StoreSetting.importCacheMiB)
        } catch {
            printError("pushgate import: store \(StoreSetting.redacted(configuration.storePath)): \(error)")
            return 1
        }
        let progress = ImportProgress(enabled: !options.quiet && isatty(2) == 1)
        let importer = EndpointImporter(
            configuration: configuration, store: store, format: options.format, batchRows: options.batchRows,
            now: ImportClock.nowMilliseconds
        ) { line, problem in
            progress.clear()
            printError("pushgate import: line \(line): \(problem)")
        }
        let input = InputLines(descriptor: descriptor, maxLineBytes: EndpointImporter.maxRowBytes)
        let status: Int32
        do {
            reading: while true {
                switch try input.next() {
                case .end: break reading
                case .overlong: importer.overlong(number: input.number)
                case .line(let range):
                    try input.withBytes(range) { bytes in try importer.feed(line: bytes, number: input.number) }
                }
                if importer.batchIsFull {
                    try await importer.commitIfFull()
                    progress.show(rows: importer.committedRows, bad: importer.summary.bad)
                }
            }
            let summary = try await importer.finish(lastLine: input.number)
            progress.clear()
            print(progress.summary(summary))
            status = summary.bad == 0 ? 0 : 1
        } catch let error as ImportInputError {
            progress.clear()
            printError("pushgate import: \(error)")
            status = 2
        } catch {
            progress.clear()
            printError(
                "pushgate import: \(error) (\(importer.committedRows) rows were committed; run the import again to finish)"
            )
            status = 1
        }
        await store.close()
        return status
    }

    /// The input's descriptor: the file, or stdin for none or "-".
    private static func openInput(_ path: String?) throws -> Int32 {
        guard let path, path != "-" else { return 0 }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw CommandLineError("\(path): \(String(cString: strerror(errno)))") }
        var status = stat()
        if fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
            close(descriptor)
            throw CommandLineError("\(path): is a directory")
        }
        return descriptor
    }
}

/// The progress line on a terminal (rewritten in place, at most twice a second) and the summary.
final class ImportProgress {
    private let enabled: Bool
    private let started = ContinuousClock.now
    private var lastShown = ContinuousClock.now
    private var showing = false

    init(enabled: Bool) { self.enabled = enabled }

    func show(rows: Int, bad: Int) {
        guard enabled, ContinuousClock.now - lastShown >= .milliseconds(500) else { return }
        lastShown = .now
        printError("\r\u{1B}[Kimported \(rows) rows, \(bad) bad, \(Int(Double(rows) / seconds)) rows/s", newline: false)
        showing = true
    }

    func clear() {
        guard showing else { return }
        printError("\r\u{1B}[K", newline: false)
        showing = false
    }

    var seconds: Double {
        let elapsed = ContinuousClock.now - started
        return max(0.001, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    func summary(_ summary: EndpointImporter.Summary) -> String {
        let seconds = seconds
        return "imported \(summary.rows) rows (\(summary.counts.created) endpoints created, "
            + "\(summary.counts.existing) existing, \(summary.counts.subscriptionsCreated) subscriptions created), "
            + "\(summary.bad) bad rows, in \((seconds * 100).rounded() / 100) s "
            + "(\(Int(Double(summary.rows) / seconds)) rows/s)"
    }
}

/// Unix time for the endpoints' `created_at`.
enum ImportClock {
    static var nowMilliseconds: Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}
