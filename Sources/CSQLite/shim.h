/* SQLite 3 (Debian 12: 3.40). */
#pragma once
#include <sqlite3.h>

/// SQLITE_TRANSIENT is a cast of -1 to a function pointer, which Swift cannot import.
static inline sqlite3_destructor_type CSQLite_TRANSIENT(void) { return SQLITE_TRANSIENT; }

/// Turns off SQLite's memory statistics, which take a global mutex on every allocation and free
/// (`sqlite3_config` is variadic, which Swift cannot call). Only before the first connection opens;
/// later it answers SQLITE_MISUSE and changes nothing.
static inline int CSQLite_disableMemoryStatistics(void) { return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); }
