import Testing

@testable import PushCore

@Suite("DeviceToken and APNsID")
struct DeviceTokenTests {
    static let token64 = String(repeating: "0123456789abcdef", count: 4)

    @Test("64 to 200 hex digits are accepted")
    func lengths() {
        #expect(DeviceToken(Self.token64)?.hex == Self.token64)
        #expect(DeviceToken(String(repeating: "a", count: 200)) != nil)
        #expect(DeviceToken(String(repeating: "a", count: 63)) == nil)
        #expect(DeviceToken(String(repeating: "a", count: 201)) == nil)
        #expect(DeviceToken("") == nil)
    }

    @Test("upper case is normalized to lower case")
    func normalizes() {
        #expect(DeviceToken(Self.token64.uppercased())?.hex == Self.token64)
        #expect(DeviceToken("ABCDEF" + String(Self.token64.dropFirst(6)))?.hex == "abcdef" + Self.token64.dropFirst(6))
    }

    @Test("non-hex characters are rejected")
    func nonHex() {
        for bad in ["g", " ", "-", "é", "<"] {
            #expect(DeviceToken(bad + Self.token64.dropFirst()) == nil, "\(bad)")
        }
        #expect(DeviceToken.requirement == "APNs device token must be 64-200 hex digits")
    }

    @Test("eight digits at a time agree with one at a time, for every byte in every place")
    func words() {
        func expected(_ byte: UInt8) -> DeviceToken.Kind? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"): .lowercase
            case UInt8(ascii: "A")...UInt8(ascii: "F"): .hasUpperCase
            default: nil
            }
        }
        let plain = UInt64(0x6130_6130_6130_6130)  // "0a0a0a0a"
        for byte in UInt8.min...UInt8.max {
            for lane in 0..<8 {
                let shift = UInt64(lane * 8)
                let word = plain & ~(0xFF << shift) | UInt64(byte) << shift
                #expect(DeviceToken.classify(word: word) == expected(byte), "byte \(byte) in lane \(lane)")
            }
        }
        // A bad or upper-case digit in the tail (past the last whole word) is found too.
        #expect(DeviceToken(Self.token64 + "0g") == nil)
        #expect(DeviceToken(Self.token64 + "0A")?.hex == Self.token64 + "0a")
    }

    @Test("apns-id must be a canonical UUID and is sent in lower case")
    func apnsID() {
        #expect(APNsID("123e4567-e89b-12d3-a456-426614174000")?.uuidString == "123e4567-e89b-12d3-a456-426614174000")
        #expect(APNsID("123E4567-E89B-12D3-A456-426614174ABC")?.uuidString == "123e4567-e89b-12d3-a456-426614174abc")
        for bad in [
            "", "123e4567e89b12d3a456426614174000", "123e4567-e89b-12d3-a456-42661417400",
            "123e4567-e89b-12d3-a456-4266141740000", "123e4567-e89b-12d3-a456_426614174000",
            "{123e4567-e89b-12d3-a456-426614174000}", "123e4567-e89b-12d3-a456-42661417400g",
        ] {
            #expect(APNsID(bad) == nil, "\(bad)")
        }
    }
}
