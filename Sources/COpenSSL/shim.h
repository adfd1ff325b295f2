/* OpenSSL 3.0 (libssl + libcrypto). Macros that Swift cannot import get static inline wrappers here,
 * named COpenSSL_<macro>. */
#pragma once
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/bn.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>

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
