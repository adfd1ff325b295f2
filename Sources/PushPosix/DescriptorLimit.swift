#if canImport(Glibc)
    import Glibc
#endif

/// The process's limit on open file descriptors (RLIMIT_NOFILE), which bounds how many client and
/// provider connections can be open at once: every socket is one descriptor.
public enum DescriptorLimit {
    /// Raises the soft limit to the hard one (allowed without privileges) and returns the soft
    /// limit now in force; the limit as it was when raising is refused. nil when it cannot be read.
    @discardableResult
    public static func raiseToHard() -> Int? {
        var limit = rlimit()
        guard getrlimit(openFilesResource, &limit) == 0 else { return nil }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(openFilesResource, &raised) == 0 { limit = raised }
        }
        // RLIM_INFINITY is all ones, which clamps to Int.max.
        return Int(clamping: limit.rlim_cur)
    }

    // Glibc imports RLIMIT_NOFILE as an enum case of __rlimit_resource on some versions.
    private static var openFilesResource: __rlimit_resource_t {
        __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    }
}
