// Fuzzes Gzip.decompress, which inflates what a gRPC client sends with grpc-encoding gzip: the
// input's first byte picks the size limit, the rest is the gzip data (the corpus holds real gzip
// members, which the fuzzer then damages).
//
// Invariants: no crash or hang; an answer is at most the limit; no more output is ever asked of
// `reserve` than the limit + 1 byte; the answer re-compresses and inflates back to itself; a
// refusing `reserve` always stops it.
import FuzzSupport
import PushGzip

@_cdecl("gzip_inflate_main")
func gzipInflateMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzz)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    var input = FuzzInput(start, count)
    let limits = [0, 1, 100, 16 << 10, (16 << 10) + 1, 1 << 20]
    let limitByte = input.byte()
    let maxSize = limitByte < 128 ? Int(limitByte) : limits[Int(limitByte) % limits.count]
    let gzipped = Array(input.rest())

    var reserved = 0
    do throws(GzipError) {
        let output = try Gzip.decompress(gzipped, maxSize: maxSize) { bytes in
            reserved += bytes
            return true
        }
        fuzzCheck(output.count <= maxSize, "\(output.count) bytes over the limit \(maxSize)")
        fuzzCheck(reserved >= output.count, "\(output.count) bytes out of \(reserved) reserved")
        let again = Gzip.compress(output, level: 1)
        fuzzCheck(again != nil, "zlib could not compress")
        if let again {
            fuzzCheck((try? Gzip.decompress(again, maxSize: output.count)) == output, "the round trip differs")
        }
    } catch {
        if case .refused = error { fuzzCheck(false, "refused without a refusing reserve") }
    }
    fuzzCheck(reserved <= maxSize + 1, "\(reserved) bytes reserved for a limit of \(maxSize)")
    do throws(GzipError) {
        _ = try Gzip.decompress(gzipped, maxSize: maxSize) { _ in false }
        fuzzCheck(false, "inflated without room")
    } catch {
        fuzzCheck(error != .tooLarge(limit: maxSize), "over the limit before any room was given")
    }
    return 0
}
