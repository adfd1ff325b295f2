import PushCommandLine

/// How every command starts: its flags parsed into options, then run with them. One place for
/// what all commands answer to `--help` (the usage, exit 0) and to a bad command line (the error
/// after `pushgate <command>:`, exit 2).
enum CommandOptions {
    /// The options `parse` reads, or the exit status when there are none to run with: 0 after
    /// printing `usage` (`parse` returned nil for --help), 2 after printing the command-line error.
    static func parse<Options>(
        _ command: String, usage: String, _ parse: () throws -> Options?
    ) -> Result<Options, ExitStatus> {
        do {
            guard let options = try parse() else {
                print(usage)
                return .failure(ExitStatus(code: 0))
            }
            return .success(options)
        } catch {
            printError("pushgate \(command): \(error)")
            return .failure(ExitStatus(code: 2))
        }
    }

    /// Hands each flag of `arguments` to `read` (which takes its value from the reader and throws
    /// on an unknown flag); false when --help was asked for.
    static func readFlags(
        _ arguments: [String], _ read: (_ flag: String, _ flags: inout FlagReader) throws -> Void
    ) throws -> Bool {
        var flags = FlagReader(arguments)
        while let flag = flags.next() {
            if flag == "-h" || flag == "--help" { return false }
            try read(flag, &flags)
        }
        return true
    }

    /// `--apps A,B|*` of the commands that make credentials: the names, never none.
    static func apps(_ flags: inout FlagReader, _ flag: String) throws -> [String] {
        let apps = try flags.value(for: flag).split(separator: ",").map(String.init)
        guard !apps.isEmpty else { throw CommandLineError("\(flag): give app names or *") }
        return apps
    }

    /// `run` with the options `parse` reads from `arguments`; its exit status, or
    /// ``parse(_:usage:_:)``'s.
    static func run<Options>(
        _ command: String, usage: String, _ arguments: [String], parse: ([String]) throws -> Options?,
        _ run: (Options) -> Int32
    ) -> Int32 {
        switch Self.parse(command, usage: usage, { try parse(arguments) }) {
        case .success(let options): run(options)
        case .failure(let exit): exit.code
        }
    }

    /// The same for a command that runs asynchronously.
    static func run<Options>(
        _ command: String, usage: String, _ arguments: [String], parse: ([String]) throws -> Options?,
        _ run: (Options) async -> Int32
    ) async -> Int32 {
        switch Self.parse(command, usage: usage, { try parse(arguments) }) {
        case .success(let options): await run(options)
        case .failure(let exit): exit.code
        }
    }
}

/// A process exit status that ends a command early.
struct ExitStatus: Error {
    let code: Int32
}
