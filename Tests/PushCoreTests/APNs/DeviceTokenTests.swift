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
