#if canImport(Glibc)
    import Glibc
#endif

/// Memory and CPU of a process, from /proc/PID/status and /proc/PID/stat: what `pushgate bench`
/// reads of its children and the gateway reports of itself (`process_*` metrics, GetStats).
public struct ProcessSample: Sendable {
    /// VmRSS and VmHWM (peak RSS) in KiB.
    public var rssKiB: Int
    public var peakRSSKiB: Int
    /// utime + stime in clock ticks.
    public var cpuTicks: Int
    public var threads: Int

    public static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    public init(rssKiB: Int, peakRSSKiB: Int, cpuTicks: Int, threads: Int) {
        self.rssKiB = rssKiB
        self.peakRSSKiB = peakRSSKiB
        self.cpuTicks = cpuTicks
        self.threads = threads
    }

    public static func read(pid: Int32) -> ProcessSample? {
        guard let status = try? FileContents.readText("/proc/\(pid)/status"),
            let stat = try? FileContents.readText("/proc/\(pid)/stat")
        else { return nil }
        var sample = ProcessSample(rssKiB: 0, peakRSSKiB: 0, cpuTicks: 0, threads: 0)
        for line in status.split(separator: "\n") {
            let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard parts.count >= 2 else { continue }
            switch parts[0] {
            case "VmRSS:": sample.rssKiB = Int(parts[1]) ?? 0
            case "VmHWM:": sample.peakRSSKiB = Int(parts[1]) ?? 0
            case "Threads:": sample.threads = Int(parts[1]) ?? 0
            default: break
            }
        }
        // The command name (field 2) is in parentheses and may hold spaces: count from the last ')'.
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // fields[0] is field 3 (state); utime is field 14, stime field 15.
        guard fields.count > 13, let utime = Int(fields[11]), let stime = Int(fields[12]) else { return nil }
        sample.cpuTicks = utime + stime
        return sample
    }

    /// This process.
    public static func readSelf() -> ProcessSample? { read(pid: getpid()) }

    /// The descriptors this process has open (the entries of /proc/self/fd, less the one reading it).
    public static func openDescriptors() -> Int? {
        guard let directory = opendir("/proc/self/fd") else { return nil }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix(2)) }
            if name.first != UInt8(ascii: ".") { count += 1 }
        }
        return max(0, count - 1)
    }
}
