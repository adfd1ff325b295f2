// timespec: in release builds (no testable imports) MemberImportVisibility finds it in CLinux.
import CLinux

#if canImport(Glibc)
    import Glibc
#endif

/// Now in Unix seconds: the wall clock that credential lifetimes and provider answers
/// (`Retry-After` dates, unregistration times) are in. Intervals use the event loop's monotonic clock.
@Sendable public func unixSeconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Int64(now.tv_sec)
}
