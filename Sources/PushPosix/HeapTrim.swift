import CMimalloc
import Glibc

/// Hands memory the allocator keeps free back to the system. The allocator is mimalloc (linked
/// into every Pushgate binary through this module; docs/development.md says why): it decommits pages it
/// finds free a few milliseconds after they empty, but it looks for them only while the thread
/// whose heap they belong to allocates or frees. After a burst (a client's 800,000 tokens in
/// flight at once) an idle loop would keep the burst's pages resident with nothing holding them,
/// until ``collectThisThread()`` runs on it.
public enum HeapTrim {
    /// The process's resident memory, in bytes.
    public static var residentBytes: Int {
        var rss = 0
        mi_process_info(nil, nil, nil, &rss, nil, nil, nil, nil)
        return rss
    }

    /// Returns what the calling thread's heap holds free to the system, now (each thread has a
    /// heap of its own: run it on every loop).
    public static func collectThisThread() {
        mi_collect(true)
    }

    /// The allocator and its version, for `pushgate version`; says so when mimalloc is linked but
    /// `malloc` is another library's: glibc's after a link line that names libc first (the bench
    /// refuses such a build), a sanitizer's under `make test-asan` or `test-tsan`.
    public static var allocator: String {
        let version = Int(mi_version())
        let name = "mimalloc \(version / 100).\(version / 10 % 10).\(version % 10)"
        return mallocIsMimalloc ? name : "another malloc (\(name) linked but not in use)"
    }

    /// Whether the process's `malloc` is mimalloc's: the first library on the executable's list of
    /// needed libraries that defines `malloc` provides it for every library, so the link order decides.
    public static var mallocIsMimalloc: Bool {
        guard let block = malloc(16) else { return false }
        defer { free(block) }
        return mi_is_in_heap_region(block)
    }
}
