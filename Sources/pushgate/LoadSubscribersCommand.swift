import PushBench
import PushCommandLine
import PushStore

/// `pushgate load-subscribers`: bulk-loads endpoints subscribed to a topic straight into a store
/// (SQLite file or PostgreSQL URL), for scale tests and benchmarks. Token `i` is the bench token
/// (`"b"` + 63 hex digits of i), so a test can tell which subscriber a delivery was for.
enum LoadSubscribersCommand {
    static let usage = """
        Usage: pushgate load-subscribers --store FILE|URL --topic T --app A --count N [--first I]

        Creates topic T if needed, an endpoint of app A for each of the tokens first..first+count-1
        ("b" + 63 hex digits of the number) and a subscription of each to T, in batches of 50,000
        (one transaction each). Existing endpoints and subscriptions are kept. Prints the number of
        subscriptions created.
        """

    struct Options {
        var store: String
        var topic: String
        var app: String
        var count: Int
        var first: Int
    }

    /// nil when --help was asked for.
    static func parse(_ arguments: [String]) throws -> Options? {
        var store: String?
        var topic: String?
        var app: String?
        var count: Int?
        var first = 0
        let read = try CommandOptions.readFlags(arguments) { flag, flags in
            switch flag {
            case "--store": store = try flags.value(for: flag)
            case "--topic": topic = try flags.value(for: flag)
            case "--app": app = try flags.value(for: flag)
            case "--count": count = try flags.int(for: flag, range: 1...100_000_000)
            case "--first": first = try flags.int(for: flag, range: 0...1_000_000_000)
            default: throw CommandLineError("unknown flag \(flag.debugDescription)\n\n\(usage)")
            }
        }
        guard read else { return nil }
        guard let store, let topic, let app, let count else {
            throw CommandLineError("--store, --topic, --app and --count are required\n\n\(usage)")
        }
        return Options(store: store, topic: topic, app: app, count: count, first: first)
    }

    static func run(_ arguments: [String]) async -> Int32 {
        await CommandOptions.run("load-subscribers", usage: usage, arguments, parse: parse, load)
    }

    private static func load(_ options: Options) async -> Int32 {
        do {
            let created = try await StoreSetting.loadSubscribers(
                into: options.store, topic: options.topic, app: options.app,
                numbers: options.first..<(options.first + options.count), token: BenchTokens.apns)
            print(created)
            return 0
        } catch {
            printError("pushgate load-subscribers: \(error)")
            return 1
        }
    }
}
