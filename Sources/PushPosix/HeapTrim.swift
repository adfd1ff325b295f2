import CLinux

/// Hands memory that glibc's allocator keeps free back to the system. After a burst (a client's
/// 800,000 tokens in flight at once) the freed memory stays in malloc's arenas, so RSS stays at the
/// burst's peak although nothing holds it; `malloc_trim` returns the free pages (madvise), whole.
public enum HeapTrim {
    /// Bytes malloc holds free now (in all arenas).
    public static var freeBytes: Int { Int(mallinfo2().fordblks) }

    /// Trims when at least `minimumFree` bytes are free; returns the free bytes it saw, or nil
    /// when there were too few to bother. It locks each arena in turn: call it when idle.
    @discardableResult
    public static func trim(ifFreeAtLeast minimumFree: Int) -> Int? {
        let free = freeBytes
        guard free >= minimumFree else { return nil }
        malloc_trim(0)
        return free
    }
}
