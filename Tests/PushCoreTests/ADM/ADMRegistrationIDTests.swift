import Testing

@testable import PushCore

@Suite("ADM registration id")
struct ADMRegistrationIDTests {
    /// The shape of a real v3 id: a dotted prefix, then unpadded base64 of ASCII text (~700 bytes).
    static let v3 =
        "amzn1.adm-registration.v3.Y29tLmFtYXpvbi5EZXZpY2VNZXNzYWdpbmcuUmVnaXN0cmF0aW9uSWRFbmNyeXB0aW9uS2V5ITEh"
        + String(repeating: "aXJTVmVVQXhJSnhnRGs3MGl0S0E1TExldGwxcWFPRzFH", count: 14) + "PT0"

    func error(_ id: String, field: String = "tokens[0]") -> ValidationError? {
        do throws(ValidationError) {
            try ADMRegistrationID.validate(id, field: field)
            return nil
        } catch {
            return error
        }
    }

    @Test("real-looking ids, and every allowed byte, pass")
    func valid() {
        for id in [Self.v3, "amzn1.adm-registration.v1.XpvSSUk0Rc3hTVVV", "a", "A-z.0_9~=", "reg==", "x.y-z"] {
            #expect(error(id) == nil, "\(id)")
            #expect(ADMRegistrationID.isValid(id), "\(id)")
        }
        #expect(Self.v3.utf8.count > 600)
    }

    @Test("empty and over-long ids are refused, the limit is 2048 bytes")
    func length() {
        #expect(
            error("")
                == ValidationError(field: "tokens[0]", message: "must not be empty; " + ADMRegistrationID.requirement))
        #expect(error(String(repeating: "a", count: 2048)) == nil)
        let long = error(String(repeating: "a", count: 2049), field: "notifications[1].tokens[3]")
        #expect(long?.field == "notifications[1].tokens[3]")
        #expect(long?.message.hasPrefix("is 2049 bytes;") == true)
        #expect(!ADMRegistrationID.isValid(""))
        #expect(!ADMRegistrationID.isValid(String(repeating: "a", count: 2049)))
    }

    @Test("bytes that are not themselves in a URL path segment are refused, with their offset")
    func alphabet() {
        // `/` splits the path, `%` would be decoded, `+` may become a space, `?` and `#` end the path.
        for bad in ["/", "+", "%", "?", "#", " ", "\"", ":", "@", "&", "\n", "\u{7F}", "é", "\u{0}"] {
            let e = error("abc" + bad + "def")
            #expect(e?.message.hasPrefix("has a disallowed byte at offset 3;") == true, "\(bad)")
            #expect(e?.message.hasSuffix(ADMRegistrationID.requirement) == true)
            #expect(!ADMRegistrationID.isValid("abc" + bad), "\(bad)")
        }
    }

    @Test("the requirement names the limit and the alphabet")
    func requirement() {
        #expect(ADMRegistrationID.requirement == "ADM registration id must be 1-2048 characters from A-Za-z0-9-._~=")
    }
}
