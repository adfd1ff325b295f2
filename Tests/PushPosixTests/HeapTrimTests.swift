import PushPosix
import Testing

@Suite("HeapTrim")
struct HeapTrimTests {
    /// mimalloc is linked into every Pushgate binary to be the process's allocator; a link line that
    /// names libc before it leaves glibc's `malloc` in charge (as a link-time-optimized build did).
    @Test("malloc is mimalloc's, and the version line says so")
    func mimallocIsTheAllocator() {
        #expect(HeapTrim.mallocIsMimalloc)
        #expect(HeapTrim.allocator.hasPrefix("mimalloc "))
    }
}
