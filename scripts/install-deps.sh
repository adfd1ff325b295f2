#!/usr/bin/env bash
# Installs the Debian packages Pushgate builds and tests with, when any is missing.
# Idempotent and quick when everything is there (dpkg-query only). Needs root or sudo to install.
set -euo pipefail
packages=(
  libnghttp2-dev        # HTTP/2 (server and client sessions)
  libhttp-parser-dev    # HTTP/1.1 message parsing (ADM, and later Web Push, speak HTTP/1.1)
  zlib1g-dev            # gzip for gRPC messages (CZlib)
  libmimalloc-dev       # the process's allocator (CMimalloc): malloc/free are ~10% of a small Send with glibc's
  libprotobuf-c-dev     # protobuf runtime
  protobuf-c-compiler   # protoc-c, for `make proto` and the staleness check
  libssl-dev            # TLS, ALPN, ES256/RS256
  libsqlite3-dev        # embedded store
  libcsv-dev            # CSV for `pushgate import`/`export` (CLibCSV, wrapped by PushCSV)
  libpq-dev             # PostgreSQL client library: the store several instances share
  postgresql            # PostgreSQL server + psql, for the tests (scripts/pg-test-server.sh runs a private one)
  pkg-config            # SwiftPM finds the libraries through it
  nghttp2-client        # nghttp / h2load: independent HTTP/2 peers for tests and benchmarks
  python3-venv          # the test venv (grpcio clients)
  awscli                # Debian's aws CLI (v2): an independent SNS client in Tests/interop/test_sns_sdks.py
  golang-go             # builds Tests/interop/sns_go (GOPATH mode, offline) for test_sns_sdks.py
  golang-github-aws-aws-sdk-go-v2-dev  # the AWS SDK for Go v2 that sns_go is built against
  nodejs                # runs docs/webhooks.md's Node signature check in Tests/interop/test_webhook_signatures.py
  chromium              # headless browser for the operator console tests (Tests/interop/browser.py, Selenium)
  chromium-driver       # /usr/bin/chromedriver, the WebDriver server Selenium drives chromium through
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing Debian packages: ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
