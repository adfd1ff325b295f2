import PushPosix

/// Polls `condition` every millisecond until it holds or `seconds` pass (sleeping, so a waiting
/// test does not hold one of the few cooperative threads); whether it held.
public func eventually(seconds: Double = 10, _ condition: () -> Bool) async -> Bool {
    let deadline = EventLoop.monotonicNow + UInt64(seconds * 1e9)
    while !condition() {
        if EventLoop.monotonicNow > deadline { return false }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return true
}
