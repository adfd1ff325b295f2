/* libcsv 3 (Debian 12: 3.0.3): RFC 4180 CSV, fed bytes, fields and records by callback. */
#pragma once
#include <csv.h>
