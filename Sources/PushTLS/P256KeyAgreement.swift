import COpenSSL

/// A P-256 key for ECDH, known by its raw 65-byte uncompressed public point and, for one's own
/// key, the private half.
public final class P256KeyAgreementKey: @unchecked Sendable {
    let key: EVPKey
    /// The 65-byte uncompressed public point (0x04 ‖ x ‖ y).
    public let publicPoint: [UInt8]

    private init(_ key: EVPKey, publicPoint: [UInt8]) {
        self.key = key
        self.publicPoint = publicPoint
    }

    /// A fresh key pair (an ephemeral key).
    public static func generate() throws(TLSError) -> P256KeyAgreementKey {
        let key = try EVPKey.generateP256()
        var point = [UInt8](repeating: 0, count: 65)
        guard COpenSSL_P256_public_point(key.pkey, &point) == 1 else {
            throw .openSSL(.certificate, "cannot read the P-256 public point")
        }
        return P256KeyAgreementKey(key, publicPoint: point)
    }

    /// A public key from its uncompressed point; nil unless it is 65 bytes of a point on P-256.
    public static func publicKey(point: [UInt8]) -> P256KeyAgreementKey? {
        guard point.count == 65, point[0] == 0x04, let pkey = COpenSSL_P256_from_raw(point, nil) else {
            ERR_clear_error()
            return nil
        }
        return P256KeyAgreementKey(EVPKey(taking: pkey), publicPoint: point)
    }

    /// A key pair from its public point and 32-byte private scalar (fixed keys: test vectors).
    public static func keyPair(point: [UInt8], privateScalar: [UInt8]) -> P256KeyAgreementKey? {
        guard point.count == 65, privateScalar.count == 32, point[0] == 0x04,
            let pkey = COpenSSL_P256_from_raw(point, privateScalar)
        else {
            ERR_clear_error()
            return nil
        }
        return P256KeyAgreementKey(EVPKey(taking: pkey), publicPoint: point)
    }

    /// The 32-byte ECDH shared secret with `peer`.
    public func sharedSecret(with peer: P256KeyAgreementKey) throws(TLSError) -> [UInt8] {
        var secret = [UInt8](repeating: 0, count: 32)
        guard COpenSSL_ECDH(key.pkey, peer.key.pkey, &secret) == 1 else {
            throw .openSSL(.certificate, "ECDH on P-256 failed")
        }
        return secret
    }
}

/// HKDF-SHA-256 (RFC 5869) through OpenSSL's KDF.
public enum HKDF {
    public static func sha256(salt: [UInt8], ikm: [UInt8], info: [UInt8], count: Int) throws(TLSError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        guard COpenSSL_HKDF_SHA256(salt, salt.count, ikm, ikm.count, info, info.count, &out, count) == 1 else {
            throw .openSSL(.certificate, "HKDF-SHA-256 failed")
        }
        return out
    }
}

/// AES-128-GCM sealing through OpenSSL.
public enum AES128GCM {
    /// `plaintext` encrypted with `key` (16 bytes) and `nonce` (12 bytes): the ciphertext, then
    /// the 16-byte tag.
    public static func seal(_ plaintext: [UInt8], key: [UInt8], nonce: [UInt8]) throws(TLSError) -> [UInt8] {
        precondition(key.count == 16 && nonce.count == 12, "AES-128-GCM takes a 16-byte key and a 12-byte nonce")
        var out = [UInt8](repeating: 0, count: plaintext.count + 16)
        guard COpenSSL_AES128GCM_seal(key, nonce, plaintext, Int32(plaintext.count), &out) == 1 else {
            throw .openSSL(.certificate, "AES-128-GCM failed")
        }
        return out
    }
}
