import PushTLS

/// One RSA key pair for the whole suite: generating one costs tens of milliseconds.
let sharedRSAKeys = try! RSAKeyPair.generate()
