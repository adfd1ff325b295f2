/// Public ids of endpoints and subscriptions: 32 lowercase hex characters, 128 bits from the
/// system's CSPRNG (`getrandom` on Linux), so ids cannot be guessed or enumerated.
enum RandomID {
    static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef".utf8)
        var bytes = [UInt8]()
        bytes.reserveCapacity(32)
        for _ in 0..<2 {
            var word = generator.next() as UInt64
            for _ in 0..<16 {
                bytes.append(digits[Int(word & 0xF)])
                word >>= 4
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
