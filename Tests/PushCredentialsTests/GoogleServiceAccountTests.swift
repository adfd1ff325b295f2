import Foundation
import PushCredentials
import PushTLS
import Testing

/// The JSON of a service-account file the way the Firebase console writes it (extra members,
/// the key with `\n` escapes), built from `fields` with members dropped or replaced.
func serviceAccountJSON(replacing: [String: String?] = [:], key: String = sharedRSAKeys.privateKeyPEM) -> [UInt8] {
    var fields: [(String, String?)] = [
        ("type", "service_account"), ("project_id", "demo-project"), ("private_key_id", "0123abcd"),
        ("private_key", key), ("client_email", "fcm@demo-project.iam.gserviceaccount.com"),
        ("client_id", "1234567890"), ("auth_uri", "https://accounts.google.com/o/oauth2/auth"),
        ("token_uri", "https://oauth2.googleapis.com/token"), ("universe_domain", "googleapis.com"),
    ]
    for (name, value) in replacing {
        if let index = fields.firstIndex(where: { $0.0 == name }) { fields[index].1 = value }
    }
    let members = fields.compactMap { name, value in
        value.map { "  \"\(name)\": \"\($0.replacingOccurrences(of: "\n", with: "\\n"))\"" }
    }
    return Array(("{\n" + members.joined(separator: ",\n") + "\n}\n").utf8)
}

@Suite("Google service-account files")
struct GoogleServiceAccountTests {
    @Test("a console-style file parses; extra members are ignored")
    func parses() throws {
        let account = try GoogleServiceAccount(json: serviceAccountJSON())
        #expect(account.type == "service_account")
        #expect(account.projectID == "demo-project")
        #expect(account.privateKeyID == "0123abcd")
        #expect(account.privateKey == sharedRSAKeys.privateKeyPEM, "\\n escapes decoded back to newlines")
        #expect(account.clientEmail == "fcm@demo-project.iam.gserviceaccount.com")
        #expect(account.tokenURI == "https://oauth2.googleapis.com/token")
        #expect(try account.signer().publicKeyPEM == sharedRSAKeys.publicKeyPEM)
    }

    @Test(
        "each missing required field is named",
        arguments: ["type", "project_id", "private_key_id", "private_key", "client_email", "token_uri"])
    func missingField(_ name: String) throws {
        let error = try #require(throws: TLSError.self) {
            try GoogleServiceAccount(json: serviceAccountJSON(replacing: [name: String?.none]))
        }
        #expect(error.message == "service account JSON: \(name) is missing")
    }

    @Test("a file's errors start with its path")
    func fileErrors() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("accounts-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func write(_ name: String, _ json: [UInt8]) throws -> String {
            let file = directory.appendingPathComponent(name)
            try Data(json).write(to: file)
            return file.path
        }
        let path = try write("x.json", serviceAccountJSON(replacing: ["client_email": String?.none]))
        let error = try #require(throws: TLSError.self) { try GoogleServiceAccount(file: path) }
        #expect(error.message == "service account file \(path): client_email is missing")

        let absent = directory.appendingPathComponent("nope.json").path
        let missing = try #require(throws: TLSError.self) { try GoogleServiceAccount(file: absent) }
        #expect(missing.message.hasPrefix("service account file \(absent): cannot be read"))

        #expect(try GoogleServiceAccount(file: write("good.json", serviceAccountJSON())).projectID == "demo-project")
    }

    struct BadCase: Sendable, CustomTestStringConvertible {
        let name: String
        let replacing: [String: String?]
        let message: String
        var testDescription: String { name }
    }

    static let badCases: [BadCase] = [
        BadCase(
            name: "authorized_user credentials", replacing: ["type": "authorized_user"],
            message: "type must be \"service_account\", got \"authorized_user\""),
        BadCase(name: "project id with a slash", replacing: ["project_id": "a/b"], message: "project_id must be"),
        BadCase(name: "empty key id", replacing: ["private_key_id": ""], message: "private_key_id is empty"),
        BadCase(
            name: "email without @", replacing: ["client_email": "nobody"], message: "client_email must be an email"),
        BadCase(
            name: "token_uri not a URL", replacing: ["token_uri": "oauth2.googleapis.com"], message: "token_uri must be"
        ),
        BadCase(
            name: "key not PEM", replacing: ["private_key": "MIIEvQ-secret-bytes"],
            message: "private_key is not a usable RSA"),
    ]

    @Test("bad values are named", arguments: badCases)
    func badValues(_ testCase: BadCase) throws {
        let error = try #require(throws: TLSError.self) {
            try GoogleServiceAccount(json: serviceAccountJSON(replacing: testCase.replacing))
        }
        #expect(error.message.hasPrefix("service account JSON: \(testCase.message)"), "\(error.message)")
        #expect(!error.message.contains("secret-bytes"), "the key's text never appears in errors")
    }

    @Test("an EC key is refused without echoing it; non-string and non-object JSON are refused")
    func wrongShapes() throws {
        let ec = try ES256Signer.generateP8().privateKeyPEM
        let error = try #require(throws: TLSError.self) { try GoogleServiceAccount(json: serviceAccountJSON(key: ec)) }
        #expect(error.message.contains("private_key is not a usable RSA private key"))
        let keyBody = ec.split(separator: "\n")[1]
        #expect(!error.message.contains(keyBody))

        let numeric = Array(#"{"type":"service_account","project_id":42}"#.utf8)
        let numericError = try #require(throws: TLSError.self) { try GoogleServiceAccount(json: numeric) }
        #expect(numericError.message == "service account JSON: project_id must be a string")
        #expect(throws: TLSError.self) { try GoogleServiceAccount(json: Array("[]".utf8)) }
    }

    @Test("description and dump leave the private key out")
    func redacted() throws {
        let account = try GoogleServiceAccount(json: serviceAccountJSON())
        let keyLine = String(sharedRSAKeys.privateKeyPEM.split(separator: "\n")[1])
        var dumped = ""
        dump(account, to: &dumped)
        for text in [account.description, "\(account)", String(reflecting: account), dumped] {
            #expect(!text.contains(keyLine))
            #expect(!text.contains("BEGIN PRIVATE KEY"))
            #expect(text.contains("demo-project"))
        }
    }

    @Test("serialized() parses back to the same account and is valid JSON")
    func serializedRoundTrip() throws {
        let account = try GoogleServiceAccount(
            projectID: "pushgate-mock", privateKeyID: "k\"1", privateKey: sharedRSAKeys.privateKeyPEM,
            clientEmail: "mock@pushgate-mock.iam.gserviceaccount.com", tokenURI: "https://127.0.0.1:8444/token")
        let json = account.serialized()
        #expect(try GoogleServiceAccount(json: json) == account)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json)) as? [String: String])
        #expect(object["private_key_id"] == "k\"1")
        #expect(object["private_key"] == sharedRSAKeys.privateKeyPEM)
        #expect(object.count == 6)
    }
}
