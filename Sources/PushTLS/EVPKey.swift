import COpenSSL

/// Owns one EVP_PKEY (private or public). Internal: OpenSSL types never appear in the public API.
///
/// `@unchecked Sendable`: the key is never mutated after init, and OpenSSL 3 allows concurrent
/// signing and verification with one EVP_PKEY as long as each operation has its own EVP_MD_CTX.
final class EVPKey: @unchecked Sendable {
    let pkey: OpaquePointer

    /// Takes ownership of a key the caller got from OpenSSL.
    init(taking pkey: OpaquePointer) { self.pkey = pkey }

    deinit { EVP_PKEY_free(pkey) }

    /// Parses a private key from PEM ("BEGIN PRIVATE KEY" PKCS#8; OpenSSL's decoder also accepts
    /// the traditional "BEGIN EC PRIVATE KEY" form). Unencrypted keys only: no passphrase callback.
    convenience init(privateKeyPEM pem: String) throws(TLSError) {
        let bio = try MemoryBIO(copying: pem)
        guard let pkey = PEM_read_bio_PrivateKey(bio.bio, nil, nil, nil) else {
            throw .openSSL(.certificate, "cannot parse private key PEM")
        }
        self.init(taking: pkey)
    }

    /// Parses a "BEGIN PUBLIC KEY" (SubjectPublicKeyInfo) PEM.
    convenience init(publicKeyPEM pem: String) throws(TLSError) {
        let bio = try MemoryBIO(copying: pem)
        guard let pkey = PEM_read_bio_PUBKEY(bio.bio, nil, nil, nil) else {
            throw .openSSL(.certificate, "cannot parse public key PEM")
        }
        self.init(taking: pkey)
    }

    /// A fresh key pair on NIST P-256.
    static func generateP256() throws(TLSError) -> EVPKey {
        guard let pkey = COpenSSL_EVP_EC_gen("P-256") else {
            throw .openSSL(.certificate, "EC P-256 key generation failed")
        }
        return EVPKey(taking: pkey)
    }

    /// Only the public half, re-read from its DER encoding so no private material comes along.
    func publicOnly() throws(TLSError) -> EVPKey {
        var der: UnsafeMutablePointer<UInt8>? = nil
        let length = i2d_PUBKEY(pkey, &der)
        guard length > 0, let der else { throw .openSSL(.certificate, "i2d_PUBKEY failed") }
        defer { CRYPTO_free(der, #fileID, #line) }
        var cursor: UnsafePointer<UInt8>? = UnsafePointer(der)
        guard let publicKey = d2i_PUBKEY(nil, &cursor, Int(length)) else {
            throw .openSSL(.certificate, "d2i_PUBKEY failed")
        }
        return EVPKey(taking: publicKey)
    }

    /// The private key as unencrypted PKCS#8 PEM ("BEGIN PRIVATE KEY").
    func privateKeyPEM() throws(TLSError) -> String {
        let bio = try MemoryBIO()
        guard PEM_write_bio_PrivateKey(bio.bio, pkey, nil, nil, 0, nil, nil) == 1 else {
            throw .openSSL(.certificate, "PEM_write_bio_PrivateKey failed")
        }
        return try bio.text()
    }

    /// The public key as SubjectPublicKeyInfo PEM ("BEGIN PUBLIC KEY").
    func publicKeyPEM() throws(TLSError) -> String {
        let bio = try MemoryBIO()
        guard PEM_write_bio_PUBKEY(bio.bio, pkey) == 1 else {
            throw .openSSL(.certificate, "PEM_write_bio_PUBKEY failed")
        }
        return try bio.text()
    }

    /// Throws unless this is an EC key on P-256 (what APNs .p8 keys and ES256 require).
    func requireP256(_ what: String) throws(TLSError) {
        guard EVP_PKEY_get_base_id(pkey) == EVP_PKEY_EC else {
            let type = String(cString: OBJ_nid2sn(EVP_PKEY_get_base_id(pkey)))
            throw TLSError(.certificate, "\(what) must be an EC P-256 key, got key type \(type)")
        }
        var name = [CChar](repeating: 0, count: 64)
        var length = 0
        guard EVP_PKEY_get_group_name(pkey, &name, name.count, &length) == 1 else {
            throw .openSSL(.certificate, "\(what): cannot read the EC curve name")
        }
        let curve = String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard curve == "prime256v1" || curve == "P-256" else {
            throw TLSError(.certificate, "\(what) must be an EC P-256 key, got curve \(curve)")
        }
    }

    /// A fresh RSA key pair with a modulus of `bits` bits (public exponent 65537).
    static func generateRSA(bits: Int) throws(TLSError) -> EVPKey {
        guard let pkey = COpenSSL_EVP_RSA_gen(UInt32(clamping: bits)) else {
            throw .openSSL(.certificate, "RSA-\(bits) key generation failed")
        }
        return EVPKey(taking: pkey)
    }

    /// An unencrypted RSA private key (PKCS#8 or PKCS#1 PEM) that ``requireRSA(_:)`` accepts as
    /// `what`: what the RSA signer and verifier load.
    static func rsa(privateKeyPEM pem: String, as what: String) throws(TLSError) -> EVPKey {
        let key = try EVPKey(privateKeyPEM: pem)
        try key.requireRSA(what)
        return key
    }

    /// Throws unless this is a plain RSA key (not RSA-PSS) of at least 2048 bits: RFC 7518 §3.3
    /// requires 2048 or more for RS256, and Google's service-account keys are 2048-bit.
    func requireRSA(_ what: String) throws(TLSError) {
        guard EVP_PKEY_get_base_id(pkey) == EVP_PKEY_RSA else {
            let type = String(cString: OBJ_nid2sn(EVP_PKEY_get_base_id(pkey)))
            throw TLSError(.certificate, "\(what) must be an RSA key, got key type \(type)")
        }
        let bits = EVP_PKEY_get_bits(pkey)
        guard bits >= 2048 else {
            throw TLSError(.certificate, "\(what) must have at least 2048 bits, got \(bits)")
        }
    }
}
