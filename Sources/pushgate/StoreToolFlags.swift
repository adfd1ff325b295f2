import PushCommandLine
import PushGateway

/// What `import` and `export` read alike: `--config FILE`, `--format jsonl|csv` and one file path
/// (`-` or none: stdin or stdout). Each command reads its own flags first and hands the rest here.
struct StoreToolFlags {
    var config: String?
    var format: ImportFormat?
    var path: String?

    /// Takes `flag` (with its value); throws for an unknown flag or a second path. `pathName` is
    /// what the usage calls the path (INPUT, OUTPUT).
    mutating func read(_ flag: String, _ flags: inout FlagReader, pathName: String, usage: String) throws {
        switch flag {
        case "--config": config = try flags.value(for: flag)
        case "--format":
            let value = try flags.value(for: flag)
            guard let parsed = ImportFormat(rawValue: value) else {
                throw CommandLineError("--format: must be jsonl or csv, not \(value.debugDescription)")
            }
            format = parsed
        default:
            guard flag == "-" || !flag.hasPrefix("-") else {
                throw CommandLineError("unknown flag \(flag.debugDescription)\n\n\(usage)")
            }
            if let path { throw CommandLineError("one \(pathName) at most (got \(path) and \(flag))") }
            path = flag
        }
    }

    /// The config's path, which both commands require.
    func requiredConfig(usage: String) throws -> String {
        guard let config else { throw CommandLineError("--config is required\n\n\(usage)") }
        return config
    }

    /// The format: `--format`, else the path's file name, else JSON Lines.
    var chosenFormat: ImportFormat { format ?? path.flatMap(ImportFormat.init(fileName:)) ?? .jsonl }
}
