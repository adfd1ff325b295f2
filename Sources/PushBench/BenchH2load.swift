import PushCommandLine
import PushCore
import PushPosix

#if canImport(Glibc)
    import Glibc
#endif

/// `pushgate bench --client h2load`: nghttp2's h2load as the gRPC client, so the row measures the
/// gateway without Pushgate's own client on the other side (h2load is C, and a lighter client
/// than most). It posts one gRPC-framed request message per stream over h2c; the gateway's own
/// counters say how many notifications were delivered, since h2load sees only HTTP statuses (a
/// gRPC error is a 200 with a non-zero `grpc-status` in the trailers).
enum BenchH2load {
    static func measure(_ options: BenchOptions, _ setup: inout BenchSetup) -> Int32 {
        guard let h2load = executableOnPath("h2load") else {
            printError("pushgate bench: --client h2load: h2load is not on PATH (Debian: nghttp2-client)")
            return 3
        }
        let connections = options.grpcConnections ?? 1
        let streams = options.concurrency ?? 100
        let seconds = options.duration ?? 10
        let body = GRPCMessageFramer.frame(Bench.requestMessage(options, tokens: setup.tokens))
        let bodyPath: String
        do {
            let files = try setup.files ?? BenchFiles.make()
            if setup.files == nil { setup.files = files }
            bodyPath = files.path("request.grpc")
            guard let file = fopen(bodyPath, "wb") else { throw CommandLineError("cannot write \(bodyPath)") }
            let written = body.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
            fclose(file)
            guard written == body.count else { throw CommandLineError("cannot write \(bodyPath)") }
        } catch {
            printError("pushgate bench: \(error)")
            return 3
        }
        let arguments = [
            h2load, "-c", "\(connections)", "-m", "\(streams)", "-t", "\(min(connections, 2))",
            "-D", "\(Int(seconds.rounded(.up)))", "--warm-up-time", "1", "-d", bodyPath,
            "-H", "content-type: application/grpc", "-H", "te: trailers",
            "http://\(setup.host):\(setup.port)\(options.mode.path)",
        ]
        let metrics = setup.metrics
        let delivered = { metrics.flatMap { deliveredCount(host: $0.host, port: $0.port) } }
        usleep(300_000)
        let before = (delivered(), setup.gatewayPID.flatMap { ProcessSample.read(pid: $0) })
        let started = monotonicNanoseconds()
        let run: BenchChild
        do {
            run = try BenchChild.spawn(
                name: "h2load", arguments: arguments,
                logPath: (setup.files?.path("h2load.log")) ?? "/dev/null")
        } catch {
            printError("pushgate bench: \(error)")
            return 3
        }
        // Bounded: the run, its warm-up, and time to finish what is in flight.
        let limit = started + UInt64(seconds + 30) * 1_000_000_000
        while run.isRunning && monotonicNanoseconds() < limit { usleep(50_000) }
        let finished = !run.isRunning
        if !finished { run.stop(grace: .seconds(1)) }
        let elapsed = Double(monotonicNanoseconds() - started) / 1e9
        let after = (delivered(), setup.gatewayPID.flatMap { ProcessSample.read(pid: $0) })
        let log = run.log
        setup.tearDown(keepFiles: options.keepFiles)
        let reading = H2loadReading.parse(log)
        guard finished, let reading else {
            printError("pushgate bench: h2load did not finish or printed no result:\n\(log)")
            return 1
        }
        let deliveredInRun = before.0.flatMap { start in after.0.map { $0 - start } }
        // The gateway's CPU over the h2load run (its 1 s warm-up included).
        let cpu = ProcessSample.cpuPercent(from: before.1, to: after.1, over: elapsed)
        let command = arguments.map { $0.contains(" ") ? "'\($0)'" : $0 }.joined(separator: " ")
        if options.json {
            var members: [(String, JSONValue)] = [
                ("client", .string("h2load")), ("mode", .string(options.mode.rawValue)),
                ("tokens_per_request", .number("\(options.tokensPerSend)")),
                ("grpc_connections", .number("\(connections)")), ("streams_per_connection", .number("\(streams)")),
                ("provider_connections", .number("\(options.connections)")),
                ("rps", .number(format(reading.requestsPerSecond))),
                (
                    "notifications_per_second",
                    .number(format(reading.requestsPerSecond * Double(options.tokensPerSend)))
                ),
                ("succeeded", .number("\(reading.succeeded)")), ("failed", .number("\(reading.failed)")),
                ("command", .string(command)),
            ]
            if let deliveredInRun { members.append(("delivered", .number("\(deliveredInRun)"))) }
            if let cpu { members.append(("gateway_cpu_percent", .number(format(cpu)))) }
            print(String(decoding: JSONWriter.encode(.object(members)), as: UTF8.self))
        } else {
            print("client:     h2load, \(connections) connection(s), \(streams) streams each, \(options.mode.path)")
            print("setup:      \(setup.description)")
            print("rate:       \(formatCount(Int(reading.requestsPerSecond))) RPC/s (h2load's measured \(seconds) s)")
            print("requests:   \(reading.succeeded) succeeded, \(reading.failed) failed (HTTP)")
            if let deliveredInRun {
                print("delivered:  \(deliveredInRun) notifications (the gateway's count, warm-up included)")
            }
            if let cpu { print("gateway:    \(format(cpu)) % CPU") }
            print("command:    \(command)")
        }
        return reading.succeeded > 0 ? 0 : 1
    }

    /// Delivered notifications so far, summed over the gateway's apps, from its /metrics.
    static func deliveredCount(host: String, port: Int) -> Int? {
        guard let text = ProviderLatency.httpGet(host: host, port: port, path: "/metrics") else { return nil }
        var total = 0.0
        for line in text.split(separator: "\n")
        where line.hasPrefix("pushgate_notifications_total{") && line.contains("status=\"delivered\"") {
            if let value = line.split(separator: " ").last.flatMap({ Double($0) }) { total += value }
        }
        return Int(total)
    }

    private static func format(_ value: Double) -> String {
        String(Double(Int(value * 10)) / 10)
    }

    private static func executableOnPath(_ name: String) -> String? {
        let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }
}

/// What h2load's summary says: `finished in 10.00s, 41234.50 req/s, …` and
/// `requests: N total, N started, N done, N succeeded, N failed, …`.
struct H2loadReading: Equatable {
    var requestsPerSecond: Double
    var succeeded: Int
    var failed: Int

    static func parse(_ text: String) -> H2loadReading? {
        var rps: Double?
        var succeeded = 0
        var failed = 0
        for line in text.split(separator: "\n") {
            let words = line.split(separator: " ")
            if line.hasPrefix("finished in"), let index = words.firstIndex(where: { $0.hasPrefix("req/s") }),
                index > 0
            {
                rps = Double(words[index - 1])
            } else if line.hasPrefix("requests:") {
                for (index, word) in words.enumerated() where index > 0 {
                    if word.hasPrefix("succeeded") { succeeded = Int(words[index - 1]) ?? 0 }
                    if word.hasPrefix("failed") { failed = Int(words[index - 1]) ?? 0 }
                }
            }
        }
        guard let rps else { return nil }
        return H2loadReading(requestsPerSecond: rps, succeeded: succeeded, failed: failed)
    }
}
