/* libnghttp2 (Debian 12 ships 1.52: the pre-1.60 API, nghttp2_session_mem_recv and
 * nghttp2_data_provider; the *2 / nghttp2_ssize API does not exist there). */
#pragma once
#include <nghttp2/nghttp2.h>
