/* libpq, PostgreSQL's C client library (Debian 12: libpq-dev 15). */
#pragma once
#include <libpq-fe.h>
