import Glibc
import PushPosix
import Testing

/// Whether AddressSanitizer's or ThreadSanitizer's runtime is in the process (`make test-asan`,
/// `make test-tsan`): it serves `malloc` itself then, by design, whatever the link line says.
private let sanitizerServesMalloc = dlsym(nil, "__asan_init") != nil || dlsym(nil, "__tsan_init") != nil

@Suite("HeapTrim")
struct HeapTrimTests {
    /// mimalloc is linked into every Pushgate binary to be the process's allocator; a link line that
    /// names libc before it leaves glibc's `malloc` in charge (as a link-time-optimized build did).
    @Test(
        "malloc is mimalloc's, and the version line says so",
        .disabled(if: sanitizerServesMalloc, "a sanitizer's runtime serves malloc"))
    func mimallocIsTheAllocator() {
        #expect(HeapTrim.mallocIsMimalloc)
        #expect(HeapTrim.allocator.hasPrefix("mimalloc "))
    }

    @Test("the version line names whichever allocator serves malloc")
    func allocatorLine() {
        #expect(HeapTrim.allocator.hasPrefix("mimalloc ") == HeapTrim.mallocIsMimalloc)
        #expect(HeapTrim.allocator.contains("mimalloc "))
    }
}
