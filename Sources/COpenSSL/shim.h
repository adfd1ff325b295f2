/* OpenSSL 3.0 (libssl + libcrypto). Macros that Swift cannot import get static inline wrappers here,
 * named COpenSSL_<macro>. */
#pragma once
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/bn.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/core_names.h>
#include <openssl/kdf.h>
#include <openssl/param_build.h>

/// SSL_set_tlsext_host_name is a macro over SSL_ctrl.
static inline int COpenSSL_SSL_set_tlsext_host_name(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}

/// SSL_CTX_set_mode is a macro over SSL_CTX_ctrl.
static inline long COpenSSL_SSL_CTX_set_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_mode(ctx, mode);
}

/// BIO_get_mem_data is a macro over BIO_ctrl.
static inline long COpenSSL_BIO_get_mem_data(BIO *bio, char **data) {
    return BIO_get_mem_data(bio, data);
}

/// SSL_CTX_set_min_proto_version is a macro over SSL_CTX_ctrl.
static inline int COpenSSL_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_min_proto_version(ctx, version);
}

/// SSL_CTX_clear_mode is a macro over SSL_CTX_ctrl.
static inline long COpenSSL_SSL_CTX_clear_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_clear_mode(ctx, mode);
}

/// SSL_CTX_add1_chain_cert is a macro over SSL_CTX_ctrl.
static inline int COpenSSL_SSL_CTX_add1_chain_cert(SSL_CTX *ctx, X509 *x509) {
    return (int)SSL_CTX_add1_chain_cert(ctx, x509);
}

/// SSL_OP_NO_COMPRESSION expands to SSL_OP_BIT(17), a cast-and-shift Swift does not import.
static inline uint64_t COpenSSL_SSL_OP_NO_COMPRESSION(void) {
    return SSL_OP_NO_COMPRESSION;
}

/// SSL_OP_NO_RENEGOTIATION expands to SSL_OP_BIT(30), a cast-and-shift Swift does not import.
static inline uint64_t COpenSSL_SSL_OP_NO_RENEGOTIATION(void) {
    return SSL_OP_NO_RENEGOTIATION;
}

/// EVP_EC_gen is a macro over the variadic EVP_PKEY_Q_keygen, which Swift cannot call.
static inline EVP_PKEY *COpenSSL_EVP_EC_gen(const char *curve) {
    return EVP_EC_gen(curve);
}

/// EVP_RSA_gen is a macro over the variadic EVP_PKEY_Q_keygen, which Swift cannot call.
static inline EVP_PKEY *COpenSSL_EVP_RSA_gen(unsigned int bits) {
    return EVP_RSA_gen(bits);
}

/* Web Push (RFC 8291) needs raw P-256 points, ECDH, HKDF and AES-128-GCM; OpenSSL 3 reaches raw
 * keys and HKDF through OSSL_PARAM arrays, which are C structs built from string names: these
 * wrappers build them, so the Swift side passes bytes only. Each returns 1 on success. */

/// A P-256 key from its 65-byte uncompressed public point and, when `priv32` is not NULL, its
/// 32-byte private scalar. NULL when the bytes are not a key (the point is checked on the curve).
static inline EVP_PKEY *COpenSSL_P256_from_raw(const unsigned char *pub65, const unsigned char *priv32) {
    OSSL_PARAM_BLD *build = OSSL_PARAM_BLD_new();
    BIGNUM *priv = priv32 ? BN_bin2bn(priv32, 32, NULL) : NULL;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
    OSSL_PARAM *params = NULL;
    EVP_PKEY *key = NULL;
    int ok = build && ctx && (!priv32 || priv)
        && OSSL_PARAM_BLD_push_utf8_string(build, OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0)
        && OSSL_PARAM_BLD_push_octet_string(build, OSSL_PKEY_PARAM_PUB_KEY, pub65, 65)
        && (!priv || OSSL_PARAM_BLD_push_BN(build, OSSL_PKEY_PARAM_PRIV_KEY, priv))
        && (params = OSSL_PARAM_BLD_to_param(build)) != NULL
        && EVP_PKEY_fromdata_init(ctx) == 1
        && EVP_PKEY_fromdata(ctx, &key, priv ? EVP_PKEY_KEYPAIR : EVP_PKEY_PUBLIC_KEY, params) == 1;
    if (ok) {
        EVP_PKEY_CTX *check = EVP_PKEY_CTX_new_from_pkey(NULL, key, NULL);
        // On the curve and not the point at infinity. The full check also multiplies by the
        // order (an ECDH's worth of time), which P-256's cofactor of 1 makes unnecessary.
        ok = check && EVP_PKEY_public_check_quick(check) == 1;
        EVP_PKEY_CTX_free(check);
    }
    if (!ok) { EVP_PKEY_free(key); key = NULL; }
    OSSL_PARAM_free(params);
    EVP_PKEY_CTX_free(ctx);
    BN_free(priv);
    OSSL_PARAM_BLD_free(build);
    return key;
}

/// The 65-byte uncompressed public point of a P-256 key.
static inline int COpenSSL_P256_public_point(EVP_PKEY *key, unsigned char *out65) {
    size_t length = 0;
    return EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, out65, 65, &length) == 1
        && length == 65;
}

/// ECDH: the 32-byte shared secret of `priv` and `peer`.
static inline int COpenSSL_ECDH(EVP_PKEY *priv, EVP_PKEY *peer, unsigned char *out32) {
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, priv, NULL);
    size_t length = 32;
    // The peer was checked when it was made (COpenSSL_P256_from_raw): no second check per derive,
    // which would cost as much as the derive itself.
    int ok = ctx && EVP_PKEY_derive_init(ctx) == 1 && EVP_PKEY_derive_set_peer_ex(ctx, peer, 0) == 1
        && EVP_PKEY_derive(ctx, out32, &length) == 1 && length == 32;
    EVP_PKEY_CTX_free(ctx);
    return ok;
}

/// HKDF-SHA-256 (RFC 5869, extract and expand) of `ikm` with `salt` and `info`, `out_len` bytes.
static inline int COpenSSL_HKDF_SHA256(const unsigned char *salt, size_t salt_len, const unsigned char *ikm,
                                       size_t ikm_len, const unsigned char *info, size_t info_len,
                                       unsigned char *out, size_t out_len) {
    EVP_KDF *kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
    EVP_KDF_CTX *ctx = kdf ? EVP_KDF_CTX_new(kdf) : NULL;
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)"SHA256", 0),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, (void *)salt, salt_len),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)ikm, ikm_len),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, (void *)info, info_len),
        OSSL_PARAM_construct_end(),
    };
    int ok = ctx && EVP_KDF_derive(ctx, out, out_len, params) == 1;
    EVP_KDF_CTX_free(ctx);
    EVP_KDF_free(kdf);
    return ok;
}

/// AES-128-GCM: `plain` sealed with `key16` and `nonce12`; writes the ciphertext, then the 16-byte tag.
static inline int COpenSSL_AES128GCM_seal(const unsigned char *key16, const unsigned char *nonce12,
                                          const unsigned char *plain, int plain_len, unsigned char *out) {
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int length = 0, final_length = 0;
    int ok = ctx && EVP_EncryptInit_ex(ctx, EVP_aes_128_gcm(), NULL, key16, nonce12) == 1
        && EVP_EncryptUpdate(ctx, out, &length, plain, plain_len) == 1
        && EVP_EncryptFinal_ex(ctx, out + length, &final_length) == 1
        && length + final_length == plain_len
        && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, out + plain_len) == 1;
    EVP_CIPHER_CTX_free(ctx);
    return ok;
}

/* mock-webpush */

/// The 65-byte uncompressed public point of the P-256 private scalar `priv32` (big-endian): 0
/// unless the scalar is in 1..n-1.
static inline int COpenSSL_P256_point_of_scalar(const unsigned char *priv32, unsigned char *out65) {
    EC_GROUP *group = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1);
    BIGNUM *scalar = BN_bin2bn(priv32, 32, NULL);
    EC_POINT *point = group ? EC_POINT_new(group) : NULL;
    int ok = group && scalar && point && !BN_is_zero(scalar) && BN_cmp(scalar, EC_GROUP_get0_order(group)) < 0
        && EC_POINT_mul(group, point, scalar, NULL, NULL, NULL) == 1
        && EC_POINT_point2oct(group, point, POINT_CONVERSION_UNCOMPRESSED, out65, 65, NULL) == 65;
    EC_POINT_free(point);
    BN_free(scalar);
    EC_GROUP_free(group);
    return ok;
}

/// AES-128-GCM open: `sealed` is the ciphertext followed by its 16-byte tag; writes the
/// plaintext (`sealed_len` - 16 bytes). 0 when the tag does not verify.
static inline int COpenSSL_AES128GCM_open(const unsigned char *key16, const unsigned char *nonce12,
                                          const unsigned char *sealed, int sealed_len, unsigned char *out) {
    if (sealed_len < 16) return 0;
    int cipher_len = sealed_len - 16;
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int length = 0, final_length = 0;
    int ok = ctx && EVP_DecryptInit_ex(ctx, EVP_aes_128_gcm(), NULL, key16, nonce12) == 1
        && EVP_DecryptUpdate(ctx, out, &length, sealed, cipher_len) == 1
        && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, 16, (void *)(sealed + cipher_len)) == 1
        && EVP_DecryptFinal_ex(ctx, out + length, &final_length) == 1
        && length + final_length == cipher_len;
    EVP_CIPHER_CTX_free(ctx);
    return ok;
}
