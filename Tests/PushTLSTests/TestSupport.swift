import Foundation

/// Runs /usr/bin/openssl; returns its exit status and combined output.
func runOpenSSL(_ arguments: [String]) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: output, as: UTF8.self))
}

/// A test-side DER codec for ECDSA signatures, written independently of PushTLS's, so the CLI
/// test checks the raw r‖s format rather than our own conversion.
enum DER {
    static func ecdsaSignature(raw: [UInt8]) -> [UInt8] {
        precondition(raw.count == 64)
        let body = integer(Array(raw[..<32])) + integer(Array(raw[32...]))
        return [0x30] + length(body.count) + body
    }

    static func rawECDSASignature(der: [UInt8]) -> [UInt8]? {
        guard der.count > 2, der[0] == 0x30 else { return nil }
        var index = der[1] == 0x81 ? 3 : 2
        var raw: [UInt8] = []
        for _ in 0..<2 {
            guard index + 2 <= der.count, der[index] == 0x02 else { return nil }
            let count = Int(der[index + 1])
            guard index + 2 + count <= der.count else { return nil }
            var value = Array(der[(index + 2)..<(index + 2 + count)])
            while value.count > 32, value.first == 0 { value.removeFirst() }
            guard value.count <= 32 else { return nil }
            raw += [UInt8](repeating: 0, count: 32 - value.count) + value
            index += 2 + count
        }
        return raw
    }

    private static func integer(_ bigEndian: [UInt8]) -> [UInt8] {
        var value = Array(bigEndian.drop { $0 == 0 })
        if value.isEmpty { value = [0] }
        if value[0] & 0x80 != 0 { value.insert(0, at: 0) }
        return [0x02] + length(value.count) + value
    }

    private static func length(_ count: Int) -> [UInt8] {
        count < 0x80 ? [UInt8(count)] : [0x81, UInt8(count)]
    }
}

/// Keys ES256 must refuse, made once with `openssl genpkey`, plus a P-256 key in SEC1 form.
enum NonP256Keys {
    static let p384 = """
        -----BEGIN PRIVATE KEY-----
        MIG2AgEAMBAGByqGSM49AgEGBSuBBAAiBIGeMIGbAgEBBDCeU3Uc0GyqciVJbqr2
        pck4notaKMLFem9AyQ12qsREiSj6SUDn+j5vzaZuzEqGtfGhZANiAASilQjUeuro
        XSntuW9FqyrfHrNxJSLkx8XyJaN9oF+MdiJtjU9eRMq7wjQU0hm3fY77ZcQEqFF2
        5LmfZgn77UZPrxhF5Rs47KbOcMBfbXyn6eoCscbv4Mb6lu2CwY9IVbc=
        -----END PRIVATE KEY-----

        """
    static let ed25519 = """
        -----BEGIN PRIVATE KEY-----
        MC4CAQAwBQYDK2VwBCIEIFqX+nIypXXmfsVfgfsy0fuKGrInr94aBl2gu67N/cXc
        -----END PRIVATE KEY-----

        """
    static let rsa1024 = """
        -----BEGIN PRIVATE KEY-----
        MIICdgIBADANBgkqhkiG9w0BAQEFAASCAmAwggJcAgEAAoGBAMtHmayAJB6VYq5p
        NlmqAT6LhWp7Mu+0R8Up92NpUAT0+oiGkJ1+YBzEd/Af/LF59oNMausK1vS4dcQs
        JrOwpIkaS490YahTRFwm9c0pOm9ZaofxMIOOiJK69RXezYEUNICjBLrQvWAFqPlE
        lS8ddxh8DgMUvqe728pMNUR7GO7xAgMBAAECgYB9x3zfzp4KynY34uP9UQLaF2xi
        +X4H8a3i4levjE818fs/FLxQpwyDYFGyI6iwi/2rOlKBwsBExgogaw07bBYxoKOa
        hqXYBHEHHq/OZtTXEuAI2aHSroVR9eONPs+TS6re0hkFgIfEhCf9zE5El+MEJDPA
        0Wm6AsdbLXzhHcAovQJBAO3/FfnoF/N4SQ6NEnqhnYpDR9WUxK2Dsf7sLq0EDRVC
        9FNjQ/7ce3T3GQ79VJzTmwhXLGQTZh4IJnMLtkYm6d8CQQDaqDVPA3lxhh3EJKR+
        dWD3JuyDQGgXayInu2JsNXssGYNKOLBt2/zAPc35tRCI6UL12HSXPJLOKDJ3lNKk
        eeEvAkEAhU7dm2aii9Czc0AXurLuEHURNpQm+l4LBJR8rJLZVTB0tISkoIwVZvXF
        hnzluRZZ/3j8t22aRHYiO0yzI2ZGlwJAbmr5GKCRiFGI4I78flu6DrUaRKGWrxTL
        17KZ3jkXrUpo8Wc1ORUZSt8rD8luwyTASrP3FJRjMjY8XgTKZoKhwwJAPxVabgsn
        hQGHIX7ciSerPUkDqW7zYHem5x2BrR8YjI1RfM8ZuBKJY/Zo+eO2MN/iKRM0Ghnl
        /VFYeGgEzPIljg==
        -----END PRIVATE KEY-----

        """
    static let p256SEC1 = """
        -----BEGIN EC PRIVATE KEY-----
        MHcCAQEEIP5IjUYMV00revpnUwDwDJcxN7uoY/WBxlF5jM3jzBGpoAoGCCqGSM49
        AwEHoUQDQgAEaIdOl+mvaOus8pp8O+9Kuj8C3PUqS+Zl29DzJqymuycls5AKiaE5
        l4n3MfQ/sl5qMahkeoc17mYpIg3NDUGO0g==
        -----END EC PRIVATE KEY-----

        """
}
