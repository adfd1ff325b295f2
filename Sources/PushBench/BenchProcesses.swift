import Dispatch
import PushCommandLine
import PushPosix

#if canImport(Glibc)
    import Glibc
#endif

// `pushgate bench`: the child processes it starts — `pushgate mock-apns` and `pushgate serve`
// configured to it — from this same binary, on 127.0.0.1 only. Each child gets PR_SET_PDEATHSIG
// (SIGTERM), so it stops with the bench even when the bench is killed. That signal comes when the
// *thread* that forked the child exits, not the process, so children are forked on one thread that
// lives as long as the bench (see ``BenchChild/spawn(name:arguments:logPath:)``).

/// A child process whose standard output and error go to a log file.
final class BenchChild {
    let name: String
    let pid: pid_t
    let logPath: String
    private var exitStatus: Int32?

    private init(name: String, pid: pid_t, logPath: String) {
        self.name = name
        self.pid = pid
        self.logPath = logPath
    }

    /// The thread children are forked on. The bench's async code runs on worker threads that exit
    /// when idle, and a child forked on one got SIGTERM (PR_SET_PDEATHSIG) when it did: a mock
    /// that stopped while the Publish row bulk-loaded its store, so every send was refused.
    private static let forkLoop: Result<EventLoop, any Error> = Result { try EventLoop.spawn(name: "bench-fork") }

    /// Starts `arguments[0]` (a path) with `arguments`; output to `logPath`. Forks on
    /// ``forkLoop``'s thread and waits for it.
    static func spawn(name: String, arguments: [String], logPath: String) throws -> BenchChild {
        let loop: EventLoop
        do {
            loop = try forkLoop.get()
        } catch {
            throw CommandLineError("cannot start \(name): no thread to fork on: \(error)")
        }
        let outcome = SpawnOutcome()
        let done = DispatchSemaphore(value: 0)
        loop.execute {
            outcome.result = Result { try spawnOnThisThread(name: name, arguments: arguments, logPath: logPath) }
            done.signal()
        }
        done.wait()
        return try outcome.result!.get()
    }

    /// The fork's result, handed from the fork thread to the waiting one (the semaphore orders it).
    private final class SpawnOutcome: @unchecked Sendable {
        var result: Result<BenchChild, any Error>?
    }

    private static func spawnOnThisThread(name: String, arguments: [String], logPath: String) throws -> BenchChild {
        // Everything the child touches is allocated before fork: between fork and exec the child
        // only makes system calls (another thread may hold the allocator's lock at fork time).
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        let logC = strdup(logPath)!
        defer {
            for pointer in argv { free(pointer) }
            free(logC)
        }
        let parent = getpid()
        let prctl = prctlFunction
        let pid = argv.withUnsafeBufferPointer { argvBuffer -> pid_t in
            let pid = fork()
            if pid == 0 {
                let setParentDeathSignal: Int32 = 1  // PR_SET_PDEATHSIG (linux/prctl.h; not in the Glibc module)
                _ = prctl?(setParentDeathSignal, UInt(SIGTERM), 0, 0, 0)
                if getppid() != parent { _exit(1) }
                let fd = open(logC, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
                if fd >= 0 {
                    dup2(fd, 1)
                    dup2(fd, 2)
                    if fd > 2 { close(fd) }
                }
                let devNull = open("/dev/null", O_RDONLY)
                if devNull >= 0 { dup2(devNull, 0) }
                execv(argvBuffer[0]!, argvBuffer.baseAddress!)
                _exit(127)
            }
            return pid
        }
        guard pid > 0 else { throw CommandLineError("cannot start \(name): fork: \(String(cString: strerror(errno)))") }
        return BenchChild(name: name, pid: pid, logPath: logPath)
    }

    /// The log so far.
    var log: String { readSmallFile(logPath) ?? "" }

    /// Whether it is still running (reaps it when it is not).
    var isRunning: Bool {
        if exitStatus != nil { return false }
        var status: Int32 = 0
        let rc = waitpid(pid, &status, WNOHANG)
        if rc == pid {
            exitStatus = status
            return false
        }
        return rc == 0
    }

    /// Waits (bounded) until a log line contains `marker`, and returns the text after it up to the
    /// end of that word, e.g. the port after "127.0.0.1:".
    func waitForLog(after marker: String, timeout: Duration = .seconds(20)) throws -> String {
        let deadline = monotonicNanoseconds() + UInt64(timeout.components.seconds) * 1_000_000_000
        while monotonicNanoseconds() < deadline {
            let text = log
            if let rest = text.after(marker) {
                let word = rest.prefix { !$0.isWhitespace && $0 != "\n" && $0 != ")" && $0 != "\"" }
                if rest.count > word.count { return String(word) }
            }
            guard isRunning else {
                throw CommandLineError("\(name) exited during start-up; its log:\n\(text)")
            }
            usleep(20_000)
        }
        throw CommandLineError("\(name) did not log \(marker.debugDescription) within \(timeout); its log:\n\(log)")
    }

    /// SIGTERM, then SIGKILL after `grace`; returns the exit status (nil if it had to be killed).
    @discardableResult
    func stop(grace: Duration = .seconds(10)) -> Int32? {
        guard isRunning else { return exitStatus }
        kill(pid, SIGTERM)
        let deadline = monotonicNanoseconds() + UInt64(grace.components.seconds) * 1_000_000_000
        while monotonicNanoseconds() < deadline {
            if !isRunning { return exitStatus }
            usleep(10_000)
        }
        kill(pid, SIGKILL)
        var status: Int32 = 0
        _ = waitpid(pid, &status, 0)
        exitStatus = status
        return nil
    }
}

/// prctl(2), which Swift's Glibc module does not import (it is variadic): looked up once.
typealias PrctlFunction = @convention(c) (Int32, UInt, UInt, UInt, UInt) -> Int32
let prctlFunction: PrctlFunction? = {
    guard let handle = dlopen(nil, RTLD_NOW), let address = dlsym(handle, "prctl") else { return nil }
    return unsafeBitCast(address, to: PrctlFunction.self)
}()

extension String {
    /// The text after the first occurrence of `marker`.
    func after(_ marker: String) -> Substring? {
        let m = Array(marker.utf8)
        let bytes = Array(utf8)
        guard !m.isEmpty, bytes.count >= m.count else { return nil }
        for start in 0...(bytes.count - m.count) where bytes[start] == m[0] {
            if Array(bytes[start..<(start + m.count)]) == m {
                let index = utf8.index(utf8.startIndex, offsetBy: start + m.count)
                return self[index...]
            }
        }
        return nil
    }
}

/// The temporary directory with the generated key, CA, config and logs.
struct BenchFiles {
    let directory: String

    static func make() throws -> BenchFiles {
        var template = Array("/tmp/pushgate-bench.XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard made != nil else { throw CommandLineError("mkdtemp: \(String(cString: strerror(errno)))") }
        return BenchFiles(directory: String(cString: made!))
    }

    func path(_ name: String) -> String { directory + "/" + name }

    func write(_ name: String, _ text: String) throws {
        let path = self.path(name)
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw CommandLineError("\(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                throw CommandLineError("\(path): \(String(cString: strerror(errno)))")
            }
            offset += written
        }
    }

    /// Removes everything in the directory (the bench made it with mkdtemp and only its own
    /// processes wrote there: keys, config, logs, the store with its -wal and -shm), then the
    /// directory. A list of known names left the store and the ADM files behind.
    func remove() {
        if let listing = opendir(directory) {
            var names: [String] = []
            while let entry = readdir(listing) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
                }
                if name != "." && name != ".." { names.append(name) }
            }
            closedir(listing)
            for name in names { unlink(path(name)) }
        }
        rmdir(directory)
    }
}

/// The absolute path of this executable (children run the same binary).
func currentExecutablePath() -> String {
    var buffer = [CChar](repeating: 0, count: 4096)
    let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    guard count > 0 else { return CommandLine.arguments[0] }
    return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// Reads the last `key=value` of the mock's final stats line ("requests=123 [200=123] ...").
func mockFinalStat(_ log: String, key: String) -> Int? {
    guard let line = log.split(separator: "\n").last(where: { $0.contains("final stats") }) else { return nil }
    for word in line.split(separator: " ") where word.hasPrefix(key + "=") {
        return Int(word.dropFirst(key.count + 1))
    }
    return nil
}
