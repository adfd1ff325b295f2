import Glibc

/// Wall-clock time (CLOCK_REALTIME) in milliseconds since the epoch.
package func wallClockMillis() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
}

/// Wall-clock time in whole seconds since the epoch.
package func wallClockSeconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Int64(ts.tv_sec)
}

/// Nanoseconds in a non-negative Duration (saturating).
package func nanoseconds(_ duration: Duration) -> UInt64 {
    let (seconds, attoseconds) = duration.components
    guard seconds > 0 || (seconds == 0 && attoseconds > 0) else { return 0 }
    let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
    return overflow ? UInt64.max / 4 : whole &+ UInt64(attoseconds / 1_000_000_000)
}

/// ASCII lower-casing of a byte string (copies only when something changes).
package func lowercasedASCII(_ bytes: [UInt8]) -> [UInt8] {
    guard bytes.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) else { return bytes }
    return bytes.map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") ? $0 + 0x20 : $0 }
}
