/// SplitMix64: one add and a few multiplies per draw. `mix` is also used on its own as a
/// counter-based generator (draw n = mix(seed + n·γ)), which is what makes fault shares
/// reproducible across connections and threads.
package struct SplitMix64 {
    package static let gamma: UInt64 = 0x9E37_79B9_7F4A_7C15
    package var state: UInt64

    package init(seed: UInt64) { state = seed }

    /// Seeded from the system generator (one getrandom call).
    package init() {
        var system = SystemRandomNumberGenerator()
        state = system.next()
    }

    package mutating func next() -> UInt64 {
        state &+= Self.gamma
        return Self.mix(state)
    }

    package static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// The nth draw of the counter-based sequence for `seed`, as a double in [0, 1).
    package static func unitDouble(seed: UInt64, index: UInt64) -> Double {
        let bits = mix(seed &+ (index &+ 1) &* gamma)
        return Double(bits >> 11) * 0x1p-53
    }
}
