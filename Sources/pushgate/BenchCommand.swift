import PushBench
import PushCommandLine

/// `pushgate bench`: the load generator is PushBench; this reads its flags and runs it.
enum BenchCommand {
    /// Exit status: 0 help or requests completed, 1 none did, 2 bad usage, 3 set-up failed.
    static func run(_ arguments: [String]) async -> Int32 {
        let options: BenchOptions
        do {
            guard let parsed = try BenchOptions.parse(arguments) else {
                print(BenchOptions.usage)
                return 0
            }
            options = parsed
        } catch {
            printError("pushgate bench: \(error)")
            return 2
        }
        return await Bench.run(options)
    }
}
