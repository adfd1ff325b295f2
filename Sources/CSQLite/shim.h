/* SQLite 3 (Debian 12: 3.40). */
#pragma once
#include <sqlite3.h>

/// SQLITE_TRANSIENT is a cast of -1 to a function pointer, which Swift cannot import.
static inline sqlite3_destructor_type CSQLite_TRANSIENT(void) { return SQLITE_TRANSIENT; }
